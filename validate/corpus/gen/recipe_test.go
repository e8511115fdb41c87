package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRecipeOf: a disaggregated deployment takes its launch recipe's pool
// layouts by the InferenceX config_id, workflow run, image, model and
// system its rows name, and none where any of them differs.
func TestRecipeOf(t *testing.T) {
	const (
		ds   = "deepseek-ai/DeepSeek-V3"
		kimi = "moonshotai/Kimi-K2.5"
		src  = "db-dump/2026-04-27; config_id=254; silicon_concurrency=8192; measured=2025-12-21T00:00:00.000Z; workflow_run_id=227; lmsysorg/sglang:v0.5.5.post2"
	)
	tests := []struct {
		name, model, system, source string
		isl                         int
		ok                          bool
		prefill, decode             recipePool
	}{
		{"SGLang fp4 8k1k max-tpt: DEP32 with DeepEP, TP4 prefill", ds, "gb200", src, 8192, true,
			recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 30000, memFraction: 0.95, maxTotal: 131072, chunk: 131072, maxPrefill: 524288},
			recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 16384, memFraction: 0.83, maxTotal: 524288, chunk: 24576}},
		{"SGLang fp4 1k1k low latency: TP4 pools, recv interval 10 on both", ds, "gb200",
			"db-dump/2026-04-27; config_id=252; silicon_concurrency=8; workflow_run_id=227; lmsysorg/sglang:v0.5.5.post2", 1024, true,
			recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, maxTotal: 8192, recv: 10, chunk: 8192},
			recipePool{tp: 4, dp: 1, ep: 1, memFraction: 0.95, recv: 10, chunk: 8192}},
		{"vLLM Kimi DEP4 / DEP16", kimi, "gb200",
			"db-dump/2026-04-27; config_id=697; silicon_concurrency=256; measured=2026-04-07T00:00:00.000Z; workflow_run_id=721; vllm/vllm-openai:v0.18.0-cu130", 1024, true,
			recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 4096, chunk: 16384}, recipePool{tp: 1, dp: 16, ep: 16, maxSeqs: 4096, chunk: 10240}},
		{"vLLM Kimi 1p4d 1k1k: max-num-seqs 1024", kimi, "gb200", "config_id=698; workflow_run_id=721; vllm/vllm-openai:v0.18.0-cu130", 1024, true,
			recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 1024, chunk: 16384}, recipePool{tp: 4, dp: 1, ep: 4, maxSeqs: 1024, chunk: 10240}},
		{"vLLM Kimi 1p4d 8k1k: its own recipe, decode max-num-seqs 16", kimi, "gb200", "config_id=698; workflow_run_id=721; vllm/vllm-openai:v0.18.0-cu130", 8192, true,
			recipePool{tp: 1, dp: 4, ep: 4, maxSeqs: 64, chunk: 16384}, recipePool{tp: 4, dp: 1, ep: 4, maxSeqs: 16, chunk: 10240}},
		{"vLLM Kimi 1p4d: no recipe at another length", kimi, "gb200", "config_id=698; workflow_run_id=721; vllm/vllm-openai:v0.18.0-cu130", 4096, false,
			recipePool{}, recipePool{}},
		{"image= form of the image", ds, "gb200", "config_id=254; workflow_run_id=227; image=lmsysorg/sglang:v0.5.5.post2", 8192, true,
			recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 30000, memFraction: 0.95, maxTotal: 131072, chunk: 131072, maxPrefill: 524288},
			recipePool{tp: 1, dp: 32, ep: 32, a2a: "deepep", maxSeqs: 16384, memFraction: 0.83, maxTotal: 524288, chunk: 24576}},
		{"another config", ds, "gb200", "config_id=489; workflow_run_id=227; lmsysorg/sglang:v0.5.5.post2", 8192, false, recipePool{}, recipePool{}},
		{"another workflow run", ds, "gb200", "config_id=254; workflow_run_id=268; lmsysorg/sglang:v0.5.5.post2", 8192, false, recipePool{}, recipePool{}},
		{"another image", ds, "gb200", "config_id=254; workflow_run_id=227; lmsysorg/sglang:v0.5.8-cu130", 8192, false, recipePool{}, recipePool{}},
		{"image tag matched whole", ds, "gb200", "config_id=254; workflow_run_id=227; lmsysorg/sglang:v0.5.5.post20", 8192, false, recipePool{}, recipePool{}},
		{"another system", ds, "gb300", src, 8192, false, recipePool{}, recipePool{}},
		{"another model", kimi, "gb200", src, 8192, false, recipePool{}, recipePool{}},
		{"SGLang 0.5.8.post1 fp8 B200 run 329 config 655: its variant's settings, no layout", ds, "b200_sxm",
			"db-dump/2026-04-27; config_id=655; silicon_concurrency=1024; workflow_run_id=329; lmsysorg/sglang:v0.5.8.post1-cu130-amd64", 8192, true,
			recipePool{maxSeqs: 8, memFraction: 0.6, chunk: 65536, maxPrefill: 8192}, recipePool{maxSeqs: 1024, memFraction: 0.75}},
		{"SGLang 0.5.8.post1 fp8 B200 run 329 config 455 at 1k: the 1k1k variant", ds, "b200_sxm",
			"config_id=455; workflow_run_id=329; lmsysorg/sglang:v0.5.8.post1-cu130-amd64", 1024, true,
			recipePool{maxSeqs: 512, memFraction: 0.85, chunk: 32768, maxPrefill: 32768}, recipePool{maxSeqs: 512, memFraction: 0.85, chunk: 32768, maxPrefill: 32768}},
		{"SGLang 0.5.8.post1 fp8 B200, another config of run 329: KV dtype only", ds, "b200_sxm",
			"config_id=999; workflow_run_id=329; lmsysorg/sglang:v0.5.8.post1-cu130-amd64", 8192, true,
			recipePool{}, recipePool{}},
		{"SGLang 0.5.8.post1 fp8: not on another run", ds, "b200_sxm",
			"config_id=655; workflow_run_id=330; lmsysorg/sglang:v0.5.8.post1-cu130-amd64", 8192, false, recipePool{}, recipePool{}},
		{"CSV export without config_id", ds, "gb200", "source_file=2026-04-06.csv; model=DeepSeek-R1; image=lmsysorg/sglang:v0.5.5.post2", 8192, false, recipePool{}, recipePool{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := recipeOf(tt.model, tt.system, tt.isl, tt.source)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.prefill, got.prefill)
			assert.Equal(t, tt.decode, got.decode)
			if ok {
				assert.Equal(t, "fp8", got.kvCache)
				assert.Equal(t, got.prefill.tp == 0, got.kvOnly, "a recipe without pool layouts keeps the recorded layout")
				assert.Contains(t, got.source, "srt-slurm @ ")
				assert.Contains(t, got.source, "SemiAnalysisAI/InferenceX @ ")
			}
		})
	}
}

// TestRecipesRunnable: every recipe's pools are layouts an engine starts:
// ep divides tp x dp (the experts over some of the pool's ranks), DeepEP
// only with attention DP, and each (config, run) appears once.
func TestRecipesRunnable(t *testing.T) {
	type key struct {
		system           string
		config, run, isl int
	}
	seen := map[key]bool{}
	for _, r := range recipes {
		k := key{r.system, r.config, r.run, r.isl}
		assert.False(t, seen[k], "%s config %d run %d isl %d listed twice", r.system, r.config, r.run, r.isl)
		seen[k] = true
		if r.kvOnly {
			for _, p := range []recipePool{r.prefill, r.decode} {
				assert.Zero(t, p.tp+p.dp+p.ep, "config %d: a recipe of the recorded layout gives none", r.config)
				assert.Empty(t, p.a2a)
			}
			if r.config == 0 {
				assert.Equal(t, recipePool{}, r.prefill, "a recipe of every config of a run has no per-config settings")
				assert.Equal(t, recipePool{}, r.decode)
			}
			assert.NotEmpty(t, r.kvCache)
			continue
		}
		for _, p := range []recipePool{r.prefill, r.decode} {
			assert.Positive(t, p.tp*p.dp*p.ep, "config %d", r.config)
			assert.Zero(t, (p.tp*p.dp)%p.ep, "config %d: ep %d does not divide tp x dp = %d", r.config, p.ep, p.tp*p.dp)
			if p.a2a != "" {
				assert.Greater(t, p.dp, 1, "config %d: DeepEP without attention DP", r.config)
			}
			if p.recv > 1 {
				assert.Equal(t, 1, p.dp, "config %d: SGLang refuses --scheduler-recv-interval with DP attention", r.config)
			}
			assert.True(t, p.memFraction >= 0 && p.memFraction <= 1, "config %d: mem fraction %g", r.config, p.memFraction)
		}
	}
}

// TestPoolTextSettings: a pool's engine settings are written as its
// table's keys, and none when unset; the recipe's flags name them.
func TestPoolTextSettings(t *testing.T) {
	p := recipePool{tp: 4, dp: 1, ep: 1, maxSeqs: 512, memFraction: 0.95, maxTotal: 8192, recv: 10, chunk: 8192, maxPrefill: 4096}
	got := p.pool(2).String()
	assert.Equal(t, "workers = 2\ntp = 4\ndp = 1\nep = 1\ndp_attention = false\nmax_num_seqs = 512\nscheduler_recv_interval = 10\n"+
		"max_total_tokens = 8192\ngpu_memory_utilization = 0.95\nmax_num_batched_tokens = 8192\nmax_prefill_tokens = 4096\n", got)
	assert.Equal(t, "--max-running-requests 512 --mem-fraction-static 0.95 --max-total-tokens 8192 --scheduler-recv-interval 10 "+
		"--chunked-prefill-size 8192 --max-prefill-tokens 4096", p.flags("sglang"))
	assert.Equal(t, "--max-num-seqs 16 --gpu-memory-utilization 0.9", recipePool{maxSeqs: 16, memFraction: 0.9}.flags("vllm"))
	// a recipe of the recorded layout keeps the row's pool
	rec := poolText{workers: 3, tp: 1, dp: 8, ep: 8, a2a: "deepep"}
	assert.Equal(t, poolText{workers: 3, tp: 1, dp: 8, ep: 8, a2a: "deepep", maxSeqs: 1024, memFraction: 0.75},
		recipePool{maxSeqs: 1024, memFraction: 0.75}.settings(rec))
	bare := recipePool{tp: 1, dp: 8, ep: 8}.pool(1).String()
	for _, k := range []string{"max_num_seqs", "scheduler_recv_interval", "max_total_tokens", "gpu_memory_utilization", "max_num_batched_tokens", "max_prefill_tokens"} {
		assert.NotContains(t, bare, k)
	}
	assert.Empty(t, recipePool{tp: 1}.flags("sglang"))
}
