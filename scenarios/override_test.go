package scenarios

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/sim"
)

func TestParseWith(t *testing.T) {
	src, err := EmbeddedSource(DefaultName)
	require.NoError(t, err)
	sc, err := ParseWith("d.toml", src, []Override{
		{"parallel.tp", "4"}, {"parallel.ep", "8"}, {"parallel.dp", "2"}, {"model.kv_cache", "fp8"},
		{"speculative.method", `"eagle3"`}, {"speculative.draft_tokens", "3"}, {"speculative.acceptance", "[0.8, 0.6, 0.45]"},
		{"runtime.cuda_graphs", "false"}, {"runtime.gpu_memory_utilization", "0.85"}, {"workload.context", "8192"},
		{"hardware.calibration", `["embedded"]`}, {"hardware.custom_gpu.memory", "80GB"},
	})
	require.NoError(t, err)
	c := sc.Config
	assert.Equal(t, 4, c.Layout.TP)
	assert.Equal(t, 2, c.Layout.DP)
	assert.Equal(t, dtype.KVFP8, c.KVCache)
	assert.Equal(t, sim.Spec{Method: sim.SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}, c.Spec)
	assert.False(t, c.Graphs)
	assert.Equal(t, 0.85, c.GPUMemoryUtilization)
	assert.Equal(t, 8192, sc.Context)
	assert.Equal(t, unit.Bytes(80e9), c.GPU.Memory, "a nested table is created")

	base, err := Parse("d.toml", src)
	require.NoError(t, err)
	none, err := ParseWith("d.toml", src, nil)
	require.NoError(t, err)
	assert.Equal(t, base.Config.Layout, none.Config.Layout, "no overrides: the file as it is")
}

func TestParseWithErrors(t *testing.T) {
	src, err := EmbeddedSource(DefaultName)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		o    Override
		want string
	}{
		{"unknown key", Override{"parallel.pp", "2"}, `--set parallel.pp=2: unknown scenario key "parallel.pp" (have: parallel.tp, parallel.ep, parallel.dp, parallel.dp_attention)`},
		{"unknown table", Override{"fleet.size", "2"}, `unknown scenario key "fleet.size"`},
		{"below a leaf", Override{"parallel.tp.x", "2"}, `parallel.tp is not a table`},
		{"table", Override{"workload", "2"}, `scenario key "workload" is a table`},
		{"int", Override{"parallel.tp", "2.5"}, `--set parallel.tp=2.5: "2.5" is not an integer`},
		{"array item", Override{"workload.batch", "[1, x]"}, `item 2: "x" is not an integer`},
		// The file sets parallel.tp on line 17; the error must not point there.
		{"refused value", Override{"parallel.tp", "3"}, "d.toml: parallel.tp: tp = 3 does not divide hardware.gpus = 8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseWith("d.toml", src, []Override{tt.o})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, CheckOverride(tt.o) == nil, tt.name == "refused value", "CheckOverride checks key and type only: %v", CheckOverride(tt.o))
		})
	}
}

func TestOverrideKeys(t *testing.T) {
	keys := overrideKeys()
	for _, k := range []string{"parallel.tp", "hardware.gpu", "hardware.custom_fabric.latency", "workload.context",
		"speculative.acceptance", "plan.gpus", "plan.max_gpus", "plan.tpot_p99", "plan.target_request_rate"} {
		assert.Contains(t, keys, k)
		assert.NoError(t, CheckOverrideKey(k), k)
	}
}

func TestWorkloadOverrides(t *testing.T) {
	sc, err := Default()
	require.NoError(t, err)
	b, c, err := sc.Workload([]Override{{"workload.batch", "[1, 8]"}, {"workload.context", "4096"}})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 8}, b)
	assert.Equal(t, 4096, c)
	b, c, err = sc.Workload(nil)
	require.NoError(t, err)
	assert.Equal(t, sc.Batches, b)
	assert.Equal(t, sc.Context, c)
	_, _, err = sc.Workload([]Override{{"workload.context", "0"}})
	assert.ErrorContains(t, err, "--set workload.context=0: context 0 must be a positive number of tokens")
	_, _, err = sc.Workload([]Override{{"parallel.tp", "4"}})
	assert.ErrorContains(t, err, "not a workload key")
	assert.True(t, IsWorkloadKey("workload.batch"))
	assert.False(t, IsWorkloadKey("parallel.tp"))
}

func TestPlanTable(t *testing.T) {
	src, err := EmbeddedSource(DefaultName)
	require.NoError(t, err)
	sc, err := Parse("p.toml", append(src, []byte(`
[plan]
gpus = ["h200-sxm", "b200-sxm"]
max_gpus = 16
ttft_p99 = "2s"
tpot_p99 = "50ms"
min_tokens_per_s_per_user = 20
target_request_rate = 1.5
`)...))
	require.NoError(t, err)
	ib400, ok := comm.LookupLink(DefaultDisaggTransfer)
	require.True(t, ok)
	assert.Equal(t, Plan{GPUs: []string{"h200-sxm", "b200-sxm"}, MaxGPUs: 16, TTFTP99: 2, TPOTP99: 0.05, MinTokensPerSPerUser: 20,
		TargetRequestRate: 1.5, InputTokens: 1024, OutputTokens: 1024,
		MaxPrefillWorkers: DefaultMaxPrefillWorkers, MaxDecodeWorkers: DefaultMaxDecodeWorkers, DisaggTransfer: ib400}, sc.Plan)
	sp, warns, err := sc.PlanSpace(sc.Plan)
	require.NoError(t, err)
	require.Len(t, warns, 1, "max_gpus above a node without hardware.nic")
	assert.Contains(t, warns[0], "replicas spanning nodes are priced on ib-400")
	for _, o := range sp.GPUs {
		assert.Equal(t, ib400, o.NIC, "%s: nodes joined by the assumed NIC", o.GPU.Name)
	}
	require.Len(t, sp.GPUs, 2)
	assert.Equal(t, "nvlink4", sp.GPUs[0].Fabric.Name)
	assert.NotNil(t, sp.GPUs[0].KernelTables, "the GPU's embedded calibration")
	assert.Len(t, sp.Specs, 1, "no speculative decoding in the scenario")

	// The [plan] table appended below the default scenario (and a blank
	// line) starts at this line; its one key sits on the next.
	planLine := fmt.Sprintf("p.toml:%d: ", bytes.Count(src, []byte("\n"))+3)
	for _, tt := range []struct {
		name, toml, want string
	}{
		{"max gpus", "[plan]\nmax_gpus = 0\n", planLine + "plan.max_gpus: 0 must be > 0"},
		// Session 13: taken silently (30 s of enumeration, 1.8 GB).
		{"max gpus 2^16+1", "[plan]\nmax_gpus = 65537\n", planLine + "plan.max_gpus: 65537 exceeds the 65536 (2^16) GPUs"},
		{"gpu", "[plan]\ngpus = [\"a100\"]\n", planLine + `plan.gpus: unknown GPU "a100"`},
		// Session 9: gpus = [] planned the scenario's GPU without a word
		// (--gpus "" is refused).
		{"no gpu", "[plan]\ngpus = []\n", planLine + "plan.gpus: no GPU named"},
		{"duration", "[plan]\ntpot_p99 = \"fast\"\n", planLine + "plan.tpot_p99: "},
		{"negative", "[plan]\nmin_tokens_per_s_per_user = -1.0\n", planLine + "plan.min_tokens_per_s_per_user: -1 must be a positive finite value"},
		{"two targets", "[plan]\ntarget_request_rate = 1.0\ntarget_output_tokens_per_s = 100.0\n", "plan.target_request_rate: give a target output rate or a target request rate, not both"},
		{"unknown", "[plan]\ngpu = \"h200-sxm\"\n", `unknown key "plan.gpu"`},
		{"output tokens", "[workload]\noutput_tokens = 0\n", "p.toml:35: workload.output_tokens: 0 must be at least 1 token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := append(append([]byte{}, src...), []byte("\n"+tt.toml)...)
			if tt.name == "output tokens" {
				data = []byte(replaceOnce(string(src), "output_tokens = 1024\n", "output_tokens = 0\n"))
			}
			_, err := Parse("p.toml", data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

// FuzzParseWith: any override of the default scenario gives a scenario or
// an error, never a panic; an error is one line.
func FuzzParseWith(f *testing.F) {
	for _, k := range overrideKeys() {
		f.Add(k, "1")
	}
	f.Add("workload.batch", "[1, 8]")
	f.Add("speculative.acceptance", "[0.8, 0.6")
	f.Add("hardware.calibration", `["embedded", "none"]`)
	f.Add("parallel.tp", "9223372036854775807")
	f.Add("model.kv_cache", `"fp8`)
	src, err := EmbeddedSource(DefaultName)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		o := Override{Key: key, Value: value}
		sc, err := ParseWith("f.toml", src, []Override{o})
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("multi-line error for %v: %q", o, err)
			}
			return
		}
		if sc == nil {
			t.Fatalf("no scenario and no error for %v", o)
		}
		_ = CheckOverride(o)
	})
}
