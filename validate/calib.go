package validate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/trace"
)

// This file derives calibration tables (docs/calibration.md, schema 1) from
// the kernels of a trace's prefill, mixed and decode steps, as Compare mapped them to the
// model's ops: op-level measurements the user already has, never the step
// time (the step is what the tables are then checked against).
//
//   - gemm: each GEMM op that got kernels of its own (not pooled) gives a
//     row n, k, m at the op's per-rank shape (m: the step's combined
//     tokens), latency = the mean time per occurrence of its kernels;
//     kernels pooled over GEMM ops of several shapes are split over them in
//     proportion to their predicted times;
//   - moe: the MoE layer at its token count, latency = the step's MoE
//     kernel time (expert GEMMs, routing, glue) per MoE layer, as the
//     perf database's fused-MoE layer points measure the whole layer;
//     distribution "uniform" (the sim's routing model; a served step's
//     routing is the model's own, not a benchmark's);
//   - gqa: decode attention per layer at the step's batch and context (the
//     context the comparison used), heads and KV heads per GPU;
//   - prefill: a prefill step's attention per layer and chunk at its
//     mean chunk and mean prefix per chunk (keys per chunk less the chunk),
//     v_head_dim = head_dim (GQA), window the model's when every layer
//     slides, else none;
//   - a mixed step's attention: its kernels serve the chunks' and the
//     decodes' attention together (one varlen kernel in vLLM's and SGLang's
//     backends), so the measured time is split over the two in proportion
//     to their predicted times (as pooled GEMMs are) and gives one prefill
//     row and one gqa row at the step's chunks and decodes;
//   - unmapped: the step's kernels that map to no predicted op, less the
//     predicted ops without kernels (their work is in that glue), per
//     layer at the step's tokens: sim then prices them, and the traced
//     step is reproduced;
//   - allreduce, allgather, reducescatter: the mean time per occurrence at
//     the op's ranks and message bytes (including any wait for the slowest
//     rank, which is what a step sees), impl "nccl" for NCCL kernels, else
//     the serving engine's name with mode graph or eager.
//
//   - elementwise: one row per byte size of the ops sim prices as small
//     memory-bound kernels (norms, rotary, KV-cache writes, activations,
//     the router's top-k, the sampler's passes), keyed by bytes, not by op label: sim asks
//     kernels.Costs.Elementwise for bytes alone. The bytes are the
//     predicted op's bytes per kernel at the model's known shapes (the
//     trace records no shapes for these kernels); the latency is the
//     op's measured time per predicted kernel (MeasuredTotal /
//     PredictedCount), so where the engine runs more kernels for the op
//     than moecast prices (vLLM's routing: several kernels per layer for
//     the one top-k kernel) their time is folded into it. A pooled op
//     whose predicted ops move different bytes (input and post-attention
//     norms with the final norm) gives each size the op's mean. The MoE
//     row then leaves the top-k out (sim prices it apart).
//
// The same point measured in several steps or ranks is averaged. MLA
// modules and all-to-all get no table (the MLA module's projections and
// attention are split over several trace kernels that this mapping does
// not reassemble).

// FromTraceOptions configure Calibration.
type FromTraceOptions struct {
	// Date (YYYY-MM-DD) is used when no trace records its base time
	// (baseTimeNanoseconds).
	Date string
	// Command is the command line, for the provenance.
	Command string
	// Metas are the traces' top-level fields, by file (engine version,
	// deviceProperties, base time); a missing file is allowed.
	// Calibration adds those of the report's ranks that carry their Meta.
	Metas map[string]*trace.Meta
}

var (
	reGEMMShape = regexp.MustCompile(`^M=(\d+) N=(\d+) K=(\d+) (\S+)$`)
	reMoEShape  = regexp.MustCompile(`^tokens=(\d+) .* (\S+) ep=(\d+) moe_tp=(\d+)$`)
	reGQAShape  = regexp.MustCompile(`^batch=(\d+) ctx=(\d+) q_heads=(\d+) \(x(\d+) queries\) kv_heads=(\d+) dim=(\d+) kv=([a-z0-9_]+)`)
	reCollShape = regexp.MustCompile(`^(\d+) ranks, (\S+)$`)
	rePreShape  = regexp.MustCompile(`^(\d+) chunks, (\d+) tokens \(mean \d+\), (\d+) keys, \S+ causal pairs, q_heads=(\d+) kv_heads=(\d+) dim=(\d+) kv=([a-z0-9_]+)$`)
	reTopKOp    = regexp.MustCompile(`(?i)top-?k`)
)

// mixedAttention reports whether o pools a mixed step's attention ops:
// prefill and decode (GQA) attention, each op's prediction known.
func mixedAttention(o *OpCompare) bool {
	if len(o.Shapes) < 2 || len(o.PredictedEach) != len(o.Shapes) || len(o.OccurrencesEach) != len(o.Shapes) || o.PredictedTotal <= 0 {
		return false
	}
	pre, gqa := 0, 0
	for i, sh := range o.Shapes {
		switch {
		case o.OccurrencesEach[i] <= 0:
			return false
		case rePreShape.MatchString(sh):
			pre++
		case reGQAShape.MatchString(sh):
			gqa++
		default:
			return false
		}
	}
	return pre > 0 && gqa > 0
}

// smallKernelOp reports whether sim prices the op as elementwise kernels
// (kernels.Costs.Elementwise): the elementwise category's ops and the MoE
// router's top-k.
func smallKernelOp(o *OpCompare) bool {
	return o.Category == cost.Elementwise || o.Category == cost.Sampling || (o.Category == cost.MoE && reTopKOp.MatchString(o.Op))
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// point accumulates the measurements of one table row.
type point struct {
	axes  []float64
	sum   float64 // latency_us
	n     int
	steps []string
}

type tableAcc struct {
	t      calib.Table
	points map[string]*point
	order  []string
}

func (a *tableAcc) add(axes []float64, us float64, step string) {
	key := fmt.Sprint(axes)
	p := a.points[key]
	if p == nil {
		p = &point{axes: axes}
		a.points[key] = p
		a.order = append(a.order, key)
	}
	p.sum += us
	p.n++
	if !contains(p.steps, step) {
		p.steps = append(p.steps, step)
	}
}

// Calibration builds a calibration file from the comparison's steps. It
// fails when no step gave a row.
func Calibration(cfg *sim.Config, rep *Report, opts FromTraceOptions) (*calib.File, error) {
	if rep.OtherGPU != "" {
		// Tables carry the scenario's GPU in their provenance: written,
		// they would price this GPU with another's kernel times.
		return nil, fmt.Errorf("the trace was %s: its kernel times would calibrate another GPU; give a scenario of the GPU the trace was recorded on", rep.OtherGPU)
	}
	accs := map[string]*tableAcc{}
	var names []string
	acc := func(name, op string, keys calib.Keys, cols ...string) *tableAcc {
		a := accs[name]
		if a == nil {
			a = &tableAcc{t: calib.Table{Name: name, Op: op, Keys: keys, Columns: cols}, points: map[string]*point{}}
			accs[name] = a
			names = append(names, name)
		}
		return a
	}
	m := cfg.Model
	engine := ""
	var stepsUsed []string
	var glue []pendingGlue
	// addPrefill writes a prefill attention row from an op of rePreShape
	// (x) at us per occurrence: per chunk at the mean chunk and keys per
	// chunk
	addPrefill := func(x []string, us float64, id string) {
		chunks := atoi(x[1])
		if chunks <= 0 {
			return
		}
		chunk := math.Round(float64(atoi(x[2])) / float64(chunks))
		kvLen := math.Round(float64(atoi(x[3])) / float64(chunks))
		hd, win := atoi(x[6]), prefillWindow(m)
		name := "prefill.trace." + x[7] + ".d" + x[6]
		if win > 0 {
			name += ".w" + strconv.Itoa(win)
		}
		acc(name, "prefill", calib.Keys{KVDtype: x[7], HeadDim: hd, VHeadDim: hd, Window: win},
			"heads", "kv_heads", "chunk", "prefix", "latency_us").
			add([]float64{float64(atoi(x[4])), float64(atoi(x[5])), chunk, kvLen - chunk}, us/float64(chunks), id)
	}
	// addGQA writes a decode attention row from an op of reGQAShape (g)
	// at us per occurrence (layer)
	addGQA := func(g []string, us float64, id string) {
		heads := atoi(g[3]) * atoi(g[4])
		acc("gqa.trace."+g[7]+".d"+g[6], "gqa", calib.Keys{KVDtype: g[7], HeadDim: atoi(g[6])},
			"heads", "kv_heads", "batch", "kv_len", "latency_us").
			add([]float64{float64(heads), float64(atoi(g[5])), float64(atoi(g[1])), float64(atoi(g[2]))}, us, id)
	}
	for i := range rep.Steps {
		st := &rep.Steps[i]
		if engine == "" {
			engine = engineOf(st.Label, opts.Metas[st.File])
		}
		id := fmt.Sprintf("%s#%d", st.File, st.Index)
		stepsUsed = append(stepsUsed, fmt.Sprintf("%s step %d %q (%s, batch %d, context %d, tokens %d)", st.File, st.Index, st.Label, st.Kind, st.Batch, st.Context, st.Tokens))
		// the kernels that map to no modelled op, per layer at the step's
		// tokens, less the ops the model predicts but the trace shows no
		// kernel of (their work is in that glue: an eager model's rotary
		// as multiplies, its KV write as a copy): the calibrated model then
		// reproduces the traced step
		// (priced below, once the elementwise rows of every step are in:
		// the calibrated model prices those ops from them)
		if st.Tokens > 0 && m.Layers > 0 {
			glue = append(glue, pendingGlue{id: id, tokens: st.Tokens, u: st.Unmapped(), missing: st.Missing})
		}
		var moeTime unit.Seconds
		var moeOp *OpCompare
		for j := range st.Ops {
			o := &st.Ops[j]
			if o.Count == 0 || o.Occurrences <= 0 || o.Op == sim.UnmappedOp {
				continue
			}
			per := float64(o.MeasuredTotal.Us()) / o.Occurrences
			switch {
			case smallKernelOp(o):
				// the op's measured time per predicted kernel, at the bytes
				// each of its predicted ops moves per kernel
				if o.PredictedCount <= 0 {
					continue
				}
				us := float64(o.MeasuredTotal.Us()) / o.PredictedCount
				a := acc("elementwise.trace", "elementwise", calib.Keys{}, "bytes", "latency_us")
				var done []unit.Bytes
				for _, b := range o.Bytes {
					if b > 0 && !slices.Contains(done, b) {
						a.add([]float64{float64(b)}, us, id)
						done = append(done, b)
					}
				}
			case o.Category == cost.GEMM && len(o.Shapes) == 1:
				g := reGEMMShape.FindStringSubmatch(o.Shapes[0])
				if g == nil {
					continue
				}
				// per occurrence of the op (its measured occurrences)
				acc("gemm.trace."+g[4], "gemm", calib.Keys{Dtype: g[4]}, "n", "k", "m", "latency_us").
					add([]float64{float64(atoi(g[2])), float64(atoi(g[3])), float64(atoi(g[1]))}, o.Measured.Us(), id)
			case o.Category == cost.GEMM && len(o.PredictedEach) == len(o.Shapes) && o.PredictedTotal > 0:
				// kernels pooled over GEMM ops of several shapes (one
				// kernel name serving them): the measured total split in
				// proportion to each op's predicted share
				for si, sh := range o.Shapes {
					g := reGEMMShape.FindStringSubmatch(sh)
					if g == nil || o.OccurrencesEach[si] <= 0 {
						continue
					}
					share := float64(o.PredictedEach[si]) * o.OccurrencesEach[si] / float64(o.PredictedTotal)
					us := float64(o.MeasuredTotal.Us()) * share / o.OccurrencesEach[si]
					acc("gemm.trace."+g[4], "gemm", calib.Keys{Dtype: g[4]}, "n", "k", "m", "latency_us").
						add([]float64{float64(atoi(g[2])), float64(atoi(g[3])), float64(atoi(g[1]))}, us, id)
				}
			case o.Category == cost.MoE:
				moeTime += o.MeasuredTotal
				for _, sh := range o.Shapes {
					if reMoEShape.MatchString(sh) {
						moeOp = o
					}
				}
			case o.Category == cost.Attention && allMatch(o.Shapes, rePreShape):
				// prefill attention alone (a prefill step)
				if len(o.Shapes) == 1 {
					addPrefill(rePreShape.FindStringSubmatch(o.Shapes[0]), per, id)
				}
			case o.Category == cost.Attention && mixedAttention(o):
				// a mixed step: the chunks' and the decodes' attention
				// (one kernel serves both in vLLM's and SGLang's backends),
				// the measured time split over them in proportion to their
				// predicted times, as pooled GEMMs are
				for si, sh := range o.Shapes {
					share := float64(o.PredictedEach[si]) * o.OccurrencesEach[si] / float64(o.PredictedTotal)
					us := float64(o.MeasuredTotal.Us()) * share / o.OccurrencesEach[si]
					if x := rePreShape.FindStringSubmatch(sh); x != nil {
						addPrefill(x, us, id)
					} else {
						addGQA(reGQAShape.FindStringSubmatch(sh), us, id)
					}
				}
			case o.Category == cost.Attention:
				var g []string
				same := true
				for _, sh := range o.Shapes {
					x := reGQAShape.FindStringSubmatch(sh)
					if x == nil || (g != nil && x[0] != g[0]) {
						same = false
						break
					}
					g = x
				}
				if !same || g == nil {
					continue
				}
				addGQA(g, per, id)
			case o.Category == cost.AllReduce || o.Category == cost.AllGather || o.Category == cost.ReduceScatter:
				var c []string
				same := true
				for _, sh := range o.Shapes {
					x := reCollShape.FindStringSubmatch(sh)
					if x == nil || (c != nil && x[0] != c[0]) {
						same = false
						break
					}
					c = x
				}
				if !same || c == nil {
					continue
				}
				b, err := unit.ParseBytes(c[2])
				if err != nil || b <= 0 {
					continue
				}
				impl, mode := collectiveImpl(st, o, engine, cfg.Graphs)
				op := strings.ReplaceAll(o.Category.String(), "_", "")
				name := op + ".trace." + impl
				if mode != "" {
					name += "." + mode
				}
				acc(name, op, calib.Keys{Impl: impl, Mode: mode}, "ranks", "bytes", "latency_us").
					add([]float64{float64(atoi(c[1])), math.Round(float64(b))}, o.Measured.Us(), id)
			}
		}
		if moeOp != nil && m.MoE.Experts > 0 {
			var x []string
			for _, sh := range moeOp.Shapes {
				if x = reMoEShape.FindStringSubmatch(sh); x != nil {
					break
				}
			}
			layers := moeOp.Occurrences
			quant := kernels.MoEQuant(m.Quant.RoutedExperts) // the name MoE table lookups match
			acc("moe.trace."+quant+".uniform", "moe", calib.Keys{Dtype: quant, Distribution: "uniform", Experts: m.MoE.Experts,
				TopK: m.MoE.TopK, Hidden: m.Hidden, Inter: m.MoE.Inter}, "moe_tp", "ep", "tokens", "latency_us").
				add([]float64{float64(atoi(x[4])), float64(atoi(x[3])), float64(atoi(x[1]))}, moeTime.Us()/layers, id)
		}
	}
	// the unmapped rows: each step's glue less its missing ops as the
	// written elementwise rows price them
	ew := elementwiseOf(accs["elementwise.trace"])
	for _, g := range glue {
		u := g.u
		for i := range g.missing {
			u -= missingCost(&g.missing[i], ew)
		}
		if u > 0 {
			acc("unmapped.trace", "unmapped", calib.Keys{}, "tokens", "latency_us").
				add([]float64{float64(g.tokens)}, u.Us()/float64(m.Layers), g.id)
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no calibration row: no GEMM, MoE, attention, elementwise or collective op of the model was found in the trace's steps")
	}
	f := &calib.File{Schema: calib.Schema, Provenance: provenance(cfg, rep, engine, stepsUsed, opts)}
	sort.Strings(names)
	for _, n := range names {
		a := accs[n]
		for _, k := range a.order {
			p := a.points[k]
			a.t.Rows = append(a.t.Rows, append(append([]float64{}, p.axes...), math.Round(p.sum/float64(p.n)*1e6)/1e6))
		}
		sort.SliceStable(a.t.Rows, func(i, j int) bool {
			for c := range a.t.Rows[i] {
				if a.t.Rows[i][c] != a.t.Rows[j][c] {
					return a.t.Rows[i][c] < a.t.Rows[j][c]
				}
			}
			return false
		})
		f.Tables = append(f.Tables, a.t)
	}
	return f, nil
}

// collectiveImpl is the table impl (and mode) of a collective op's
// kernels: "nccl" when NCCL kernels ran it, else the engine's own
// all-reduce measured as the engine runs it.
func collectiveImpl(st *Step, o *OpCompare, engine string, graphs bool) (impl, mode string) {
	for _, k := range o.Kernels {
		if strings.HasPrefix(k, "nccl") {
			return "nccl", ""
		}
	}
	impl = engine
	if impl != "sglang" {
		impl = "vllm"
	}
	mode = "eager"
	if graphs {
		mode = "graph"
	}
	return impl, mode
}

// engineOf names the serving engine from a step annotation or the trace's
// metadata: "vllm", "sglang" or "".
func engineOf(label string, m *trace.Meta) string {
	switch {
	case m != nil && m.VLLMVersion != "":
		return "vllm"
	case strings.HasPrefix(label, "execute_") || strings.Contains(label, "gpu_model_runner"):
		return "vllm"
	case strings.HasPrefix(label, "step["):
		return "sglang"
	}
	return ""
}

func provenance(cfg *sim.Config, rep *Report, engine string, steps []string, opts FromTraceOptions) calib.Provenance {
	fabric := cfg.Fabric.Name
	if cfg.GPUs <= 1 {
		fabric = "" // one GPU runs no collective: no fabric was measured
	}
	p := calib.Provenance{GPU: cfg.GPU.Name, GPUCount: cfg.GPUs, Fabric: fabric, Engine: engine,
		Command: opts.Command, Date: opts.Date, Launch: "eager", Cache: "unknown",
		Method: "kernel times of served steps in a torch.profiler trace (moecast validate's kernel-to-op mapping): " +
			"mean time per occurrence of the kernels mapped to each op; MoE: the step's MoE kernel time per MoE layer; " +
			"collectives include any wait for the slowest rank; cache as in serving",
		Source: "torch.profiler trace " + strings.Join(rep.Files, ", ") + "; steps: " + strings.Join(steps, "; ")}
	if cfg.Graphs {
		p.Launch = "cuda-graph"
	}
	fromTrace := false // the date is the trace's base time
	for _, f := range rep.Files {
		m := opts.Metas[f]
		if m == nil {
			continue
		}
		if len(m.DeviceProperties) > 0 && p.GPULabel == "" {
			p.GPULabel = m.DeviceProperties[0].Name
		}
		if m.VLLMVersion != "" && p.EngineVersion == "" {
			p.EngineVersion = m.VLLMVersion
		}
		if p.CUDA == "" {
			switch {
			case m.CUDARuntimeVersion != "":
				p.CUDA = "CUDA runtime " + m.CUDARuntimeVersion.String()
			case m.HIPRuntimeVersion != "":
				p.CUDA = "HIP runtime " + m.HIPRuntimeVersion.String()
			}
		}
		if m.BaseTimeNanoseconds > 0 && !fromTrace {
			p.Date, fromTrace = time.Unix(0, m.BaseTimeNanoseconds).UTC().Format("2006-01-02"), true
		}
	}
	if p.Date == "" {
		p.Date = "unknown"
	}
	return p
}

// allMatch reports whether every string matches re (false for none).
func allMatch(ss []string, re *regexp.Regexp) bool {
	for _, s := range ss {
		if !re.MatchString(s) {
			return false
		}
	}
	return len(ss) > 0
}

// prefillWindow is the sliding window a traced prefill attention row is
// keyed by: the model's when every layer attends it, else 0 (layers that
// alternate, as gpt-oss's do, run in the same kernels; the row, their
// mean, then answers the full-attention layers).
func prefillWindow(m *model.Config) int {
	if m.Attn.SlidingWindow > 0 && m.Attn.SlidingLayers >= m.Layers {
		return m.Attn.SlidingWindow
	}
	return 0
}

// pendingGlue is a step's unmapped kernel time and the predicted ops the
// trace shows no kernel of, held until the elementwise rows of every step
// are in.
type pendingGlue struct {
	id      string
	tokens  int
	u       unit.Seconds
	missing []OpCompare
}

// elementwiseOf is the elementwise table the accumulated rows make, as
// the written file will hold it (row means rounded as written); nil
// without rows.
func elementwiseOf(a *tableAcc) *kernels.ElementwiseTable {
	if a == nil {
		return nil
	}
	pts := make([]kernels.ElementwisePoint, 0, len(a.order))
	for i, k := range a.order {
		p := a.points[k]
		us := math.Round(p.sum/float64(p.n)*1e6) / 1e6
		pts = append(pts, kernels.ElementwisePoint{Bytes: unit.Bytes(p.axes[0]), Latency: unit.Seconds(us * 1e-6), Row: i + 1})
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].Bytes < pts[j].Bytes })
	t, err := kernels.NewElementwiseTable("elementwise.trace", pts)
	if err != nil {
		return nil
	}
	return t
}

// missingCost is what the calibrated model will price a predicted op the
// trace shows no kernel of: a small-kernel op by the written elementwise
// rows at its bytes per kernel (where they answer), anything else as the
// comparison priced it. Subtracting it from the step's glue (the eager
// model's rotary as multiplies, its KV write as a copy) keeps the op's
// work from being counted twice.
func missingCost(o *OpCompare, ew *kernels.ElementwiseTable) unit.Seconds {
	if ew == nil || !smallKernelOp(o) || o.Occurrences <= 0 || len(o.Bytes) != len(o.OccurrencesEach) || len(o.PredictedEach) != len(o.Bytes) {
		return o.PredictedTotal
	}
	var t unit.Seconds
	for i, b := range o.Bytes {
		if e, ok := ew.Lookup(b); ok {
			t += e.Time * unit.Seconds(o.PredictedCount*o.OccurrencesEach[i]/o.Occurrences)
		} else {
			t += o.PredictedEach[i] * unit.Seconds(o.OccurrencesEach[i])
		}
	}
	return t
}
