// Package ncclrun measures NCCL collectives on the GPUs of this process or
// of a multi-process job: all-reduce, all-gather, reduce-scatter and
// all-to-all (grouped send/recv) over bf16 messages, eager and captured in
// CUDA graphs, each result checked exactly on the host, with algbw and
// busbw as nccl-tests defines them. It is the measuring half of
// `moecast calib gpu --ops comm`; calib/campaign turns its results into
// collective tables.
//
// Sizes follow nccl-tests' size(B) column (comm/table.go, calib/nccltests.go):
// the whole buffer of one rank for all-reduce; the whole gathered (or
// reduced) array, recvcount x 2 x ranks, for all-gather and
// reduce-scatter; what one rank sends in total for all-to-all. As in
// nccl-tests, a size is rounded down to a multiple of 2 x ranks for the
// last three (count = size/2/ranks x ranks elements).
//
// Times are seconds per collective: the median of Repeats timed batches
// (eager: Iters back-to-back launches between two events; graph: one replay
// of a graph of Iters captured collectives), with the fastest and slowest
// batch as the spread; over several ranks, the mean of the ranks' medians
// (nccl-tests' default -a 1) and the least and most of any rank.
//
// One process may drive several GPUs (ncclCommInitAll; each collective a
// group call over the local communicators, graphs captured per stream as
// nccl-tests does) or one GPU as one rank of a job joined by
// internal/rendezvous (ncclCommInitRankScalable with rank 0's unique id).
// NVLink multicast (NVLS) is kept off: NCCL_NVLS_ENABLE=0 is set before
// NCCL starts unless the environment sets it.
package ncclrun

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Collective is an NCCL collective, named as calibration tables name ops.
type Collective string

// The collectives measured.
const (
	AllReduce     Collective = "allreduce"
	AllGather     Collective = "allgather"
	ReduceScatter Collective = "reducescatter"
	AllToAll      Collective = "alltoall"
)

// Collectives are all four, in the order a sweep runs them.
var Collectives = []Collective{AllReduce, AllGather, ReduceScatter, AllToAll}

// Mode is how the collectives are launched.
type Mode string

// The modes.
const (
	Eager Mode = "eager" // launched from the host back to back
	Graph Mode = "graph" // captured in a CUDA graph and replayed
)

// Modes are both, in the order a sweep runs them.
var Modes = []Mode{Eager, Graph}

// Hidden is the hidden size of the token-sized messages (Kimi-K2.5,
// DeepSeek-V3): one token's bf16 activation is 2 x Hidden bytes.
const Hidden = 7168

// TokenBytes is one token's bf16 activation.
const TokenBytes = 2 * Hidden

// ElemBytes is the size of one bf16 element.
const ElemBytes = 2

// Token counts of the token-sized messages (decode batches, prefill chunks).
var (
	FullTokens  = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	QuickTokens = []int{1, 8, 64, 512, 4096}
)

// Size is one message size: Bytes as nccl-tests' size(B); Tokens is the
// token count when it is a token-sized message (0 for powers of two).
type Size struct {
	Bytes  int64
	Tokens int
}

// Plan is what a sweep measures.
type Plan struct {
	Collectives []Collective
	Modes       []Mode
	Sizes       []Size // ascending bytes
	// InPlace also times each collective in place (all-reduce,
	// all-gather, reduce-scatter; NCCL has no in-place all-to-all).
	InPlace bool
	Warmup  int // eager launches before timing
	Repeats int // timed batches (eager) or graph replays
	// Timeout bounds every wait on the GPUs: a collective not done by then
	// is aborted (ncclCommAbort).
	Timeout time.Duration
}

// DefaultPlan is the sweep of `calib gpu --ops comm`: the four
// collectives, eager and graph, in place too, over token-sized messages
// of 1..8192 tokens and powers of two from 8 B to 1 GiB (quick: 5 token
// counts and 8 B..128 MiB every 16x).
func DefaultPlan(quick bool) Plan {
	p := Plan{Collectives: Collectives, Modes: Modes, InPlace: true, Warmup: 5, Repeats: 15, Timeout: time.Minute}
	tokens, lo, hi, step := FullTokens, 3, 30, 1
	if quick {
		tokens, hi, step = QuickTokens, 27, 4
	}
	for _, t := range tokens {
		p.Sizes = append(p.Sizes, Size{Bytes: int64(t) * TokenBytes, Tokens: t})
	}
	for e := lo; e <= hi; e += step {
		p.Sizes = append(p.Sizes, Size{Bytes: 1 << e})
	}
	sort.Slice(p.Sizes, func(i, j int) bool { return p.Sizes[i].Bytes < p.Sizes[j].Bytes })
	return p
}

// Check says what is wrong with p, if anything.
func (p Plan) Check() error {
	switch {
	case len(p.Collectives) == 0 || len(p.Modes) == 0 || len(p.Sizes) == 0:
		return fmt.Errorf("ncclrun: empty plan (collectives, modes and sizes are needed)")
	case p.Repeats < 1 || p.Warmup < 0:
		return fmt.Errorf("ncclrun: repeats %d, warm-up %d: want at least 1 repeat", p.Repeats, p.Warmup)
	case p.Timeout <= 0:
		return fmt.Errorf("ncclrun: timeout %v: want a positive timeout", p.Timeout)
	}
	for _, c := range p.Collectives {
		if !slices.Contains(Collectives, c) {
			return fmt.Errorf("ncclrun: collective %q: want one of allreduce, allgather, reducescatter, alltoall", c)
		}
	}
	for _, m := range p.Modes {
		if m != Eager && m != Graph {
			return fmt.Errorf("ncclrun: mode %q: want eager or graph", m)
		}
	}
	for _, s := range p.Sizes {
		if s.Bytes < ElemBytes || s.Bytes > 1<<34 {
			return fmt.Errorf("ncclrun: size %d B: want 2 B to 16 GiB", s.Bytes)
		}
	}
	return nil
}

// Point is one measurement of a sweep at a rank count.
type Point struct {
	Collective Collective
	Size       Size  // as planned
	Bytes      int64 // nccl-tests size(B) after rounding to the rank count
	Count      int64 // elements: nccl-tests' count column (Bytes / 2)
	Iters      int   // collectives per timed batch
}

// Shape returns the bytes and element count a collective moves for a
// planned size at ranks ranks (nccl-tests' rounding), 0 when the size is
// too small to give every rank an element.
func Shape(c Collective, bytes int64, ranks int) (eff, count int64) {
	count = bytes / ElemBytes
	if c != AllReduce {
		count = count / int64(ranks) * int64(ranks)
	}
	return count * ElemBytes, count
}

// Iters is the collectives per timed batch: enough that a batch of small
// messages lasts well over the event resolution, few for large ones. It
// depends on the size alone, so that every rank runs the same sequence.
func Iters(bytes int64) int {
	switch {
	case bytes <= 1<<20:
		return 20
	case bytes <= 16<<20:
		return 10
	case bytes <= 128<<20:
		return 4
	}
	return 2
}

// Points lists the measurements of p at ranks ranks, in sweep order
// (collective, then size); sizes that round to nothing are left out.
func (p Plan) Points(ranks int) []Point {
	var out []Point
	for _, c := range p.Collectives {
		for _, s := range p.Sizes {
			eff, count := Shape(c, s.Bytes, ranks)
			if count == 0 {
				continue
			}
			out = append(out, Point{Collective: c, Size: s, Bytes: eff, Count: count, Iters: Iters(eff)})
		}
	}
	return out
}

// BusFactor is nccl-tests' busbw / algbw for a collective at n ranks
// (doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather, reduce-scatter
// and all-to-all (n-1)/n.
func BusFactor(c Collective, n int) float64 {
	f := float64(n-1) / float64(n)
	if c == AllReduce {
		return 2 * f
	}
	return f
}

// InPlaceOK says whether NCCL runs c in place (all-to-all is grouped
// send/recv into another buffer).
func InPlaceOK(c Collective) bool { return c != AllToAll }
