// Package comm costs the collectives of one decode step among the GPUs of
// one node: all-reduce (NCCL ring/tree with LL/LL128/Simple, vLLM's one-shot
// and two-shot custom all-reduce, and the choice vLLM makes among them),
// all-gather, reduce-scatter and all-to-all.
//
// The model is alpha-beta: t = alpha + bytes_on_wire/BW, with alpha the
// latency of the algorithm's steps (NCCL's own tuning constants) and BW the
// bus bandwidth the fabric reaches for the algorithm and protocol (measured
// by nccl-tests). Times are unit.Seconds, sizes unit.Bytes. Every Estimate
// carries a cost.Source naming the algorithm chosen. Ranks beyond one node
// (Fabric.NodeGPUs) are priced across nodes on Comm.NIC when it is set
// (multinode.go), else as if the fabric joined them all.
package comm

import (
	"fmt"

	"github.com/moecast/moecast/internal/unit"
)

// Fabric is the GPU-to-GPU interconnect inside a node.
type Fabric struct {
	Name    string
	BW      unit.BytesPerSecond // per GPU, per direction (link nominal)
	Latency unit.Seconds        // one hop, GPU to GPU (NCCL's per-step ring LL latency)
	P2P     bool                // direct peer access (false: staged through host)
	NVLink  bool
	// BusBW is the bus bandwidth NCCL all-reduce reaches at large messages
	// on 8 ranks (nccl-tests busbw), the BW of the NCCL model.
	BusBW unit.BytesPerSecond
	// AllToAllBW is the bus bandwidth of NCCL all-to-all at large messages
	// (nccl-tests alltoall busbw, 8 ranks).
	AllToAllBW unit.BytesPerSecond
	// P2PBW is the one-way peer-to-peer bandwidth custom all-reduce
	// kernels reach (they read or write peers' buffers directly).
	P2PBW unit.BytesPerSecond
	// CustomARLatency is the latency of a one-shot custom all-reduce
	// (graph-captured, small message); two-shot adds TwoShotExtraLatency.
	CustomARLatency unit.Seconds
	// NodeGPUs is how many GPUs one node of this fabric joins (8 on an
	// HGX board's NVSwitch); 0 when the fabric states no limit (a PCIe
	// box may hold 4 to 10). A layout with more GPUs spans nodes, which
	// comm does not model.
	NodeGPUs int
	// Beyond names the fabric that joins nodes of NodeGPUs GPUs (an NVL72
	// rack's InfiniBand between racks) and BeyondBW its bandwidth per GPU
	// and direction; comm prices collectives inside one node only, so
	// these are stated, not priced. Empty when not stated.
	Beyond   string
	BeyondBW unit.BytesPerSecond
	Source   string
}

// The presets. Measured figures from aiconfigurator's perfdb (@095f58a,
// Apache-2.0; aic-core/src/aiconfigurator_core/systems/data/<system>/comm/nccl/2.29.2),
// nccl-tests out-of-place times,
// NCCL 2.29.2, 8 GPUs; busbw = algbw * 2(n-1)/n for all-reduce and
// algbw * (n-1)/n for all-to-all (nccl-tests doc/PERFORMANCE.md):
//
//   - pcie-gen5 (RTX PRO 6000 Server): 64 GB/s per direction (PCIe 5.0
//     x16; aiconfigurator intra_node_bw). All-reduce 512 MiB in 38.07 ms:
//     busbw 24.7 GB/s. All-to-all 512 MiB in 25.50 ms: busbw 18.4 GB/s.
//     P2P write 53-56 GB/s same NUMA, 39-51 GB/s cross-NUMA, P2P latency
//     0.36-0.45 us (voipmonitor/rtx6kpro @ 29f3863, hardware/pcie-bandwidth.md): P2PBW 50 GB/s
//     matches vLLM's 2-GPU custom all-reduce, 4 MB in 106 us.
//
//   - pcie-gen4: half of Gen5 per lane rate (16 GT/s x16 = 31.5 GB/s);
//     BusBW, AllToAllBW and P2PBW are Gen5's measured figures halved: an
//     estimate, not a measurement.
//
//   - nvlink4 (H100/H200 HGX, NVSwitch): 450 GB/s per direction per GPU.
//     H200 all-reduce 128 MiB in 564.5 us: busbw 416 GB/s (NCCL may use
//     NVLS there); all-to-all 512 MiB in 1.51 ms: busbw 311 GB/s. P2PBW
//     315 GB/s: vLLM two-stage custom all-reduce on 8 H200, 4 MB in 28.4 us
//     less its 5 us latency.
//
//   - nvlink5 (B200 HGX): 900 GB/s per direction per GPU. B200 all-reduce
//     128 MiB in 398.4 us: busbw 590 GB/s; all-to-all 512 MiB in 834 us:
//     busbw 563 GB/s. P2PBW 400 GB/s: vLLM two-stage custom all-reduce on 8
//     B200, 4 MB in 26.3 us less 7.8 us latency.
//
//   - nvlink3 (A100 HGX): 300 GB/s per direction per GPU (NVLink 3, 12
//     links). A100 all-reduce 512 MiB (268435456 fp16) in 4.226 ms: busbw
//     222 GB/s; all-to-all 512 MiB in 2.314 ms: busbw 203 GB/s (perfdb
//     a100_sxm comm/nccl/2.27.3). P2PBW and CustomARLatency: nvlink4's
//     scaled by 300/450 and kept, an estimate.
//
//   - nvlink5-nvl72 (GB200/GB300 NVL72): NVLink 5 through the rack's
//     NVSwitch trays, 900 GB/s per direction per GPU, 72 GPUs in one
//     NVLink domain. GB200 all-reduce 512 MiB in 1.282 ms on 4 ranks:
//     busbw 628 GB/s; all-to-all 512 MiB in 825 us: busbw 488 GB/s (perfdb
//     gb200 comm/nccl/2.29.2 has 4-rank rows only: one compute tray).
//     P2PBW, CustomARLatency and Latency as nvlink5 (the same links).
//     Beyond the rack: InfiniBand XDR 800 Gb/s, 100 GB/s per GPU
//     (aiconfigurator systems/gb200.yaml inter_rack_bw).
//
// NodeGPUs: HGX A100, H100/H200 and B200/B300 boards join 8 GPUs through
// their NVSwitches (NVIDIA HGX datasheets); an NVL72 rack joins 72.
//
// Latency is NCCL's ring LL hop latency (src/graph/tuning.cc hwLat,
// NCCL 2.28: NVLink 0.6 us, PCI 1.0 us), except nvlink5: 1.4 us fitted to
// perfdb's B200 small-message all-reduce (8 KB: 10.5/15.7/26.0 us at 2/4/8
// ranks = 6.6 us + 2(n-1) x 1.4-1.9 us), where NCCL's constants give
// 7.9/10.3/15.1 us. CustomARLatency: vLLM custom all-reduce at 8 KB,
// graph-captured (perfdb custom_allreduce_perf): H100/H200 4.4-5.1 us,
// RTX PRO 6000 (2 ranks) 4.5 us, B200 7.0-7.8 us.
var fabrics = [...]Fabric{
	{
		Name: "pcie-gen4", BW: 31.5 * unit.GBps, Latency: 1.0 * unit.Microsecond, P2P: true,
		BusBW: 12.35 * unit.GBps, AllToAllBW: 9.2 * unit.GBps, P2PBW: 25 * unit.GBps, CustomARLatency: 5 * unit.Microsecond,
		Source: "PCIe 4.0 x16; collective bandwidths = pcie-gen5 measurements halved (estimate)",
	},
	{
		Name: "pcie-gen5", BW: 64 * unit.GBps, Latency: 1.0 * unit.Microsecond, P2P: true,
		BusBW: 24.7 * unit.GBps, AllToAllBW: 18.4 * unit.GBps, P2PBW: 50 * unit.GBps, CustomARLatency: 5 * unit.Microsecond,
		Source: "aiconfigurator perfdb nccl_perf rtx_pro_6000_server (Apache-2.0); rtx6kpro P2P measurements",
	},
	{
		Name: "nvlink3", BW: 300 * unit.GBps, Latency: 0.6 * unit.Microsecond, P2P: true, NVLink: true,
		BusBW: 222 * unit.GBps, AllToAllBW: 203 * unit.GBps, P2PBW: 210 * unit.GBps, CustomARLatency: 5 * unit.Microsecond, NodeGPUs: 8,
		Source: "NVLink 3 spec; aiconfigurator perfdb nccl_perf a100_sxm (Apache-2.0); P2P bandwidth scaled from nvlink4 (estimate)",
	},
	{
		Name: "nvlink4", BW: 450 * unit.GBps, Latency: 0.6 * unit.Microsecond, P2P: true, NVLink: true,
		BusBW: 416 * unit.GBps, AllToAllBW: 311 * unit.GBps, P2PBW: 315 * unit.GBps, CustomARLatency: 5 * unit.Microsecond, NodeGPUs: 8,
		Source: "NVLink 4 spec; aiconfigurator perfdb nccl_perf and vLLM custom_allreduce h200_sxm (Apache-2.0)",
	},
	{
		Name: "nvlink5", BW: 900 * unit.GBps, Latency: 1.4 * unit.Microsecond, P2P: true, NVLink: true,
		BusBW: 590 * unit.GBps, AllToAllBW: 563 * unit.GBps, P2PBW: 400 * unit.GBps, CustomARLatency: 7.5 * unit.Microsecond, NodeGPUs: 8,
		Source: "NVLink 5 spec; aiconfigurator perfdb nccl_perf and vLLM custom_allreduce b200_sxm (Apache-2.0)",
	},
	{
		Name: "nvlink5-nvl72", BW: 900 * unit.GBps, Latency: 1.4 * unit.Microsecond, P2P: true, NVLink: true,
		BusBW: 628 * unit.GBps, AllToAllBW: 488 * unit.GBps, P2PBW: 400 * unit.GBps, CustomARLatency: 7.5 * unit.Microsecond, NodeGPUs: 72,
		Beyond: "InfiniBand XDR 800 Gb/s between racks", BeyondBW: 100 * unit.GBps,
		Source: "NVLink 5 NVL72; aiconfigurator perfdb nccl_perf gb200 (4 ranks) and systems/gb200.yaml (Apache-2.0)",
	},
}

// LookupFabric returns the preset called name.
func LookupFabric(name string) (Fabric, bool) {
	for _, f := range fabrics {
		if f.Name == name {
			return f, true
		}
	}
	return Fabric{}, false
}

// FabricNames lists the preset names in a fixed order.
func FabricNames() []string {
	names := make([]string, len(fabrics))
	for i, f := range fabrics {
		names[i] = f.Name
	}
	return names
}

// Validate checks a fabric defined outside the presets: positive
// bandwidths, non-negative latency. Errors name the field.
func (f *Fabric) Validate() error {
	switch {
	case f.Name == "":
		return fmt.Errorf("fabric: name is empty")
	case !(f.BW > 0):
		return fmt.Errorf("fabric %q: bandwidth must be positive, got %v", f.Name, float64(f.BW))
	case !(f.Latency >= 0):
		return fmt.Errorf("fabric %q: latency must not be negative, got %v", f.Name, float64(f.Latency))
	case !(f.BusBW > 0):
		return fmt.Errorf("fabric %q: bus bandwidth must be positive, got %v", f.Name, float64(f.BusBW))
	case !(f.AllToAllBW > 0):
		return fmt.Errorf("fabric %q: all-to-all bandwidth must be positive, got %v", f.Name, float64(f.AllToAllBW))
	case f.P2P && !(f.CustomARLatency >= 0):
		return fmt.Errorf("fabric %q: custom all-reduce latency must not be negative", f.Name)
	case f.NodeGPUs < 0:
		return fmt.Errorf("fabric %q: GPUs per node must not be negative, got %d", f.Name, f.NodeGPUs)
	case f.P2P && !(f.P2PBW > 0):
		return fmt.Errorf("fabric %q: P2P bandwidth must be positive on a P2P fabric, got %v", f.Name, float64(f.P2PBW))
	}
	return nil
}
