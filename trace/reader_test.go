package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedTraces is the project's shared data folder of third-party traces,
// seen from this package's directory (each file's source: AMD-AGI/TraceLens
// @ 171dd74 tests/traces/..., deepseek-ai/profile-data @ 4496024 train.json);
// files there that are not copied into testdata are read in place, and their
// tests skip when the folder is absent.
const sharedTraces = "../../../shared/data/traces"

// traceCounts are the event counts of each real trace, counted once
// independently with Python's json module:
//
//	d = json.load(gzip.open(f)); ev = d["traceEvents"]
//	len(ev); Counter(e.get("ph") for e in ev); Counter(e.get("cat") for e in ev)["kernel"]
type traceCounts struct {
	file                   string
	events                 int
	x, i, s, f, m, kernels int
}

var realTraces = []traceCounts{
	{"testdata/tracelens_vllm_decode_full_graph_execution.json.gz", 1993, 1539, 0, 13, 441, 0, 425},
	{"testdata/tracelens_sglang_Qwen3-8B_decode.json.gz", 2058, 1471, 0, 14, 573, 0, 555},
	{"testdata/hta_nccl_parser_config_nccl_data.json.gz", 40573, 26933, 2, 4405, 9195, 38, 2700},
	{"testdata/tracelens_b200_vllm_gptoss_eager_trace.json.gz", 24656, 22355, 0, 931, 1370, 0, 768},
	{"testdata/tracelens_vllm_prefilldecode_piecewise_graph_execution.json.gz", 19289, 18485, 0, 62, 742, 0, 413},
	{sharedTraces + "/tracelens_sglang_Qwen3-8B_prefilldecode.json.gz", 60315, 58712, 0, 534, 1069, 0, 527},
	{sharedTraces + "/tracelens_sglang_decode_capture_traces_bs_32_rank0.json.gz", 61713, 59135, 1016, 548, 954, 60, 2},
	{sharedTraces + "/tracelens_vllm_decode_full_capture_traces_graph_capture_rank_0.1773709742341309550.pt.trace.json.gz", 131243, 126861, 1186, 433, 2705, 58, 7},
	// deepseek-ai/profile-data @ 4496024, train.json. No license: read from
	// the shared folder only, never copied.
	{sharedTraces + "/deepseek-profile-data_train_ep64_h800.json", 14240, 9306, 2, 1048, 3844, 40, 963},
}

// readAll reads every event of a file, failing the test on any error.
func readAll(t testing.TB, path string) ([]Event, *Meta) {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && !filepath.IsLocal(path) {
		t.Skipf("%s not present", path)
	}
	require.NoError(t, err)
	defer f.Close()
	r, err := NewReader(f)
	require.NoError(t, err)
	defer r.Close()
	var evs []Event
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "%s after %d events", path, len(evs))
		evs = append(evs, ev)
	}
	return evs, r.Meta()
}

func TestReaderRealTraces(t *testing.T) {
	for _, tc := range realTraces {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			evs, _ := readAll(t, tc.file)
			ph := map[Phase]int{}
			kernels := 0
			for k, ev := range evs {
				require.EqualValues(t, k, ev.Index)
				ph[ev.Ph]++
				if ev.Cat == CatKernel {
					kernels++
				}
			}
			assert.Equal(t, tc.events, len(evs), "events")
			assert.Equal(t, tc.x, ph[PhaseComplete], "ph X")
			assert.Equal(t, tc.i, ph[PhaseInstant], "ph i")
			assert.Equal(t, tc.s, ph[PhaseFlowStart], "ph s")
			assert.Equal(t, tc.f, ph[PhaseFlowFinish], "ph f")
			assert.Equal(t, tc.m, ph[PhaseMetadata], "ph M")
			assert.Equal(t, tc.kernels, kernels, "kernels")
		})
	}
}

// find returns the first event for which match is true.
func find(t *testing.T, evs []Event, match func(*Event) bool) Event {
	t.Helper()
	for k := range evs {
		if match(&evs[k]) {
			return evs[k]
		}
	}
	t.Fatal("no matching event")
	return Event{}
}

func TestReaderHTAFields(t *testing.T) {
	evs, meta := readAll(t, "testdata/hta_nccl_parser_config_nccl_data.json.gz")

	// {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
	//  "pid": 0, "tid": 40, "ts": 4458677009853.422, "dur": 2636.669, "args": {"External id": 12945, "queued": 0,
	//  "device": 0, "context": 1, "stream": 40, "correlation": 60047, ..., "grid": [8, 1, 1], "block": [544, 1, 1], ...,
	//  "Collective name": "allreduce", "In msg nelems": 6637568, "Out msg nelems": 6637568, "Group size": 2, "dtype": "Float", ...}}
	nccl := find(t, evs, func(e *Event) bool { return e.Cat == CatKernel && e.Correlation == 60047 })
	assert.Equal(t, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", nccl.Name)
	assert.Equal(t, PhaseComplete, nccl.Ph)
	assert.Equal(t, "kernel", nccl.CatRaw)
	assert.EqualValues(t, 0, nccl.Pid)
	assert.EqualValues(t, 40, nccl.Tid)
	assert.InDelta(t, 4458677009853.422, float64(nccl.TS), 1e-3)
	assert.InDelta(t, 2636.669, nccl.Dur.Us(), 1e-9)
	assert.EqualValues(t, 12945, nccl.ExternalID)
	assert.EqualValues(t, 40, nccl.Stream)
	assert.EqualValues(t, 0, nccl.Device)
	assert.Equal(t, [3]int32{8, 1, 1}, nccl.Grid)
	assert.Equal(t, [3]int32{544, 1, 1}, nccl.Block)
	assert.Equal(t, "allreduce", nccl.Collective)
	assert.EqualValues(t, 6637568, nccl.InMsgNelems)
	assert.EqualValues(t, 6637568, nccl.OutMsgNelems)
	assert.EqualValues(t, 2, nccl.GroupSize)
	assert.Equal(t, "Float", nccl.DType)

	// {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 4458676984451.267,
	//  "dur": 4.96, "args": {"External id": 12373, "device": 0, "context": 1, "stream": 7, "correlation": 57609, "bytes": 6291456, ...}}
	memset := find(t, evs, func(e *Event) bool { return e.Cat == CatMemset && e.Correlation == 57609 })
	assert.EqualValues(t, 6291456, memset.Bytes)
	assert.Equal(t, "Memset (Device)", memset.Name)
	assert.InDelta(t, 4.96, memset.Dur.Us(), 1e-12)

	// {"ph": "f", "id": 57532, "pid": 2910249, "tid": 2919752, "ts": 4458676981028.392, "cat": "ac2g", "name": "ac2g", "bp": "e"}
	flow := find(t, evs, func(e *Event) bool { return e.Ph == PhaseFlowFinish && e.ID == 57532 })
	assert.Equal(t, CatFlow, flow.Cat)
	assert.EqualValues(t, 2910249, flow.Pid)
	assert.EqualValues(t, 2919752, flow.Tid)

	// {"ph": "X", "cat": "Trace", "ts": 4458676388068.751, "dur": 696181.687, "pid": "Spans", "tid": "PyTorch Profiler", ...}
	span := find(t, evs, func(e *Event) bool { return e.CatRaw == "Trace" })
	assert.EqualValues(t, -1, span.Pid)
	assert.EqualValues(t, -1, span.Tid)
	assert.Equal(t, CatOther, span.Cat)

	// {"name": "process_name", "ph": "M", "ts": 4458676416431.397, "pid": 2910249, "tid": 0, "args": {"name": "python3.10"}}
	m := find(t, evs, func(e *Event) bool { return e.Ph == PhaseMetadata })
	assert.Equal(t, "process_name", m.Name)

	require.NotNil(t, meta.Distributed)
	assert.Equal(t, 0, meta.Distributed.Rank)
	assert.Equal(t, 2, meta.Distributed.WorldSize)
	assert.Equal(t, "nccl", meta.Distributed.Backend)
	assert.Equal(t, "2.17.1", meta.Distributed.NCCLVersion)
	require.Len(t, meta.Distributed.PGConfig, 1)
	assert.Equal(t, []int{0, 1}, meta.Distributed.PGConfig[0].Ranks)
	require.NotEmpty(t, meta.DeviceProperties)
	assert.Equal(t, "NVIDIA A100-PG509-200", meta.DeviceProperties[0].Name)
	assert.EqualValues(t, 42297524224, meta.DeviceProperties[0].TotalGlobalMem)
	assert.Equal(t, 108, meta.DeviceProperties[0].NumSMs)
	assert.Equal(t, 1, meta.SchemaVersion)
	assert.EqualValues(t, 1711964646000000000, meta.BaseTimeNanoseconds)
	assert.Equal(t, "/tmp/tmpu3g3sevh.json", meta.TraceName)
	assert.Equal(t, "ms", meta.DisplayTimeUnit)
	assert.Contains(t, meta.Other, "INFO")
	assert.Empty(t, meta.Warnings)
}

func TestReaderEventFieldsOtherTraces(t *testing.T) {
	// SGLang decode on MI300X: "bytes" written as a string.
	// {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyAsync", "pid": 251, "tid": 251, "ts": 4909914681752.107,
	//  "dur": 6.349, "args": {"External id": 223586, "cid": 134, "correlation": 92181, ..., "bytes": "256", "kind": "3"}}
	evs, meta := readAll(t, "testdata/tracelens_sglang_Qwen3-8B_decode.json.gz")
	rt := find(t, evs, func(e *Event) bool { return e.Correlation == 92181 && e.Cat == CatRuntime })
	assert.Equal(t, "hipMemcpyAsync", rt.Name)
	assert.EqualValues(t, 256, rt.Bytes)
	assert.EqualValues(t, 223586, rt.ExternalID)
	assert.InDelta(t, 6.349, rt.Dur.Us(), 1e-12)
	assert.InDelta(t, 4909914681752.107, float64(rt.TS), 1e-3)
	require.NotNil(t, meta.Distributed)
	assert.Equal(t, "4.1", string(meta.ROCTracerVersion))
	assert.Equal(t, "cuda_runtime", rt.CatRaw)

	// B200 eager vLLM: the logits all-gather kernel.
	evs, meta = readAll(t, "testdata/tracelens_b200_vllm_gptoss_eager_trace.json.gz")
	ag := find(t, evs, func(e *Event) bool { return e.Cat == CatKernel && e.Collective != "" })
	// {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 7,
	//  "ts": 1365627949863.953, "dur": 21.953, "args": {"External id": 4802, ..., "stream": 7, "correlation": 15270, ...,
	//  "grid": [11, 1, 1], "block": [512, 1, 1], ..., "Collective name": "_allgather_base", "In msg nelems": 25136,
	//  "Out msg nelems": 201088, "Group size": 8, "dtype": "BFloat16", ...}}
	assert.Equal(t, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ag.Name)
	assert.Equal(t, "_allgather_base", ag.Collective)
	assert.EqualValues(t, 25136, ag.InMsgNelems)
	assert.EqualValues(t, 201088, ag.OutMsgNelems)
	assert.EqualValues(t, 8, ag.GroupSize)
	assert.Equal(t, "BFloat16", ag.DType)
	assert.EqualValues(t, 15270, ag.Correlation)
	assert.Equal(t, [3]int32{11, 1, 1}, ag.Grid)
	assert.InDelta(t, 21.953, ag.Dur.Us(), 1e-12)
	require.NotNil(t, meta.Distributed)
	assert.Equal(t, 8, meta.Distributed.WorldSize)
}

func TestReaderInternsNames(t *testing.T) {
	// Strings are interned per scanner goroutine: the main scanner and each
	// worker keep a table, so a name has at most workers()+1 copies.
	plain := genTrace(t, 3, false)
	evs := readOutcome(t, bytes.NewReader(plain)).events
	copies := map[string]map[*byte]bool{}
	for _, ev := range evs {
		if ev.Name == "" {
			continue
		}
		if copies[ev.Name] == nil {
			copies[ev.Name] = map[*byte]bool{}
		}
		copies[ev.Name][unsafeStringData(ev.Name)] = true
	}
	require.NotEmpty(t, copies)
	for name, ptrs := range copies {
		assert.LessOrEqual(t, len(ptrs), workers()+1, "name %q not interned", name)
	}
}

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }
