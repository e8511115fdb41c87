// Package campaign is `moecast calib gpu`: the plan of what to measure on
// the visible GPU, the timing, and the calibration file it writes (schema 1,
// docs/calibration.md) with its provenance.
//
// What it measures, each inside captured CUDA graphs as the engines run
// them (median of gpu.ReplayRule after warm-up, with the fastest and slowest
// replay as the spread):
//   - copy: device-to-device copy bandwidth (kernels/gpu moecast_copy over
//     2 GiB, read + write counted);
//   - overhead: a kernel that does nothing, launched eagerly back to back
//     from the host and replayed from a graph (the gap between consecutive
//     kernels of a replayed graph);
//   - moe: the whole routed-expert layer as vLLM's fused_marlin_moe runs
//     it, one graph per call: router top-k, moe_align on the device, the
//     W4A16 gate_up GEMM, silu_and_mul, the down GEMM and the weighted
//     moe_sum (kernels/gpu glue.cu and w4a16.cu), at the shipped int4
//     models' expert shapes (Kimi-K2.5: 384 experts, top-8, hidden 7168,
//     expert width 2048, group 32) for expert TP8 and EP8, over decode and
//     prefill token counts, uniform routing from seeds, weights streamed:
//     routings rotated until the weights they touch total 512 MiB (8x the
//     H200's L2), so every call reads HBM as a 61-layer step does; each
//     kernel is also timed alone, and the layer hot (weights not rotated);
//     the table's latency is the layer without the router top-k (sim
//     prices that apart), the whole layer is in the report;
//   - moe_fp8: the block-fp8 layer (moe_align, per-token-group fp8
//     quantisation, kernels/gpu fp8moe.cu's grouped GEMMs, silu_and_mul,
//     moe_sum) at DeepSeek-V3/R1, Qwen3-235B and GLM-5 shapes, TP and EP
//     splits, 1-16k tokens (moefp8.go);
//   - moe_mxfp4: gpt-oss's MXFP4 layer (the W4A16 kernel's MXFP4 mode and
//     the clamped SwiGLU) at gpt-oss-120b/20b shapes (moemxfp4.go);
//   - elementwise: RMSNorm, residual add and silu_and_mul at decode sizes
//     (1 to 512 tokens), L2-warm.
//   - attention: GQA decode attention and the whole MLA decode module
//     (attention.go).
//   - prefill: causal attention of one chunk against its cached prefix
//     (kernels/gpu attention.cu moecast_prefill_*): GQA at every shipped
//     per-GPU head split, gpt-oss's sliding window, MLA's un-absorbed
//     q192/v128; chunks 256-16k, prefixes 0-128k, paged caches rotated
//     (prefill.go).
//   - gemm: the shipped models' dense projections (attention, dense MLP,
//     shared expert, router, lm_head) at TP 1-8 through cuBLASLt loaded at
//     run time, bf16 and fp8-b128, decode and prefill m, weights streamed
//     (gemm.go).
//   - comm: NCCL all-reduce, all-gather, reduce-scatter and all-to-all
//     (comm/ncclrun) on --gpus N GPUs of this process or one GPU per
//     process under torchrun/srun/mpirun (internal/rendezvous; rank 0
//     writes the file), eager and in graphs, every result checked; one
//     collective table per collective and mode with two or more ranks, a
//     check and no table with one (comm.go).
//
// The MoE rows are a calibration table (op moe, int4_wo, uniform), the
// small kernels an elementwise table; copy bandwidth and launch costs have
// no table in schema 1 and go into the file's provenance (method) and the
// command's report. Each measurement is
// an Op (op.go) in registry; what the issue asks for and no op measures yet
// is in notMeasured.
package campaign

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/moecast/moecast/kernels"
)

// Op names for Options.Ops.
const (
	opCopy     = "copy"
	opOverhead = "overhead"
	opMoE      = "moe"
)

// registry is every op, in the order a campaign runs them.
var registry = []Op{copyOp{}, overheadOp{}, moeOp{}, moeFP8Op{}, moeMXFP4Op{}, elementwiseOp{}, attentionOp{}, prefillOp{}, gemmOp{}, commOp{}}

// Ops are the names of registry's ops, in order.
var Ops = opNames()

func opNames() []string {
	var out []string
	for _, op := range registry {
		out = append(out, op.Name())
	}
	return out
}

// notMeasured names what issue 13's campaign covers and no op measures
// yet, by --ops name; `calib gpu` prints it and the file's provenance says
// it. An op's file removes its entry when it lands.
var notMeasured = map[string]string{}

// NotMeasuredList is notMeasured's sentences, sorted.
func NotMeasuredList() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(notMeasured)) {
		out = append(out, notMeasured[k])
	}
	return out
}

// Options configure a campaign.
type Options struct {
	Quick bool     // fewer token counts (at most a minute on an H200)
	Ops   []string // a subset of Ops; empty: all
	GPUs  int      // GPUs to use (the comm op); 0 or 1: one
	// GPU is the preset the file is for ("h200-sxm"); empty: the preset
	// whose label names the device.
	GPU      string
	Date     string // YYYY-MM-DD; empty: today (UTC)
	Command  string // the command line, for the provenance
	Version  string // moecast's version and commit
	Progress io.Writer
	Comm     CommOptions // the comm op (comm.go)
}

// moeModel is a routed-expert layer of a shipped model.
type moeModel struct {
	Name                         string
	Experts, TopK, Hidden, Inter int
	Group                        int // int4 group size
}

// kimiK25 is Kimi-K2.5's expert layer (compressed-tensors W4A16, group 32).
var kimiK25 = moeModel{Name: "kimi-k2.5", Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048, Group: 32}

// Split is one GPU's share of a MoE layer: experts cut MoETP ways along
// their width and spread over EP ranks.
type Split struct{ MoETP, EP int }

// Splits are the per-GPU slices the campaign measures (8-GPU boxes: expert
// TP8 and EP8).
var Splits = []Split{{MoETP: 8, EP: 1}, {MoETP: 1, EP: 8}}

// Shape is one W4A16 GEMM of the layer: N x K weights.
type Shape struct{ N, K int }

// GateUp is the fused gate and up projection of one GPU's slice.
func (m moeModel) GateUp(s Split) Shape { return Shape{N: 2 * m.Inter / s.MoETP, K: m.Hidden} }

// Down is the down projection of one GPU's slice.
func (m moeModel) Down(s Split) Shape { return Shape{N: m.Hidden, K: m.Inter / s.MoETP} }

// LocalExperts is the experts one EP rank holds.
func (m moeModel) LocalExperts(s Split) int { return m.Experts / s.EP }

// MoEPoint is one measured MoE layer.
type MoEPoint struct {
	Model  moeModel
	Split  Split
	Tokens int
}

// layer names the point's layer and split ("model tpN epM").
func (p MoEPoint) layer() string {
	return fmt.Sprintf("%s tp%d ep%d", p.Model.Name, p.Split.MoETP, p.Split.EP)
}

// local is the experts the measured EP rank holds; 0 without EP (all).
func (p MoEPoint) local() int {
	if p.Split.EP > 1 {
		return p.Model.LocalExperts(p.Split)
	}
	return 0
}

// Token counts: decode batches and prefill chunks.
var (
	fullTokens  = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}
	quickTokens = []int{1, 8, 64, 512, 4096}
)

// Tokens is the token counts under o.
func (o Options) Tokens() []int {
	if o.Quick {
		return quickTokens
	}
	return fullTokens
}

// Plan is the ops a campaign runs, in order, and their steps.
type Plan struct {
	Ops   []Op
	steps int
}

// Steps is the number of timed measurements (for progress).
func (p *Plan) Steps() int { return p.steps }

// Has says whether the plan runs the op named name.
func (p *Plan) Has(name string) bool {
	return slices.ContainsFunc(p.Ops, func(op Op) bool { return op.Name() == name })
}

// NewPlan makes the plan for o, or says what is wrong with o.
func NewPlan(o Options) (_ *Plan, err error) {
	defer asInput(&err)
	if o.GPUs < 0 {
		return nil, fmt.Errorf("--gpus %d: want 1 or more", o.GPUs)
	}
	// The file's options, checked now rather than after the campaign.
	if _, err := o.date(time.Now()); err != nil {
		return nil, err
	}
	if _, ok := kernels.LookupGPU(o.GPU); o.GPU != "" && !ok {
		return nil, fmt.Errorf("--gpu %q: not a GPU preset (%s)", o.GPU, strings.Join(kernels.GPUNames(), ", "))
	}
	want := map[string]bool{}
	if o.multiProcess() && len(o.Ops) == 0 {
		want[opComm] = true // under a launcher, the default is the one multi-process op
	}
	for _, name := range o.Ops {
		if !slices.Contains(Ops, name) {
			if _, later := notMeasured[name]; later {
				return nil, fmt.Errorf("--ops %s: not measured yet (%s)", name, notMeasured[name])
			}
			return nil, fmt.Errorf("--ops %q: want some of %s", name, strings.Join(Ops, ", "))
		}
		want[name] = true
	}
	p := &Plan{}
	tables := false
	for _, op := range registry {
		if len(want) > 0 && !want[op.Name()] {
			continue
		}
		n, err := op.Steps(o)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		p.Ops = append(p.Ops, op)
		p.steps += n
		tables = tables || op.Tables()
	}
	if o.GPUs > 1 && !p.Has(opComm) {
		return nil, fmt.Errorf("--gpus %d: only the comm op uses several GPUs, and it is not in the plan", o.GPUs)
	}
	if o.multiProcess() {
		for _, op := range p.Ops {
			if op.Name() != opComm {
				return nil, fmt.Errorf("--ops %s under %s (%d ranks): only comm runs in several processes; run the other ops in one process", op.Name(), o.Comm.Ranks.Launcher, o.Comm.Ranks.World)
			}
		}
	}
	if !tables {
		var names []string
		for _, op := range registry {
			if op.Tables() {
				names = append(names, op.Name())
			}
		}
		return nil, fmt.Errorf("--ops %s: the calibration file needs a table: include one of %s", strings.Join(o.Ops, ","), strings.Join(names, ", "))
	}
	return p, nil
}

// Date is o.Date or today's date (UTC); o.Date must be YYYY-MM-DD.
func (o Options) date(now time.Time) (string, error) {
	if o.Date == "" {
		return now.UTC().Format("2006-01-02"), nil
	}
	if _, err := time.Parse("2006-01-02", o.Date); err != nil {
		return "", fmt.Errorf("--date %q: want YYYY-MM-DD", o.Date)
	}
	return o.Date, nil
}
