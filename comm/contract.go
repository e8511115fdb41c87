// CONTRACT SKETCH (to be replaced by the real implementation).
package comm

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// Fabric is the GPU-to-GPU interconnect inside a node.
type Fabric struct {
	Name    string
	BW      unit.BytesPerSecond // per GPU, per direction
	Latency unit.Seconds        // one hop, GPU to GPU
	P2P     bool                // direct peer access (false: staged through host)
	NVLink  bool
}

// Impl is the all-reduce implementation: the TOML key runtime.allreduce.
type Impl uint8

const (
	Auto    Impl = iota // what vLLM picks for the fabric, rank count and size
	NCCL                // NCCL ring/tree with LL/LL128/Simple
	OneShot             // custom all-reduce, one stage
	TwoShot             // custom all-reduce, reduce-scatter + all-gather
)

// Comm costs collectives among ranks on one fabric.
type Comm struct {
	Fabric Fabric
	Graphs bool
	// Tables, when set, is consulted before the alpha-beta model.
	Tables Lookup
}

func (c *Comm) AllReduce(impl Impl, ranks int, b unit.Bytes) cost.Estimate { panic("unimplemented") }
func (c *Comm) AllGather(ranks int, b unit.Bytes) cost.Estimate            { panic("unimplemented") }
func (c *Comm) ReduceScatter(ranks int, b unit.Bytes) cost.Estimate        { panic("unimplemented") }
func (c *Comm) AllToAll(ranks int, bytesPerRank unit.Bytes) cost.Estimate  { panic("unimplemented") }
func LookupFabric(name string) (Fabric, bool)                              { panic("unimplemented") }

// Lookup supplies measured collective costs from calibration tables
// (implemented by comm/table.go). Nil means alpha-beta only. Each method
// reports false when no table covers the query.
type Lookup interface {
	AllReduce(impl Impl, ranks int, b unit.Bytes) (cost.Estimate, bool)
	AllGather(ranks int, b unit.Bytes) (cost.Estimate, bool)
	ReduceScatter(ranks int, b unit.Bytes) (cost.Estimate, bool)
	AllToAll(ranks int, bytesPerRank unit.Bytes) (cost.Estimate, bool)
}
