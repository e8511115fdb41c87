package trace

import (
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	goldenfile "github.com/moecast/moecast/internal/golden"
	"github.com/moecast/moecast/internal/unit"
)

// golden compares got with testdata/golden/name, or writes it there with
// -update (go test ./trace -run Golden -update); review each diff
// against the trace before committing it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got)
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		q, want float64
	}{{0, 1}, {0.1, 1.9}, {0.5, 5.5}, {0.9, 9.1}, {1, 10}}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, Quantile(v, tt.q), 1e-12, "q=%v", tt.q)
	}
	assert.Equal(t, 7.0, Quantile([]float64{7}, 0.9))
	assert.True(t, math.IsNaN(Quantile(nil, 0.5)))
}

func TestSummarize(t *testing.T) {
	var steps []StepResult
	for i := 1; i <= 5; i++ {
		f := float64(i)
		s := StepResult{Wall: secondsFromMicros(100 * f), Busy: secondsFromMicros(80 * f)}
		s.ByCategory[cost.AllReduce] = secondsFromMicros(50 * f)
		s.ByCategory[cost.Idle] = secondsFromMicros(20 * f)
		s.Exposed[cost.AllReduce] = secondsFromMicros(40 * f)
		steps = append(steps, s)
	}
	s := Summarize(steps)
	assert.Equal(t, 5, s.Steps)
	assert.InDelta(t, 300, s.Median.Us(), 1e-9)
	assert.InDelta(t, 140, s.P10.Us(), 1e-9) // 100 + 0.4*100
	assert.InDelta(t, 460, s.P90.Us(), 1e-9)
	assert.InDelta(t, 150, s.ByCategory[cost.AllReduce].Us(), 1e-9)
	assert.InDelta(t, 120, s.Exposed[cost.AllReduce].Us(), 1e-9)
	assert.InDelta(t, 0.5, s.Share[cost.AllReduce], 1e-12)
	assert.InDelta(t, 0.2, s.Share[cost.Idle], 1e-12)
	assert.Equal(t, 0, Summarize(nil).Steps)
}

func TestCollectiveSpread(t *testing.T) {
	mk := func(rank int, ar float64) FileResult {
		fr := FileResult{Rank: rank, Result: &Result{}}
		fr.Summary.Steps = 1
		fr.Summary.ByCategory[cost.AllReduce] = secondsFromMicros(ar)
		return fr
	}
	sp := CollectiveSpread([]FileResult{mk(0, 50), mk(1, 10), mk(2, 30), {Rank: 3}})
	require.Len(t, sp, 1)
	assert.Equal(t, cost.AllReduce, sp[0].Category)
	assert.Equal(t, 3, sp[0].Ranks)
	assert.InDelta(t, 10, sp[0].Min.Us(), 1e-12)
	assert.InDelta(t, 30, sp[0].Median.Us(), 1e-12)
	assert.InDelta(t, 50, sp[0].Max.Us(), 1e-12)
	assert.Equal(t, 1, sp[0].MinRank)
	assert.Equal(t, 0, sp[0].MaxRank)
}

// dump renders a FileResult for the golden files: every number in ms with
// µs precision.
func dump(fr FileResult) string {
	var b strings.Builder
	ms := func(d unit.Seconds) string { return fmt.Sprintf("%.3f", d.Ms()) }
	r := fr.Result
	fmt.Fprintf(&b, "file: %s\nrank: %d (%s)\nsource: %s\n", filepath.Base(fr.File), fr.Rank, fr.RankSrc, r.Source)
	fmt.Fprintf(&b, "events: %d  kernel events: %d  outside steps: %d (%s ms)\n", r.Events, r.KernelCount, r.Outside, ms(r.OutsideTime))
	s := fr.Summary
	fmt.Fprintf(&b, "steps: %d  median %s ms  p10 %s  p90 %s\n", s.Steps, ms(s.Median), ms(s.P10), ms(s.P90))
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "step %d %s batch=%d kernels=%d label=%q\n", st.Index, st.Kind, st.Batch, st.KernelEvents, st.Label)
		fmt.Fprintf(&b, "  wall %s  busy %s  idle %s (ms)\n", ms(st.Wall), ms(st.Busy), ms(st.Idle))
		for c := range cost.NumCategories {
			if st.ByCategory[c] > 0 || st.Exposed[c] > 0 {
				fmt.Fprintf(&b, "  %-13s %10s ms  exposed %10s ms  share %5.1f%%\n", c, ms(st.ByCategory[c]), ms(st.Exposed[c]), 100*st.ByCategory[c].Us()/st.Wall.Us())
			}
		}
	}
	fmt.Fprintf(&b, "top kernels:\n")
	for i, k := range r.Kernels {
		if i == 12 {
			break
		}
		name := k.Name
		if len(name) > 90 {
			name = name[:90] + "..."
		}
		fmt.Fprintf(&b, "  %5d %10s ms  %-12s %-16s %s\n", k.Count, ms(k.Total), k.Class.Category, k.Class.Op, name)
	}
	for _, k := range r.Kernels {
		for _, c := range k.Collectives {
			fmt.Fprintf(&b, "collective %s: %s in=%d out=%d dtype=%s group=%d count=%d\n", k.Class.Op, c.Collective, c.InMsgNelems, c.OutMsgNelems, c.DType, c.GroupSize, c.Count)
		}
	}
	for _, k := range r.Unclassified() {
		fmt.Fprintf(&b, "unclassified: %d x %s ms %s\n", k.Count, ms(k.Total), k.Name)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func analyzeTestdata(t *testing.T, name string, opts Options) FileResult {
	t.Helper()
	fr := AnalyzeFile(filepath.Join("testdata", name), FileOptions{Options: opts})
	require.NoError(t, fr.Err)
	require.NotNil(t, fr.Result)
	return fr
}

// The vLLM FULL-graph decode trace (TraceLens, MI300X, gpt-oss-20b, batch
// 32). Checked against the file: one user_annotation
// "execute_32_context_0(...)_generation_32(...)" on the CPU from
// 6520618853487.683 for 2408.598 µs; inside it one hipGraphLaunch
// (correlation 505113) and 12 eager launches; 434 GPU events (425 kernels +
// 9 memcpy), 421 of them with correlation 505113, starting at
// 6520618861858.561, after the annotation has ended on the CPU, and ending
// at 6520618872601.742: wall 10.743 ms. The MoE (matmul_ogs + routing)
// dominates; no collectives (world size 1).
func TestGoldenVLLMFullGraphDecode(t *testing.T) {
	fr := analyzeTestdata(t, "tracelens_vllm_decode_full_graph_execution.json.gz", Options{})
	r := fr.Result
	require.Len(t, r.Steps, 1)
	s := r.Steps[0]
	assert.Equal(t, KindDecode, s.Kind)
	assert.Equal(t, 32, s.Batch)
	assert.Equal(t, 434, s.KernelEvents, "graph-replayed kernels are attributed through the launch")
	assert.Equal(t, 0, r.Outside)
	annEnd := 6520618853487.683 + 2408.598
	assert.Greater(t, s.Start.Seconds().Us(), annEnd, "the kernels run after the CPU annotation ends")
	assert.InDelta(t, 10.743181, s.Wall.Us()/1e3, 1e-5)
	golden(t, "vllm_decode_full_graph.txt", dump(fr))
}

// The SGLang decode trace (TraceLens, MI300X, Qwen3-8B): user_annotation
// "step[DECODE bs=32]" nested in "execute_32_context_0(...)_generation_32"
// on the same thread; they make one decode step of batch 32. 558 GPU events
// (555 kernels + 3 memcpy); 544 carry the hipGraphLaunch correlation 92178.
// The first kernels run at 4909914216285.224 (before a 464 ms host wait in
// the captured step) and the last ends at 4909914690035.167: wall 473.750 ms
// of which 9.773 ms busy.
func TestGoldenSGLangDecode(t *testing.T) {
	fr := analyzeTestdata(t, "tracelens_sglang_Qwen3-8B_decode.json.gz", Options{})
	r := fr.Result
	require.Len(t, r.Steps, 1)
	assert.Equal(t, KindDecode, r.Steps[0].Kind)
	assert.Equal(t, 32, r.Steps[0].Batch)
	assert.Equal(t, 558, r.Steps[0].KernelEvents)
	golden(t, "sglang_decode.txt", dump(fr))
}

// The B200 vLLM eager trace (TraceLens, gpt-oss TP8): one prefill step
// "execute_context_1(888_788544)_generation_0(0)", 929 GPU events (no
// graphs: each kernel has its own launch; the file writes each GPU event
// just before its runtime call). One NCCL all-gather of the logits:
// "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 21.953
// µs, args _allgather_base In 25136 / Out 201088 BFloat16, group 8. 73
// symmetric-memory all-reduces (multimem_all_reduce_kernel) sum to 2.1195 ms.
func TestGoldenB200EagerAllGather(t *testing.T) {
	fr := analyzeTestdata(t, "tracelens_b200_vllm_gptoss_eager_trace.json.gz", Options{})
	r := fr.Result
	require.Len(t, r.Steps, 1)
	s := r.Steps[0]
	assert.Equal(t, KindPrefill, s.Kind)
	assert.Equal(t, 929, s.KernelEvents)
	assert.InDelta(t, 21.953, s.ByCategory[cost.AllGather].Us(), 1e-6)
	assert.InDelta(t, 2119.5, s.ByCategory[cost.AllReduce].Us(), 0.1)
	var ag *KernelStat
	for i := range r.Kernels {
		if strings.HasPrefix(r.Kernels[i].Name, "ncclDevKernel_AllGather") {
			ag = &r.Kernels[i]
		}
	}
	require.NotNil(t, ag)
	require.Len(t, ag.Collectives, 1)
	assert.Equal(t, CollectiveSize{Collective: "_allgather_base", InMsgNelems: 25136, OutMsgNelems: 201088, DType: "BFloat16", GroupSize: 8, Count: 1}, ag.Collectives[0])
	golden(t, "b200_vllm_eager.txt", dump(fr))
}

// The HTA trace (2-rank A100 DDP training, rank 0): ProfilerStep#4, #5 and
// #6 on the main thread; the backward kernels, including 15 NCCL
// all-reduces on stream 40, are launched from the autograd thread inside
// those windows, so every GPU event lands in a step (1258 per step). The
// all-reduce kernel "ncclKernel_AllReduce_RING_LL_Sum_float(...)" carries
// "In msg nelems" 6637568 (Float, group 2) once per step, among five sizes.
func TestGoldenHTAAllReduce(t *testing.T) {
	fr := analyzeTestdata(t, "hta_nccl_parser_config_nccl_data.json.gz", Options{})
	r := fr.Result
	require.Len(t, r.Steps, 3)
	assert.Equal(t, 0, r.Outside)
	assert.Equal(t, 0, fr.Rank)
	assert.Equal(t, "distributedInfo", fr.RankSrc)
	var found bool
	for _, k := range r.Kernels {
		if !strings.HasPrefix(k.Name, "ncclKernel_AllReduce") {
			continue
		}
		assert.Equal(t, 15, k.Count)
		for _, c := range k.Collectives {
			if c.InMsgNelems == 6637568 {
				found = true
				assert.Equal(t, CollectiveSize{Collective: "allreduce", InMsgNelems: 6637568, OutMsgNelems: 6637568, DType: "Float", GroupSize: 2, Count: 3}, c)
			}
		}
	}
	assert.True(t, found, "all-reduce of 6637568 elements")
	for _, s := range r.Steps {
		assert.Positive(t, s.ByCategory[cost.AllReduce].Us())
	}
	golden(t, "hta_nccl.txt", dump(fr))
}

// The vLLM PIECEWISE trace (mixed prefill+decode, MI300X): one
// execute_8192_context_9(...)_generation_37(...) step (mixed, 9+37 = 46
// requests); 361 of its 423 GPU events come from 25 hipGraphLaunch calls,
// the rest (attention between the pieces, copies) from eager launches.
func TestGoldenVLLMPiecewiseMixed(t *testing.T) {
	fr := analyzeTestdata(t, "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", Options{})
	r := fr.Result
	require.Len(t, r.Steps, 1)
	assert.Equal(t, KindMixed, r.Steps[0].Kind)
	assert.Equal(t, 46, r.Steps[0].Batch)
	assert.Equal(t, 0, r.Outside)
	none := analyzeTestdata(t, "tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", Options{Kind: KindDecode})
	assert.Empty(t, none.Result.Steps)
	golden(t, "vllm_piecewise_mixed.txt", dump(fr))
}

// Several files at once: results come back in input order.
func TestAnalyzeFilesConcurrent(t *testing.T) {
	paths := []string{
		"testdata/hta_nccl_parser_config_nccl_data.json.gz",
		"testdata/tracelens_sglang_Qwen3-8B_decode.json.gz",
		"testdata/tracelens_vllm_decode_full_graph_execution.json.gz",
		"testdata/no_such_file.json.gz",
	}
	out := AnalyzeFiles(paths, FileOptions{Workers: 2})
	require.Len(t, out, 4)
	for i, p := range paths[:3] {
		assert.Equal(t, p, out[i].File)
		assert.NoError(t, out[i].Err)
		assert.NotEmpty(t, out[i].Result.Steps)
	}
	assert.ErrorIs(t, out[3].Err, ErrInput)
}

func TestExpandInputs(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b_rank1.pt.trace.json.gz", "a_rank0.pt.trace.json.gz", "profiler_out_0.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	got, err := ExpandInputs([]string{dir})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a_rank0.pt.trace.json.gz"), filepath.Join(dir, "b_rank1.pt.trace.json.gz")}, got)
	_, err = ExpandInputs([]string{t.TempDir()})
	assert.ErrorIs(t, err, ErrInput)
	_, err = ExpandInputs([]string{filepath.Join(dir, "missing")})
	assert.ErrorIs(t, err, ErrInput)
}

func TestRankOf(t *testing.T) {
	for name, want := range map[string]int{
		"dp0_pp0_tp3_dcp0_ep0_rank3.1773709742.pt.trace.json.gz": 3,
		"instance-rank-5.123.pt.trace.json.gz":                   5,
		"1712345.12-TP-6.trace.json.gz":                          6,
		"graph_capture_rank_0.1773709742341309550.pt.trace.json": 0,
	} {
		got, src := rankOf(nil, name)
		assert.Equal(t, want, got, name)
		assert.Equal(t, "file name", src)
	}
	got, src := rankOf(&Meta{Distributed: &DistributedInfo{Rank: 7}}, "x_rank1.json")
	assert.Equal(t, 7, got)
	assert.Equal(t, "distributedInfo", src)
	_, src = rankOf(nil, "trace.json")
	assert.Equal(t, "position", src)
}

// A trace cut short: the steps read before the fault are kept, with a
// warning naming the file and the byte offset; Strict makes it an error.
func TestAnalyzeFilePartlyBroken(t *testing.T) {
	f, err := os.Open("testdata/hta_nccl_parser_config_nccl_data.json.gz")
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	// The GPU events of ProfilerStep#4 and #5 come before 90% of the file.
	path := filepath.Join(t.TempDir(), "cut.json")
	require.NoError(t, os.WriteFile(path, data[:len(data)*9/10], 0o644))

	fr := AnalyzeFile(path, FileOptions{})
	require.NoError(t, fr.Err)
	require.NotEmpty(t, fr.Result.Steps)
	require.NotEmpty(t, fr.Result.Warnings)
	assert.Contains(t, fr.Result.Warnings[0], "partly broken trace")
	assert.Contains(t, fr.Result.Warnings[0], "at byte")

	strict := AnalyzeFile(path, FileOptions{Strict: true})
	require.Error(t, strict.Err)
	assert.ErrorIs(t, strict.Err, ErrInput)
	assert.Contains(t, strict.Err.Error(), path)
}

func TestAnalyzeFileBadInputs(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		wantErr       bool   // a fatal error (no events read)
		wantWarn      string // else: a warning containing this
	}{
		{"empty", "", true, ""},
		{"not json", "hello", true, ""},
		{"truncated gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", true, ""},
		{"json not a trace", `{"a": 1}`, true, ""},
		{"empty trace", `{"traceEvents": []}`, false, "no kernel events"},
		{"no steps", `{"traceEvents": [{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}`, false, "no kernel events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o644))
			fr := AnalyzeFile(path, FileOptions{})
			if tt.wantErr {
				require.Error(t, fr.Err)
				assert.ErrorIs(t, fr.Err, ErrInput)
				assert.Contains(t, fr.Err.Error(), path)
				return
			}
			require.NoError(t, fr.Err)
			assert.Empty(t, fr.Result.Steps)
			assert.Contains(t, strings.Join(fr.Result.Warnings, "\n"), tt.wantWarn)
		})
	}
}

// A malformed event is skipped with a warning (its index and byte offset);
// Strict makes it an error.
func TestAnalyzeFileSkipsBadEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad_event.json")
	src := `{"traceEvents": [
{"ph":"X","cat":"user_annotation","name":"step[DECODE bs=2]","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":2,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"nvjet_x","pid":0,"tid":7,"ts":"soon","dur":3,"args":{"correlation":6}},
{"ph":"X","cat":"kernel","name":"nvjet_x","pid":0,"tid":7,"ts":20,"dur":3,"args":{"correlation":5}}
]}`
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	fr := AnalyzeFile(path, FileOptions{})
	require.NoError(t, fr.Err)
	require.Len(t, fr.Result.Steps, 1)
	assert.Equal(t, 1, fr.Result.Steps[0].KernelEvents)
	require.NotEmpty(t, fr.Result.Warnings)
	assert.Contains(t, fr.Result.Warnings[0], "skipped a malformed event (trace: event 2 at byte 318: ts: want a number")

	strict := AnalyzeFile(path, FileOptions{Strict: true})
	require.Error(t, strict.Err)
	assert.Contains(t, strict.Err.Error(), "event 2 at byte 318")
}

// Each step's kernel list accounts for its events and kernel time: counts
// add up to KernelEvents, totals to the non-idle categories' time, and each
// kernel's category and op are what the rules (or collective args) gave.
func TestStepKernelsAddUp(t *testing.T) {
	for _, name := range []string{
		"tracelens_vllm_decode_full_graph_execution.json.gz",
		"tracelens_sglang_Qwen3-8B_decode.json.gz",
		"hta_nccl_parser_config_nccl_data.json.gz",
		"tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz",
	} {
		t.Run(name, func(t *testing.T) {
			fr := analyzeTestdata(t, name, Options{})
			require.NotEmpty(t, fr.Result.Steps)
			for _, st := range fr.Result.Steps {
				n := 0
				var tot, cats unit.Seconds
				var byCat [cost.NumCategories]unit.Seconds
				for i, k := range st.Kernels {
					n += k.Count
					tot += k.Total
					byCat[k.Category] += k.Total
					if i > 0 {
						assert.GreaterOrEqual(t, st.Kernels[i-1].Total, k.Total, "step %d: kernels by total time", st.Index)
					}
				}
				for c := range cost.NumCategories {
					if c != cost.Idle {
						cats += st.ByCategory[c]
						assert.InDelta(t, st.ByCategory[c].Us(), byCat[c].Us(), 1e-6, "step %d category %v", st.Index, c)
					}
				}
				assert.Equal(t, st.KernelEvents, n, "step %d", st.Index)
				assert.InDelta(t, cats.Us(), tot.Us(), 1e-6, "step %d", st.Index)
			}
		})
	}
}
