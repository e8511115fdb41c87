package model

import (
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// Class is a weight class for byte accounting.
type Class uint8

const (
	ClassRoutedExperts Class = iota
	ClassSharedExpert
	ClassAttention
	ClassDenseMLP
	ClassEmbedding
	ClassLMHead
	ClassRouter
	ClassNorm // layer norms and other small vectors
	ClassMTP  // multi-token-prediction layers (all their weights)
	NumClasses
)

// Split says how vLLM shards a linear layer over tensor-parallel ranks.
type Split uint8

const (
	Replicated    Split = iota // every rank holds it (vLLM ReplicatedLinear: MLA q_a, kv_a; router)
	Column                     // output dim split over TP (ColumnParallelLinear)
	Row                        // input dim split over TP (RowParallelLinear)
	VocabParallel              // vocab rows split over TP (embedding, lm_head), vocab padded to 64
	// QKVParallel is vLLM's QKVParallelLinear: the output is
	// (Heads + 2*KVHeads)*HeadDim; query heads split over TP and kv heads
	// split too, but replicated to one per rank when TP > KVHeads.
	QKVParallel
)

func (s Split) String() string {
	switch s {
	case Replicated:
		return "replicated"
	case Column:
		return "column"
	case Row:
		return "row"
	case VocabParallel:
		return "vocab"
	case QKVParallel:
		return "qkv"
	}
	return "split?"
}

// Linear is one weight matrix of a layer: y[Out] = W[Out x In] x[In].
type Linear struct {
	Name   string // e.g. "q_a_proj", "gate_up_proj"
	Class  Class
	In     int
	Out    int
	Split  Split
	Format dtype.Format
	// Bias: the layer adds a bias of Out values, stored in Quant.Base.
	// Column and QKV biases split like the output; Row and Replicated
	// biases are held whole by every rank (vLLM adds a row-parallel bias
	// after the reduction).
	Bias bool
	// Heads, KVHeads, HeadDim describe a QKVParallel output; zero otherwise.
	Heads, KVHeads, HeadDim int
	// VHeadDim is the value head dim of a QKVParallel output when it
	// differs from HeadDim; 0 means HeadDim.
	VHeadDim int
}

// Params is In x Out.
func (l Linear) Params() float64 { return float64(l.In) * float64(l.Out) }

// Layout is a parallel layout as far as weight and KV placement go.
// TP shards attention and dense weights; EP places routed experts over EP
// ranks (experts not split), and with EP the expert-TP degree is
// TP*DP/EP (vLLM: EP = TP x DP when enabled). DPAttention means attention
// runs data-parallel (each rank holds all attention weights and the KV of
// its own requests).
type Layout struct {
	TP          int
	EP          int
	DP          int
	DPAttention bool
}

// WeightBytes is the byte accounting of a model for one layout.
type WeightBytes struct {
	Total  [NumClasses]unit.Bytes // whole model
	PerGPU [NumClasses]unit.Bytes // on one GPU (the largest when uneven)
}

// Sum adds up a class array.
func Sum(a [NumClasses]unit.Bytes) unit.Bytes {
	var s unit.Bytes
	for _, b := range a {
		s += b
	}
	return s
}
