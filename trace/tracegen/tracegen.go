// Package tracegen writes synthetic torch.profiler (Kineto) Chrome traces
// shaped like a vLLM decode profile of a Kimi-K2.5-like MoE model (61 layers,
// layer 0 dense, MLA attention, INT4 Marlin MoE, tensor parallel with NCCL
// all-reduce), one file per rank. It is used by the reader's tests and by
// the trace benchmark (bench/trace.sh); the figures in it are plausible
// shapes, not measurements.
//
// Each decode step has, as vLLM's profiler writes it (vllm-project/vllm
// `vllm/profiler/wrapper.py` @ 02773ee; the layout of AMD-AGI/TraceLens @
// 171dd74 tests/traces/inference/vllm_decode_full/graph_execution.json.gz):
// a CPU user_annotation "execute_context_0(0)_generation_B(B)" with python
// stack events and cpu_ops under it, one cudaGraphLaunch runtime event with
// its ac2g flow start, and on the GPU a gpu_user_annotation of the same name
// spanning the replayed kernels, all of which carry the launch's correlation
// id and an ac2g flow finish. Kernel names are spelled as in real vLLM
// traces (see Kernel names below). Output is deterministic for a given Config.
package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// Config selects the trace to write.
type Config struct {
	Rank      int
	WorldSize int // TP size: ranks of the all-reduce
	Batch     int // decode batch (tokens per step)
	Layers    int // decoder layers; the first DenseLayers are dense MLP, the rest MoE
	// DenseLayers is the number of leading dense layers (Kimi-K2.5: 1).
	DenseLayers int
	// Steps is the number of decode steps. When 0, steps are written until
	// the output reaches TargetBytes.
	Steps       int
	TargetBytes int64
	// PythonEvents is the number of python_function events per step
	// (with_stack=True profiles have hundreds).
	PythonEvents int
	Seed         uint64
	// Device is the GPU name of deviceProperties ("" is "NVIDIA H200").
	Device string
}

// DefaultConfig is rank 0 of a TP8 Kimi-K2.5-like decode at batch 32,
// 4 steps.
func DefaultConfig() Config {
	return Config{
		Rank: 0, WorldSize: 8, Batch: 32, Layers: 61, DenseLayers: 1,
		Steps: 4, PythonEvents: 1500, Seed: 1,
	}
}

// Stats counts what Write wrote.
type Stats struct {
	Bytes      int64 // uncompressed JSON
	Events     int64 // elements of traceEvents
	Steps      int64
	Kernels    int64
	AllReduces int64 // ncclDevKernel_AllReduce kernels
	Flows      int64 // ac2g flow events (s and f)
}

// Kernel names, spelled as published vLLM traces and kernel tables show them
// (NCCL >= 2.19, cuBLAS nvjet, vLLM and Marlin MoE kernels, and the Triton MLA
// decode kernels of vllm-project/vllm
// `vllm/v1/attention/ops/triton_decode_attention.py`).
const (
	kAllReduce  = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	kAllGather  = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	kRMSNorm    = "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)"
	kFusedAdd   = "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)"
	kGEMM       = "nvjet_tst_64x8_64x16_4x1_v_bz_TNT"
	kGEMMWide   = "nvjet_tst_128x8_64x8_2x1_v_bz_splitK_TNT"
	kRotary     = "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)"
	kCacheMLA   = "void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*)"
	kMLAStage1  = "_fwd_grouped_kernel_stage1"
	kMLAStage2  = "_fwd_kernel_stage2"
	kRouter     = "triton_poi_fused_add_sigmoid_0"
	kAlign      = "void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)"
	kMarlinMoE  = "void marlin_moe_wna16::Marlin<1125899906909960l, 562949953487106l, 1125899906909960l, 2814749767106568l, 128, 4, 8, 4, false, 4, 2, false>(int4 const*, int4 const*, int4*, int4*, int4 const*, int4 const*, int const*, int const*, int const*, int const*, float const*, int, bool, int, int, int, int, int*, bool, bool, bool, int)"
	kActMul     = "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, c10::BFloat16 const*, int)"
	kMoESum     = "void vllm::moe_sum_kernel<c10::BFloat16, 4>(c10::BFloat16*, c10::BFloat16 const*, int)"
	kArgMax     = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)"
	kMemcpyHtoD = "Memcpy HtoD (Pinned -> Device)"
)

// kernel is one kernel of the replayed graph with its mean duration (µs)
// and launch shape.
type kernel struct {
	name        string
	dur         float64
	grid, block [3]int
	regs, smem  int
}

// stepKernels lists the kernels of one decode step in launch order.
func stepKernels(cfg Config) []kernel {
	ar := kernel{kAllReduce, 18, [3]int{2, 1, 1}, [3]int{512, 1, 1}, 96, 0}
	norm := kernel{kFusedAdd, 3.1, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 32, 0}
	var ks []kernel
	for l := 0; l < cfg.Layers; l++ {
		first := kernel{kFusedAdd, 3.1, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 32, 0}
		if l == 0 {
			first.name = kRMSNorm
		}
		ks = append(ks,
			first,
			kernel{kGEMM, 6.5, [3]int{33, 1, 1}, [3]int{128, 1, 1}, 168, 37888},      // q_a + kv_a
			kernel{kRMSNorm, 2.4, [3]int{cfg.Batch, 1, 1}, [3]int{512, 1, 1}, 24, 0}, // q_a norm
			kernel{kRMSNorm, 2.2, [3]int{cfg.Batch, 1, 1}, [3]int{512, 1, 1}, 24, 0}, // kv_a norm
			kernel{kGEMM, 7.8, [3]int{48, 1, 1}, [3]int{128, 1, 1}, 168, 37888},      // q_b
			kernel{kGEMMWide, 5.9, [3]int{8, 4, 1}, [3]int{128, 1, 1}, 168, 37888},   // W_UK absorb
			kernel{kRotary, 2.6, [3]int{cfg.Batch, 1, 1}, [3]int{256, 1, 1}, 30, 0},
			kernel{kCacheMLA, 2.3, [3]int{cfg.Batch, 1, 1}, [3]int{512, 1, 1}, 28, 0},
			kernel{kMLAStage1, 14.5, [3]int{cfg.Batch, 1, 16}, [3]int{64, 1, 1}, 255, 98304},
			kernel{kMLAStage2, 3.4, [3]int{cfg.Batch, 8, 1}, [3]int{128, 1, 1}, 64, 0},
			kernel{kGEMMWide, 5.2, [3]int{8, 4, 1}, [3]int{128, 1, 1}, 168, 37888}, // W_UV
			kernel{kGEMM, 9.6, [3]int{56, 1, 1}, [3]int{128, 1, 1}, 168, 37888},    // o_proj
			ar,
			norm,
		)
		if l < cfg.DenseLayers {
			ks = append(ks,
				kernel{kGEMM, 21.5, [3]int{144, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // gate_up
				kernel{kActMul, 2.5, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 28, 0},
				kernel{kGEMM, 12.4, [3]int{56, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // down
				ar,
			)
			continue
		}
		ks = append(ks,
			kernel{kGEMM, 5.1, [3]int{12, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // router gate
			kernel{kRouter, 4.2, [3]int{1, 1, 1}, [3]int{512, 1, 1}, 40, 0},
			kernel{kAlign, 3.6, [3]int{1, 1, 1}, [3]int{1024, 1, 1}, 48, 9216},
			kernel{kMarlinMoE, 31.0, [3]int{132, 1, 1}, [3]int{128, 1, 1}, 168, 196608}, // w13
			kernel{kActMul, 2.8, [3]int{cfg.Batch * 8, 1, 1}, [3]int{1024, 1, 1}, 28, 0},
			kernel{kMarlinMoE, 17.5, [3]int{132, 1, 1}, [3]int{128, 1, 1}, 168, 196608}, // w2
			kernel{kMoESum, 2.7, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 32, 0},
			kernel{kGEMM, 6.1, [3]int{8, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // shared gate_up
			kernel{kActMul, 2.3, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 28, 0},
			kernel{kGEMM, 4.9, [3]int{56, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // shared down
			ar,
		)
	}
	ks = append(ks,
		kernel{kRMSNorm, 2.4, [3]int{cfg.Batch, 1, 1}, [3]int{1024, 1, 1}, 24, 0},
		kernel{kGEMMWide, 38.0, [3]int{160, 1, 1}, [3]int{128, 1, 1}, 168, 37888}, // lm_head
		kernel{kAllGather, 21.0, [3]int{11, 1, 1}, [3]int{512, 1, 1}, 96, 103808},
		kernel{kArgMax, 6.0, [3]int{cfg.Batch, 1, 1}, [3]int{512, 1, 1}, 32, 0},
	)
	return ks
}

// pythonFrames are the python_function names cycled through under a step.
var pythonFrames = []string{
	"vllm/v1/engine/core.py(367): step",
	"vllm/v1/executor/multiproc_executor.py(244): execute_model",
	"vllm/v1/worker/worker_base.py(343): execute_model",
	"vllm/v1/worker/gpu_worker.py(488): execute_model",
	"torch/utils/_contextlib.py(120): decorate_context",
	"vllm/v1/worker/gpu_model_runner.py(2291): execute_model",
	"vllm/v1/worker/gpu_model_runner.py(1702): _prepare_inputs",
	"vllm/v1/attention/backends/mla/common.py(612): build",
	"vllm/v1/worker/gpu_input_batch.py(704): _make_sampling_metadata",
	"vllm/compilation/cuda_graph.py(198): __call__",
	"torch/cuda/graphs.py(89): replay",
	"<built-in method replay of torch._C._CUDAGraph object at 0x7f3a2c1e5f30>",
	"vllm/v1/sample/sampler.py(66): forward",
	"vllm/v1/sample/ops/topk_topp_sampler.py(101): forward_native",
	"<built-in method argmax of Tensor object at 0x7f39f41c2a70>",
	"vllm/v1/worker/gpu_model_runner.py(2477): _bookkeeping_sync",
	"<built-in method tolist of Tensor object at 0x7f39f41c2b10>",
	"threading.py(327): wait",
}

// pythonNames is the set of python_function names of a trace: the frames
// above plus built-in method calls on objects at random addresses, some 200
// names as in the TraceLens vLLM decode trace (202 distinct names in 984
// python_function events).
func pythonNames(rng *rand.Rand) []string {
	names := append([]string(nil), pythonFrames...)
	methods := []string{"get", "append", "items", "pop", "copy_", "item", "tolist", "numel", "size", "view", "to", "cpu", "keys", "extend"}
	types := []string{"dict", "list", "Tensor", "set", "deque", "PyCapsule"}
	for len(names) < 200 {
		names = append(names, fmt.Sprintf("<built-in method %s of %s object at 0x7f%010x>",
			methods[rng.IntN(len(methods))], types[rng.IntN(len(types))], rng.Uint64N(1<<40)))
	}
	return names
}

// writer accumulates JSON in a byte buffer.
type writer struct {
	w     *bufio.Writer
	buf   []byte
	stats *Stats
	err   error
	first bool
}

func (w *writer) flush() {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(w.buf)
	w.stats.Bytes += int64(n)
	w.err = err
	w.buf = w.buf[:0]
}

// event starts a traceEvents element.
func (w *writer) event() {
	if w.first {
		w.buf = append(w.buf, "\n  "...)
		w.first = false
	} else {
		w.buf = append(w.buf, ",\n  "...)
	}
	w.stats.Events++
	if len(w.buf) > 64<<10 {
		w.flush()
	}
}

func (w *writer) str(s string) { w.buf = strconv.AppendQuote(w.buf, s) }
func (w *writer) num(v int64)  { w.buf = strconv.AppendInt(w.buf, v, 10) }
func (w *writer) us(v float64) { w.buf = strconv.AppendFloat(w.buf, v, 'f', 3, 64) }

// x writes a complete ("X") event up to its args, which the caller closes.
func (w *writer) x(cat, name string, pid, tid int64, ts, dur float64) {
	w.event()
	w.buf = append(w.buf, `{"ph": "X", "cat": `...)
	w.str(cat)
	w.buf = append(w.buf, `, "name": `...)
	w.str(name)
	w.buf = append(w.buf, `, "pid": `...)
	w.num(pid)
	w.buf = append(w.buf, `, "tid": `...)
	w.num(tid)
	w.buf = append(w.buf, `, "ts": `...)
	w.us(ts)
	w.buf = append(w.buf, `, "dur": `...)
	w.us(dur)
	w.buf = append(w.buf, `, "args": {`...)
}

// flow writes an ac2g flow start ("s") or finish ("f").
func (w *writer) flow(ph byte, id, pid, tid int64, ts float64) {
	w.event()
	w.buf = append(w.buf, `{"ph": "`...)
	w.buf = append(w.buf, ph)
	w.buf = append(w.buf, `", "id": `...)
	w.num(id)
	w.buf = append(w.buf, `, "pid": `...)
	w.num(pid)
	w.buf = append(w.buf, `, "tid": `...)
	w.num(tid)
	w.buf = append(w.buf, `, "ts": `...)
	w.us(ts)
	w.buf = append(w.buf, `, "cat": "ac2g", "name": "ac2g"`...)
	if ph == 'f' {
		w.buf = append(w.buf, `, "bp": "e"`...)
	}
	w.buf = append(w.buf, '}')
	w.stats.Flows++
}

// Write writes the trace of cfg to out and returns what it wrote.
func Write(out io.Writer, cfg Config) (Stats, error) {
	var st Stats
	if cfg.WorldSize < 1 || cfg.Rank < 0 || cfg.Rank >= cfg.WorldSize {
		return st, fmt.Errorf("tracegen: rank %d outside world size %d", cfg.Rank, cfg.WorldSize)
	}
	if cfg.Batch < 1 || cfg.Layers < 1 || cfg.DenseLayers < 0 || cfg.DenseLayers > cfg.Layers {
		return st, fmt.Errorf("tracegen: invalid batch %d, layers %d or dense layers %d", cfg.Batch, cfg.Layers, cfg.DenseLayers)
	}
	if cfg.Steps <= 0 && cfg.TargetBytes <= 0 {
		return st, fmt.Errorf("tracegen: need Steps or TargetBytes")
	}
	w := &writer{w: bufio.NewWriterSize(out, 256<<10), buf: make([]byte, 0, 128<<10), stats: &st, first: true}
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Rank)))
	jitter := func(mean float64) float64 { return mean * (0.9 + 0.2*rng.Float64()) }

	writeHeader(w, cfg)
	ks := stepKernels(cfg)
	pid := int64(4000 + cfg.Rank) // OS pid of the worker
	tid := pid
	dev := int64(cfg.Rank)
	const stream = 7
	ts := 1.7e12 + float64(cfg.Seed%1000)*1e3 + 0.125 // µs
	ext := int64(100000)
	corr := int64(200000)
	pyID := int64(107599957) // Kineto's python ids and Ev Idx are large counters
	evIdx := int64(109226197)
	frames := pythonNames(rng)
	label := fmt.Sprintf("execute_context_0(0)_generation_%d(%d)", cfg.Batch, cfg.Batch)

	for step := 0; ; step++ {
		if cfg.Steps > 0 && step >= cfg.Steps {
			break
		}
		if cfg.Steps <= 0 && st.Bytes+int64(len(w.buf)) >= cfg.TargetBytes {
			break
		}
		// CPU side: input preparation, then the graph launch.
		cpuStart := ts
		prep := jitter(450)
		launchTS := cpuStart + prep
		launchDur := jitter(12)
		gpuStart := launchTS + launchDur + jitter(6)
		// GPU side: the replayed kernels back to back with small gaps.
		kts := make([]float64, len(ks))
		kdur := make([]float64, len(ks))
		t := gpuStart + 1.5
		for k := range ks {
			kts[k] = t
			kdur[k] = jitter(ks[k].dur)
			t += kdur[k] + 0.6 + 0.4*rng.Float64()
		}
		gpuEnd := t
		cpuEnd := gpuEnd + jitter(25) // stream sync, sampling bookkeeping

		ext++
		stepExt := ext
		w.x("user_annotation", label, pid, tid, cpuStart, cpuEnd-cpuStart)
		w.buf = append(w.buf, `"External id": `...)
		w.num(stepExt)
		w.buf = append(w.buf, `, "Record function id": 0, "Ev Idx": `...)
		w.num(st.Events)
		w.buf = append(w.buf, "}}"...)

		// python stack events spread over the CPU part of the step.
		for p := 0; p < cfg.PythonEvents; p++ {
			frac := float64(p) / float64(max(cfg.PythonEvents, 1))
			pts := cpuStart + 1 + frac*(cpuEnd-cpuStart-2)
			w.x("python_function", frames[rng.IntN(len(frames))], pid, tid, pts, jitter(0.1+float64(p%7)))
			w.buf = append(w.buf, `"Python parent id": `...)
			w.num(pyID - 1 - int64(rng.IntN(40)))
			w.buf = append(w.buf, `, "Python id": `...)
			w.num(pyID)
			w.buf = append(w.buf, `, "Ev Idx": `...)
			w.num(evIdx + st.Events)
			w.buf = append(w.buf, "}}"...)
			pyID++
		}
		// Input copies: a cpu_op with a runtime memcpy and its GPU copy.
		for c := 0; c < 3; c++ {
			ext++
			corr++
			ots := cpuStart + 40 + float64(c)*60
			w.x("cpu_op", "aten::copy_", pid, tid, ots, 28)
			w.buf = append(w.buf, `"External id": `...)
			w.num(ext)
			w.buf = append(w.buf, `, "Record function id": 0, "Sequence number": 0, "Fwd thread id": 0, "Ev Idx": `...)
			w.num(st.Events)
			w.buf = append(w.buf, "}}"...)
			w.x("cuda_runtime", "cudaMemcpyAsync", pid, tid, ots+4, 9)
			w.buf = append(w.buf, `"External id": `...)
			w.num(ext)
			w.buf = append(w.buf, `, "cbid": 41, "correlation": `...)
			w.num(corr)
			w.buf = append(w.buf, "}}"...)
			w.flow('s', corr, pid, tid, ots+4)
			w.x("gpu_memcpy", kMemcpyHtoD, dev, stream, ots+20, 1.4)
			w.buf = append(w.buf, `"External id": `...)
			w.num(ext)
			w.buf = append(w.buf, `, "device": `...)
			w.num(dev)
			w.buf = append(w.buf, `, "context": 1, "stream": 7, "correlation": `...)
			w.num(corr)
			w.buf = append(w.buf, `, "bytes": `...)
			w.num(int64(cfg.Batch) * 8)
			w.buf = append(w.buf, `, "memory bandwidth (GB/s)": 0.183}}`...)
			w.flow('f', corr, dev, stream, ots+20)
		}
		// The graph launch: one correlation for every replayed kernel.
		ext++
		corr++
		launchCorr := corr
		w.x("cuda_runtime", "cudaGraphLaunch", pid, tid, launchTS, launchDur)
		w.buf = append(w.buf, `"External id": `...)
		w.num(ext)
		w.buf = append(w.buf, `, "cbid": 311, "correlation": `...)
		w.num(launchCorr)
		w.buf = append(w.buf, "}}"...)
		w.flow('s', launchCorr, pid, tid, launchTS)
		corr++
		w.x("cuda_runtime", "cudaStreamSynchronize", pid, tid, launchTS+launchDur+2, gpuEnd-launchTS-launchDur)
		w.buf = append(w.buf, `"External id": `...)
		w.num(ext)
		w.buf = append(w.buf, `, "cbid": 131, "correlation": `...)
		w.num(corr)
		w.buf = append(w.buf, "}}"...)

		w.x("gpu_user_annotation", label, dev, stream, gpuStart, gpuEnd-gpuStart)
		w.buf = append(w.buf, `"External id": `...)
		w.num(stepExt)
		w.buf = append(w.buf, "}}"...)
		for k, kn := range ks {
			w.x("kernel", kn.name, dev, stream, kts[k], kdur[k])
			w.buf = append(w.buf, `"External id": `...)
			w.num(ext)
			w.buf = append(w.buf, `, "queued": 0, "device": `...)
			w.num(dev)
			w.buf = append(w.buf, `, "context": 1, "stream": 7, "correlation": `...)
			w.num(launchCorr)
			w.buf = append(w.buf, `, "registers per thread": `...)
			w.num(int64(kn.regs))
			w.buf = append(w.buf, `, "shared memory": `...)
			w.num(int64(kn.smem))
			w.buf = append(w.buf, `, "blocks per SM": 0.25, "warps per SM": 1, "grid": [`...)
			w.num(int64(kn.grid[0]))
			w.buf = append(w.buf, ", "...)
			w.num(int64(kn.grid[1]))
			w.buf = append(w.buf, ", "...)
			w.num(int64(kn.grid[2]))
			w.buf = append(w.buf, `], "block": [`...)
			w.num(int64(kn.block[0]))
			w.buf = append(w.buf, ", "...)
			w.num(int64(kn.block[1]))
			w.buf = append(w.buf, ", "...)
			w.num(int64(kn.block[2]))
			w.buf = append(w.buf, `], "est. achieved occupancy %": 0`...)
			if kn.name == kAllGather {
				w.buf = append(w.buf, `, "Collective name": "_allgather_base", "In msg nelems": `...)
				w.num(int64(cfg.Batch) * 163840 / int64(cfg.WorldSize))
				w.buf = append(w.buf, `, "Out msg nelems": `...)
				w.num(int64(cfg.Batch) * 163840)
				w.buf = append(w.buf, `, "Group size": `...)
				w.num(int64(cfg.WorldSize))
				w.buf = append(w.buf, `, "dtype": "BFloat16"`...)
			}
			w.buf = append(w.buf, "}}"...)
			w.flow('f', launchCorr, dev, stream, kts[k])
			st.Kernels++
			if kn.name == kAllReduce {
				st.AllReduces++
			}
		}
		st.Steps++
		ts = cpuEnd + jitter(30)
	}
	writeFooter(w, cfg)
	w.flush()
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return st, w.err
}

// writeHeader writes the top-level fields Kineto puts before traceEvents.
func writeHeader(w *writer, cfg Config) {
	w.buf = append(w.buf, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ["...)
	for d := 0; d < cfg.WorldSize; d++ {
		if d > 0 {
			w.buf = append(w.buf, ","...)
		}
		w.buf = append(w.buf, "\n    {\n      \"id\": "...)
		w.num(int64(d))
		device := cfg.Device
		if device == "" {
			device = "NVIDIA H200"
		}
		w.buf = append(w.buf, `, "name": `...)
		w.buf = strconv.AppendQuote(w.buf, device)
		w.buf = append(w.buf, `, "totalGlobalMem": 150020292608,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132,
      "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }`...)
	}
	w.buf = append(w.buf, "],\n  \"cupti_version\": 26,\n  \"cuda_runtime_version\": 12080,\n  \"cuda_driver_version\": 12080,\n"...)
	w.buf = append(w.buf, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": "...)
	w.num(int64(cfg.Rank))
	w.buf = append(w.buf, ", \"world_size\": "...)
	w.num(int64(cfg.WorldSize))
	w.buf = append(w.buf, ", \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": "...)
	w.num(int64(cfg.WorldSize))
	w.buf = append(w.buf, ", \"ranks\": ["...)
	for r := 0; r < cfg.WorldSize; r++ {
		if r > 0 {
			w.buf = append(w.buf, ", "...)
		}
		w.num(int64(r))
	}
	w.buf = append(w.buf, "]}], \"nccl_version\": \"2.27.3\"},\n"...)
	w.buf = append(w.buf, "  \"record_shapes\": 0,\n  \"with_stack\": 1,\n  \"trace_id\": \"tracegen-"...)
	w.num(int64(cfg.Seed))
	w.buf = append(w.buf, "\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1759300000000000000,\n  \"traceEvents\": ["...)
}

// writeFooter closes traceEvents and writes the fields Kineto and vLLM put
// after it.
func writeFooter(w *writer, cfg Config) {
	w.buf = append(w.buf, "\n],\n  \"traceName\": "...)
	w.str(fmt.Sprintf("/tmp/vllm_profile/dp0_pp0_tp%d_dcp0_ep0_rank%d.pt.trace.json.gz", cfg.Rank, cfg.Rank))
	w.buf = append(w.buf, ",\n  \"vllm_version\": \"0.11.0\",\n  \"vllm_version_tuple\": [0, 11, 0]\n}\n"...)
}
