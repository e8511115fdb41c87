// Package kernels turns the shapes of one step's operations (GEMMs,
// grouped MoE layers, MLA and GQA decode attention, causal prefill
// attention, elementwise kernels, router, sampling) into cost.Estimates on
// one GPU.
//
// The model is a roofline with per-op-class efficiencies:
//
//	t = max(bytes/(BW*eff_mem), flops/(peak*eff_compute)) + n_kernels*t_kernel
//
// where BW is the GPU's peak DRAM bandwidth (unit.BytesPerSecond), peak is
// the dense tensor-core throughput at the op's compute precision
// (unit.FLOPsPerSecond), and t_kernel is a fixed per-kernel cost
// (unit.Seconds). All quantities are in base SI units. Every Estimate carries
// a cost.Source naming its formula, the efficiency of the bound side and the
// bound ("memory", "compute" or "latency"); a calibration table (Costs.Tables)
// replaces the roofline where it covers an op, but never below the DRAM
// streaming floor of the op's bytes.
//
// kernels never imports model: sim maps a model and a layout to op shapes.
package kernels

import (
	"fmt"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// GPU is one accelerator's spec.
type GPU struct {
	Name   string // preset name, e.g. "h200-sxm"
	Label  string // marketing name, e.g. "NVIDIA H200 SXM 141GB"
	Arch   Arch   // "sm_90", "sm_100", "sm_120" (arch.go: the facts known of it)
	SMs    int
	Memory unit.Bytes // device memory capacity as the device reports it (nvidia-smi memory.total)
	// CUDAMemory is the total that cudaMemGetInfo reports
	// (torch.cuda.mem_get_info), below Memory by what the driver keeps for
	// itself: the base vLLM takes gpu_memory_utilization of (the
	// requested memory is mem_get_info's total x the utilization,
	// vllm/v1/worker/gpu_worker.py determine_available_memory and
	// vllm/utils MemorySnapshot; SGLang sizes its pool from the free
	// memory mem_get_info gives at start, below this by the CUDA context,
	// which is not modelled); 0 = not measured, Memory stands in.
	CUDAMemory unit.Bytes
	MemBW      unit.BytesPerSecond // peak DRAM bandwidth
	L2         unit.Bytes
	// Peak dense tensor-core throughput indexed by dtype.Compute.
	Peak [4]unit.FLOPsPerSecond
	// Fabric is the preset name of the usual intra-node interconnect of
	// the server this GPU ships in ("pcie-gen5", "nvlink4", ...).
	Fabric string
	Source string // where the figures come from
	// GEMMMem and GEMMCompute are this GPU's own measured fractions of its
	// bf16 GEMMs (a custom GPU's gemm_mem_efficiency and
	// gemm_compute_efficiency): of MemBW when streaming weights at more
	// than GEMMBatchRows rows, of the bf16 peak when compute-bound; 0 =
	// the architecture's (EfficiencyFor).
	GEMMMem, GEMMCompute float64
	// FA2MixedRead is the rate at which FlashAttention-2's varlen kernel
	// reads the decodes' KV cache in a step that also carries a prefill
	// chunk, once per query head (GQADecodeMixedFA2), as measured on this
	// GPU; 0 = not measured (decodes priced as in a decode-only step).
	FA2MixedRead unit.BytesPerSecond
}

// EngineMemory is the memory an engine takes its share of
// (gpu_memory_utilization): CUDAMemory where it was measured, else Memory.
func (g *GPU) EngineMemory() unit.Bytes {
	if g.CUDAMemory > 0 {
		return g.CUDAMemory
	}
	return g.Memory
}

// PeakFor is the dense tensor-core peak for compute precision c. A GPU
// without tensor cores for c (Peak[c] == 0, e.g. fp4 on Hopper) runs the op
// at its bf16 peak, as the engines fall back to a bf16 kernel.
func (g *GPU) PeakFor(c dtype.Compute) unit.FLOPsPerSecond {
	if int(c) < len(g.Peak) && g.Peak[c] > 0 {
		return g.Peak[c]
	}
	return g.Peak[dtype.BF16]
}

// Validate checks a GPU defined outside the presets (a custom GPU in a
// scenario): positive bandwidth, capacity and bf16 peak; non-negative SMs,
// L2 and other peaks. Errors name the offending field.
func (g *GPU) Validate() error {
	switch {
	case g.Name == "":
		return fmt.Errorf("gpu: name is empty")
	case !(g.MemBW > 0):
		return fmt.Errorf("gpu %q: memory bandwidth must be positive, got %v", g.Name, float64(g.MemBW))
	case !(g.Memory > 0):
		return fmt.Errorf("gpu %q: memory capacity must be positive, got %v", g.Name, float64(g.Memory))
	case !(g.Peak[dtype.BF16] > 0):
		return fmt.Errorf("gpu %q: peak bf16 throughput must be positive, got %v", g.Name, float64(g.Peak[dtype.BF16]))
	case g.SMs < 0:
		return fmt.Errorf("gpu %q: SM count must not be negative, got %d", g.Name, g.SMs)
	case g.L2 < 0 || g.L2 != g.L2:
		return fmt.Errorf("gpu %q: L2 size must not be negative, got %v", g.Name, float64(g.L2))
	}
	for c, p := range g.Peak {
		if p < 0 || p != p {
			return fmt.Errorf("gpu %q: peak %s throughput must not be negative, got %v", g.Name, dtype.Compute(c), float64(p))
		}
	}
	if g.MemBW != g.MemBW || g.Memory != g.Memory {
		return fmt.Errorf("gpu %q: NaN in bandwidth or capacity", g.Name)
	}
	return nil
}

// The presets. Dense tensor-core peaks (no 2:4 sparsity). Sources:
//
//   - rtx-pro-6000-server: NVIDIA RTX PRO 6000 Blackwell Server Edition.
//     96 GB GDDR7 on a 512-bit bus at 28 Gbps = 1.792 TB/s; 188 SMs
//     (24,064 CUDA cores); 128 MB L2 (the full GB202 L2; press coverage of
//     the GTC 2025 launch). Capacity 97,887 MiB as nvidia-smi reports it and
//     peaks bf16 467.8, fp8/int8 935.6, fp4 1871.2 TFLOP/s (NVIDIA's ratios
//     scaled to the observed 2430 MHz SM clock): aiconfigurator
//     systems/rtx_pro_6000_server.yaml @ 095f58a (Apache-2.0). PCIe Gen5 x16.
//     FA2MixedRead 2.96 TB/s: LLMServingSim's attention tables of vLLM
//     0.19.0 on this GPU (casys-kaist/LLMServingSim @ 5daddb2, MIT,
//     profiler/perf/RTXPRO6000/{meta-llama/Llama-3.1-8B/bf16/tp1,
//     Qwen/Qwen3-32B/bf16/tp2}/attention.csv): one attention call over a
//     prefill chunk beside n decodes at KV length k >= 512, less the chunk
//     alone, against q_heads/kv_heads x the decodes' KV bytes: median 2.957
//     TB/s over 2,656 rows (Llama 32/8 heads 2.957, Qwen3-32B TP2 32/4
//     2.956; quartiles 1.89-3.44, the low end at small KV).
//   - h100-sxm: NVIDIA H100 SXM5 80 GB HBM3, 3.35 TB/s, 132 SMs, 50 MB L2;
//     bf16 989, fp8/int8 1979 TFLOP/s dense (NVIDIA H100 datasheet);
//     peaks as in aiconfigurator systems/h100_sxm.yaml. Capacity 81,559 MiB
//     as nvidia-smi reports it for "NVIDIA H100 80GB HBM3" (not the nominal
//     80 GiB = 81,920 MiB): github.com/NVIDIA/nccl/issues/1264 and
//     github.com/modal-labs/modal-client/pull/2797.
//     NVLink 4 (450 GB/s per direction).
//   - h200-sxm: NVIDIA H200 SXM 141 GB HBM3e, 4.8 TB/s, 132 SMs, same tensor
//     peaks as H100 (NVIDIA H200 datasheet; aiconfigurator
//     systems/h200_sxm.yaml: 4.8 TB/s, 989/1978 TFLOP/s). Capacity 143,771
//     MiB as nvidia-smi reports it for "NVIDIA H200" (not the nominal
//     141 GiB = 144,384 MiB; the figure of every public nvidia-smi listing
//     of an H200 SXM found, e.g. driver 570.158 on an 8-GPU box). L2 60 MiB
//     as measured on an H200, 2026-11-29 (kernels/testdata/measure_h200.json,
//     l2_bytes 62914560). Measured ceilings on that H200 (2026-11-29): D2D
//     copy 4.23 TB/s, GEMV read 4.5 TB/s, bf16 GEMM
//     660-740 TFLOP/s at M=512.
//   - b200-sxm: NVIDIA B200 (HGX), HBM3e 7.7 TB/s, 148 SMs; capacity
//     183,359 MiB as nvidia-smi reports it for "NVIDIA B200" (not the
//     nominal 180 GiB = 184,320 MiB): github.com/NVIDIA/TensorRT-LLM/issues/10278;
//     bf16
//     2250, fp8/int8 4500, fp4 9000 TFLOP/s dense (aiconfigurator
//     systems/b200_sxm.yaml, citing the Blackwell datasheet); L2 126 MB
//     (two dies of 63 MB; not checked against a device query). NVLink 5
//     (900 GB/s per direction).
//   - a100-sxm: NVIDIA A100 SXM4 80 GB HBM2e, 2.039 TB/s, 108 SMs, 40 MB
//     L2; bf16 312, int8 624 TFLOP/s dense, no fp8 or fp4 tensor cores
//     (NVIDIA A100 datasheet; aiconfigurator systems/a100_sxm.yaml @095f58a:
//     2.039 TB/s, 80 GiB, 312/624 TFLOP/s). Capacity 81,920 MiB (the
//     yaml's 80 GiB). NVLink 3 (300 GB/s per direction).
//   - b300-sxm: NVIDIA B300 (HGX Blackwell Ultra), 7.75 TB/s, capacity
//     275,040 MiB as nvidia-smi reports it; bf16 2250, fp8 4500, int8 153.5,
//     fp4 14000 TFLOP/s dense (aiconfigurator systems/b300_sxm.yaml
//     @095f58a: Blackwell Ultra cuts int8 tensor throughput); SMs and L2 as
//     B200 (148, 126 MB: not checked against a device query). NVLink 5.
//   - gb200: one GPU of a GB200 NVL72 rack: 8 TB/s, capacity 189,471 MiB as
//     nvidia-smi reports it, bf16 2500, fp8/int8 5000, fp4 10000 TFLOP/s
//     dense (aiconfigurator systems/gb200.yaml @095f58a); SMs and L2 as
//     B200 (not checked). NVLink 5 across the rack's 72 GPUs (nvlink5-nvl72).
//   - gb300: one GPU of a GB300 NVL72 rack: 8 TB/s, capacity 284,208 MiB,
//     bf16 2500, fp8 5000, int8 165, fp4 15000 TFLOP/s dense
//     (aiconfigurator systems/gb300.yaml @095f58a); SMs and L2 as B200
//     (not checked). NVLink 5 across 72 GPUs (nvlink5-nvl72).
//
// CUDAMemory, the total cudaMemGetInfo reports (= cudaDeviceProp
// totalGlobalMem, the figure deviceQuery prints and PyTorch's
// out-of-memory message quotes as "GPU n has a total capacity of X GiB";
// on the H200 the three agreed to the byte, bench/RESULTS-cudamem.md).
// PyTorch prints X to 2 decimals of a GiB, which pins the total to
// +-5 MiB; the total moves by up to ~100 MiB with the driver branch (H100:
// 81,009 MiB at r535, 81,106 at r565, 81,090 at r570, 81,079 at r580), so
// the r580 figure is taken where it is known, as on the H200 (measured at
// 580.159.04). Public sources, two or more independent per GPU
// (bench/RESULTS-gpumem.md lists each with its quoted line):
//   - h100-sxm 85,017,755,648 B (81,079 MiB, 79.18 GiB): deviceQuery on an
//     "NVIDIA H100 80GB HBM3" under a CUDA 13.0 (r580) driver, "Total amount
//     of global memory: 81079 MBytes (85017755648 bytes)"; PyTorch "on
//     1xH100 HBM3 ... GPU 0 has a total capacity of 79.18 GiB" and eight
//     other 79.18 GiB H100 messages; at r535 the total is 79.11 GiB
//     (github.com/vllm-project/vllm/issues/27508, driver 535.247.01).
//   - b200-sxm 182,630 MiB (178.35 GiB): "On NVIDIA B200 ... GPU 0 has a
//     total capacity of 178.35 GiB" (github.com/stas00/ml-engineering
//     debug/pytorch.md @ 04ceca1); "Device 0: NVIDIA B200 ... Total Global
//     Memory: 178.35 GB" (a totalGlobalMem query in 2^30 units,
//     github.com/pytorch/ao/pull/4002); a B200 node at driver 590.48.01
//     with nvidia-smi's 183359 MiB, "GPU 4 has a total capacity of 178.35
//     GiB".
//   - b300-sxm 287,428,771,840 B (267.69 GiB): a B300 training log,
//     "device_total_bytes=287428771840"; independently a vLLM run of
//     DeepSeek-V4.1-Flash on B300, "GPU 3 has a total capacity of 267.69
//     GiB" and its budget "0.92 x 267.69 = 246.27 GiB".
//   - gb200 188,733 MiB (184.31 GiB): vLLM on GB200 (DP4, and DeepSeek V4
//     decode at EP8) and FSDP2 on a 4-GPU GB200 tray, each "GPU 0 has a
//     total capacity of 184.31 GiB".
//   - gb300 283,136 MiB (276.50 GiB): TensorRT-LLM "Total GPU memory
//     (GiB): 276.50" (github.com/mlcommons/inference/issues/2501); PyTorch
//     on a DGX Station's GB300 "GPU 0 has a total capacity of 276.50 GiB"
//     (stas00/ml-engineering debug/pytorch.md @ 04ceca1); torchtitan on
//     64 GB300 "276.50 GiB usable per GB300, not the 277.55 GiB of raw
//     HBM".
//
// a100-sxm (81,051 to 81,158 MiB public, depending on driver) and
// rtx-pro-6000-server (94.97 GiB is public for the Workstation Max-Q at
// r580 and for other 96 GB parts, the Server Edition only as "95.0 GiB")
// keep nvidia-smi's figure: no two sources pin them.
var presets = [...]GPU{
	{
		Name: "rtx-pro-6000-server", Label: "NVIDIA RTX PRO 6000 Blackwell Server Edition", Arch: SM120,
		SMs: 188, Memory: 97887 * unit.MiB, MemBW: 1.792 * unit.TBps, L2: 128 * unit.MB,
		Peak:         [4]unit.FLOPsPerSecond{467.8 * unit.TFLOPS, 935.6 * unit.TFLOPS, 935.6 * unit.TFLOPS, 1871.2 * unit.TFLOPS},
		Fabric:       "pcie-gen5",
		FA2MixedRead: 2.96 * unit.TBps,
		Source:       "aiconfigurator systems/rtx_pro_6000_server.yaml @095f58a (Apache-2.0); NVIDIA RTX PRO 6000 Blackwell specs; FA2MixedRead: LLMServingSim @ 5daddb2 attention tables",
	},
	{
		Name: "h100-sxm", Label: "NVIDIA H100 SXM5 80GB", Arch: SM90,
		SMs: 132, Memory: 81559 * unit.MiB, MemBW: 3.35 * unit.TBps, L2: 50 * unit.MB,
		CUDAMemory: 85017755648,
		Peak:       [4]unit.FLOPsPerSecond{989 * unit.TFLOPS, 1978 * unit.TFLOPS, 1978 * unit.TFLOPS, 0},
		Fabric:     "nvlink4",
		Source:     "NVIDIA H100 datasheet; aiconfigurator systems/h100_sxm.yaml @095f58a (Apache-2.0); cudaMemGetInfo's total 85,017,755,648 B (79.18 GiB) from public deviceQuery and PyTorch figures at driver r580 (bench/RESULTS-gpumem.md)",
	},
	{
		Name: "h200-sxm", Label: "NVIDIA H200 SXM 141GB", Arch: SM90,
		SMs: 132, Memory: 143771 * unit.MiB, MemBW: 4.8 * unit.TBps, L2: 60 * unit.MiB,
		CUDAMemory: 150109880320,
		Peak:       [4]unit.FLOPsPerSecond{989 * unit.TFLOPS, 1978 * unit.TFLOPS, 1978 * unit.TFLOPS, 0},
		Fabric:     "nvlink4",
		Source:     "NVIDIA H200 datasheet; aiconfigurator systems/h200_sxm.yaml @095f58a (Apache-2.0); L2 measured on an H200, 2026-11-29 (kernels/testdata/measure_h200.json); cudaMemGetInfo's total (torch.cuda.mem_get_info) 150,109,880,320 B against nvidia-smi's 143,771 MiB, measured on an H200, driver 580.159.04, 2026-12-03 (bench/RESULTS-cudamem.md)",
	},
	{
		Name: "b200-sxm", Label: "NVIDIA B200 SXM 180GB", Arch: SM100,
		SMs: 148, Memory: 183359 * unit.MiB, MemBW: 7.7 * unit.TBps, L2: 126 * unit.MB,
		CUDAMemory: 182630 * unit.MiB,
		Peak:       [4]unit.FLOPsPerSecond{2250 * unit.TFLOPS, 4500 * unit.TFLOPS, 4500 * unit.TFLOPS, 9000 * unit.TFLOPS},
		Fabric:     "nvlink5",
		Source:     "aiconfigurator systems/b200_sxm.yaml @095f58a (Apache-2.0), citing the NVIDIA Blackwell datasheet; cudaMemGetInfo's total 178.35 GiB from public PyTorch and device-query figures (bench/RESULTS-gpumem.md)",
	},
	{
		Name: "a100-sxm", Label: "NVIDIA A100 SXM4 80GB", Arch: SM80,
		SMs: 108, Memory: 81920 * unit.MiB, MemBW: 2.039 * unit.TBps, L2: 40 * unit.MB,
		Peak:   [4]unit.FLOPsPerSecond{312 * unit.TFLOPS, 0, 624 * unit.TFLOPS, 0},
		Fabric: "nvlink3",
		Source: "NVIDIA A100 datasheet; aiconfigurator systems/a100_sxm.yaml @095f58a (Apache-2.0)",
	},
	{
		Name: "b300-sxm", Label: "NVIDIA B300 SXM 288GB", Arch: SM103,
		SMs: 148, Memory: 275040 * unit.MiB, MemBW: 7.75 * unit.TBps, L2: 126 * unit.MB,
		CUDAMemory: 287428771840,
		Peak:       [4]unit.FLOPsPerSecond{2250 * unit.TFLOPS, 4500 * unit.TFLOPS, 153.5 * unit.TFLOPS, 14000 * unit.TFLOPS},
		Fabric:     "nvlink5",
		Source:     "aiconfigurator systems/b300_sxm.yaml @095f58a (Apache-2.0); SMs and L2 taken as B200's (not checked); cudaMemGetInfo's total 287,428,771,840 B (267.69 GiB) from public training and vLLM logs (bench/RESULTS-gpumem.md)",
	},
	{
		Name: "gb200", Label: "NVIDIA GB200 NVL72 (one Blackwell GPU)", Arch: SM100,
		SMs: 148, Memory: 189471 * unit.MiB, MemBW: 8 * unit.TBps, L2: 126 * unit.MB,
		CUDAMemory: 188733 * unit.MiB,
		Peak:       [4]unit.FLOPsPerSecond{2500 * unit.TFLOPS, 5000 * unit.TFLOPS, 5000 * unit.TFLOPS, 10000 * unit.TFLOPS},
		Fabric:     "nvlink5-nvl72",
		Source:     "aiconfigurator systems/gb200.yaml @095f58a (Apache-2.0); SMs and L2 taken as B200's (not checked); cudaMemGetInfo's total 184.31 GiB from public vLLM and PyTorch logs (bench/RESULTS-gpumem.md)",
	},
	{
		Name: "gb300", Label: "NVIDIA GB300 NVL72 (one Blackwell Ultra GPU)", Arch: SM103,
		SMs: 148, Memory: 284208 * unit.MiB, MemBW: 8 * unit.TBps, L2: 126 * unit.MB,
		CUDAMemory: 283136 * unit.MiB,
		Peak:       [4]unit.FLOPsPerSecond{2500 * unit.TFLOPS, 5000 * unit.TFLOPS, 165 * unit.TFLOPS, 15000 * unit.TFLOPS},
		Fabric:     "nvlink5-nvl72",
		Source:     "aiconfigurator systems/gb300.yaml @095f58a (Apache-2.0); SMs and L2 taken as B200's (not checked); cudaMemGetInfo's total 276.50 GiB from public TensorRT-LLM and PyTorch logs (bench/RESULTS-gpumem.md)",
	},
}

// LookupGPU returns the preset called name.
func LookupGPU(name string) (GPU, bool) {
	for _, g := range presets {
		if g.Name == name {
			return g, true
		}
	}
	return GPU{}, false
}

// GPUNames lists the preset names in a fixed order.
func GPUNames() []string {
	names := make([]string, len(presets))
	for i, g := range presets {
		names[i] = g.Name
	}
	return names
}
