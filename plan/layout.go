package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// DefaultNodeGPUs is the GPUs of one node when GPUOption.NodeGPUs is 0:
// the HGX and RTX PRO 6000 servers the presets describe hold 8.
const DefaultNodeGPUs = 8

// GPUOption is one GPU type a deployment may use, with the node it comes in.
type GPUOption struct {
	GPU    kernels.GPU
	Fabric comm.Fabric // the node's interconnect
	// NodeGPUs is the GPUs of one node (0: DefaultNodeGPUs).
	NodeGPUs int
	// NIC joins the nodes (one per GPU). With it, and a Space.MaxGPUs above
	// the node, a replica may span nodes: whole nodes, its tensor-parallel
	// groups inside one (or attention data-parallel), its experts spread
	// over all its GPUs (wide EP), collectives across nodes priced on the
	// NIC (sim.Config.NIC). The zero Link: one node per replica, except
	// that a Fabric joining more GPUs than the node (NVL72) carries
	// replicas of whole nodes up to its Fabric.NodeGPUs.
	NIC comm.Link
	// KernelTables and CommTables are this GPU's calibration (nil:
	// roofline), as in sim.Config.
	KernelTables kernels.Lookup
	CommTables   comm.Lookup
}

func (g *GPUOption) nodeGPUs() int {
	if g.NodeGPUs > 0 {
		return g.NodeGPUs
	}
	return DefaultNodeGPUs
}

// Workload is the request shape the plan is for.
type Workload struct {
	Input, Output int // tokens per request
}

// FitContext is the context a sequence reaches at its last token.
func (w Workload) FitContext() int { return w.Input + w.Output }

// DecodeContext is the mean context over a request's decode steps.
func (w Workload) DecodeContext() int { return w.Input + (w.Output+1)/2 }

func (w Workload) validate() error {
	if w.Input < 0 || w.Output < 1 {
		return fmt.Errorf("workload: want input >= 0 and output >= 1 tokens, got %d and %d", w.Input, w.Output)
	}
	if w.FitContext() > sim.MaxContext {
		return fmt.Errorf("workload: input + output = %d tokens exceeds the limit of %d", w.FitContext(), sim.MaxContext)
	}
	return nil
}

// Space is what Enumerate searches.
type Space struct {
	Model *model.Config
	GPUs  []GPUOption
	// MaxGPUs caps the GPUs of one replica (with the node size) and, for a
	// target, the GPUs of all replicas together; 0 means the node size and
	// no cap on the total.
	MaxGPUs  int
	KVCaches []dtype.KVCache // empty: bf16 only
	Specs    []sim.Spec      // empty: no speculative decoding only
	// Base holds the runtime settings every candidate shares (Graphs,
	// AllReduce, GPUMemoryUtilization, Efficiency), taken as given (Graphs
	// false is eager launch); its model, GPU, fabric, GPUs, layout, KV
	// cache, spec and tables are replaced. A zero GPUMemoryUtilization
	// means the engine's default for each candidate's GPU and layout
	// (serve.DefaultMemFraction: vLLM 0.90, SGLang's mem_fraction_static).
	Base sim.Config
	// Engine is the preferred engine (runtime.engine): a candidate's
	// all-reduce policy is the one of the engine that runs it,
	// Engine.Pick(Engine) of its layout's set.
	Engine serve.Engine
	// EngineVersion is the engine's version (runtime.engine_version; "" =
	// the newest): the defaults that follow it, SGLang's
	// mem_fraction_static among them (serve.FractionInputs.Version).
	EngineVersion string
	Workload      Workload
	// ProfileTerms, when set, completes a candidate's memory-profile run
	// (Config.Profile, the engine's defaults) for the engine that runs it
	// with the terms that follow the engine's version, as a scenario's own
	// profile has them (scenarios: the sampler's top-k/top-p path, the
	// all-reduce fusion and indexer workspaces).
	ProfileTerms func(e serve.Engine, c *sim.Config)
}

// Engine is the set of engines that run a layout as enumerated: bit e for
// serve.Engine e (serve's engine table says which engines run a layout).
type Engine uint8

// engineOf is the set of the engines that run layout l.
func engineOf(l model.Layout) Engine {
	var s Engine
	for _, e := range serve.Engines() {
		if e.Runs(l) {
			s |= 1 << e
		}
	}
	return s
}

// Has reports whether e is in the set.
func (s Engine) Has(e serve.Engine) bool { return e < 8 && s&(1<<e) != 0 }

// Pick is prefer if it is in the set, else the set's first engine in table
// order (prefer when the set is empty).
func (s Engine) Pick(prefer serve.Engine) serve.Engine {
	if s.Has(prefer) {
		return prefer
	}
	for _, e := range serve.Engines() {
		if s.Has(e) {
			return e
		}
	}
	return prefer
}

func (s Engine) String() string {
	var out []string
	for _, e := range serve.Engines() {
		if s.Has(e) {
			out = append(out, e.String())
		}
	}
	return strings.Join(out, "+")
}

// Candidate is one deployment sim.New accepted: a GPU type, a replica's
// GPUs and layout, KV-cache dtype and speculative decoding.
type Candidate struct {
	Option int // index into Space.GPUs
	Config sim.Config
	Sim    *sim.Sim
	Engine Engine
	// MaxConcurrency is the most sequences of Workload.FitContext tokens
	// that fit in memory (0: not even one).
	MaxConcurrency int
	Memory         sim.Memory // at one sequence of FitContext tokens
}

// GPUs is the GPUs of one replica.
func (c *Candidate) GPUs() int { return c.Config.GPUs }

// Label names the candidate, e.g. "h200-sxm x8 TP8 EP8 kv bf16".
func (c *Candidate) Label() string { return label(&c.Config) }

func label(c *sim.Config) string {
	l := c.Layout
	var b strings.Builder
	fmt.Fprintf(&b, "%s x%d TP%d", c.GPU.Name, c.GPUs, l.TP)
	if l.DP > 1 {
		fmt.Fprintf(&b, " DP%d", l.DP)
	}
	if l.DPAttention {
		b.WriteString(" DPA")
	}
	if l.EP > 1 {
		fmt.Fprintf(&b, " EP%d", l.EP)
	}
	if g := c.Fabric.NodeGPUs; g > 0 && c.GPUs > g && c.NIC.BW > 0 {
		fmt.Fprintf(&b, " %d nodes %s", (c.GPUs+g-1)/g, c.NIC.Name)
	}
	fmt.Fprintf(&b, " kv %s", c.KVCache)
	if c.Spec.Active() {
		fmt.Fprintf(&b, " %s K%d", c.Spec.Method, c.Spec.DraftTokens)
	}
	return b.String()
}

// Rejection is a layout sim.New refused, with its reason.
type Rejection struct {
	Config sim.Config
	Reason string
}

// Label names the refused layout as Candidate.Label does.
func (r *Rejection) Label() string { return label(&r.Config) }

// ReasonCount is a distinct rejection or skip reason and how often it came.
type ReasonCount struct {
	Reason string
	Count  int
}

// countReasons groups reasons in order of first appearance.
func countReasons(reasons []string) []ReasonCount {
	idx := map[string]int{}
	var out []ReasonCount
	for _, r := range reasons {
		i, ok := idx[r]
		if !ok {
			i = len(out)
			idx[r] = i
			out = append(out, ReasonCount{Reason: r})
		}
		out[i].Count++
	}
	return out
}

// RejectionReasons counts the reasons of rs.
func RejectionReasons(rs []Rejection) []ReasonCount {
	s := make([]string, len(rs))
	for i := range rs {
		s[i] = rs[i].Reason
	}
	return countReasons(s)
}

// maxReplicaGPUs is the GPUs one replica of option g may use within a
// node.
func (s *Space) maxReplicaGPUs(g *GPUOption) int {
	n := g.nodeGPUs()
	if s.MaxGPUs > 0 && s.MaxGPUs < n {
		n = s.MaxGPUs
	}
	return min(n, sim.MaxRanks)
}

// replicaSizes lists the GPUs of one replica of option g: 1 to a node,
// then whole nodes (2, 3, ... nodes) up to MaxGPUs, joined by the NIC or,
// up to Fabric.NodeGPUs (an NVL72 rack), by the fabric itself.
func (s *Space) replicaSizes(g *GPUOption) []int {
	var out []int
	for n := 1; n <= s.maxReplicaGPUs(g); n++ {
		out = append(out, n)
	}
	node := g.nodeGPUs()
	if s.MaxGPUs <= node {
		return out
	}
	for n := 2 * node; n <= min(s.MaxGPUs, sim.MaxRanks); n += node {
		if g.NIC.BW > 0 || n <= g.Fabric.NodeGPUs {
			out = append(out, n)
		}
	}
	return out
}

// spansNodes keeps, of the layouts of a replica larger than a node, those
// worth spanning nodes for: the experts over all n GPUs (wide EP; without
// it the nodes are separate replicas), tensor-parallel groups inside a
// node unless attention is data-parallel.
func spansNodes(l model.Layout, n, node int) bool {
	return l.EP == n && (l.TP <= node || l.DPAttention)
}

func (s *Space) validate() error {
	if s.Model == nil {
		return errors.New("plan: no model")
	}
	if len(s.GPUs) == 0 {
		return errors.New("plan: no GPU types to search")
	}
	if s.MaxGPUs < 0 {
		return fmt.Errorf("plan: max GPUs must be > 0, got %d", s.MaxGPUs)
	}
	for i := range s.GPUs {
		if s.GPUs[i].NodeGPUs < 0 {
			return fmt.Errorf("plan: GPU %s: node GPUs must be >= 0, got %d", s.GPUs[i].GPU.Name, s.GPUs[i].NodeGPUs)
		}
	}
	return s.Workload.validate()
}

// layouts lists the layouts of n GPUs in the order the package doc gives.
func layouts(n int) []struct {
	l model.Layout
	e Engine
} {
	var out []struct {
		l model.Layout
		e Engine
	}
	add := func(l model.Layout) {
		if e := engineOf(l); e != 0 {
			out = append(out, struct {
				l model.Layout
				e Engine
			}{l, e})
		}
	}
	for tp := 1; tp <= n; tp++ {
		if n%tp != 0 {
			continue
		}
		dp := n / tp
		eps := []int{1}
		if n > 1 {
			eps = append(eps, n)
		}
		for _, ep := range eps {
			add(model.Layout{TP: tp, DP: dp, EP: ep})
		}
		if dp == 1 && tp > 1 {
			for _, ep := range eps {
				add(model.Layout{TP: tp, DP: 1, EP: ep, DPAttention: true})
			}
		}
	}
	return out
}

// Enumerate lists every deployment of s that sim.New accepts, in a fixed
// order (GPU option, replica GPUs ascending, layout as in the package doc,
// KV-cache dtype, spec), and the ones it refuses with sim's reason. It
// builds the sims on GOMAXPROCS goroutines; the result does not depend on
// their number.
func Enumerate(s *Space) ([]Candidate, []Rejection, error) { return enumerate(s, 0) }

func enumerate(s *Space, workers int) ([]Candidate, []Rejection, error) {
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	kvs := s.KVCaches
	if len(kvs) == 0 {
		kvs = []dtype.KVCache{dtype.KVBF16}
	}
	specs := s.Specs
	if len(specs) == 0 {
		specs = []sim.Spec{{Method: sim.SpecNone}}
	}
	type job struct {
		option int
		cfg    sim.Config
		engine Engine
	}
	var jobs []job
	for gi := range s.GPUs {
		g := &s.GPUs[gi]
		for _, n := range s.replicaSizes(g) {
			for _, lay := range layouts(n) {
				if n > g.nodeGPUs() && !spansNodes(lay.l, n, g.nodeGPUs()) {
					continue
				}
				for _, kv := range kvs {
					for _, sp := range specs {
						c := s.Base
						c.Model, c.GPU, c.Fabric, c.GPUs, c.Layout = s.Model, g.GPU, g.Fabric, n, lay.l
						c.KVCache, c.Spec = kv, sp
						c.KernelTables, c.CommTables = g.KernelTables, g.CommTables
						if n > g.nodeGPUs() && n > g.Fabric.NodeGPUs {
							// nodes joined by the NIC; within a fabric
							// that joins more GPUs than the option's
							// node (an NVL72 rack) NVLink carries it
							c.NIC = g.NIC
							c.Fabric.NodeGPUs = g.nodeGPUs()
						}
						c.AllReducePolicy = lay.e.Pick(s.Engine).Info().AllReduce
						c.Engine = lay.e.Pick(s.Engine).String()
						c.Profile = serve.MemoryProfile(lay.e.Pick(s.Engine), g.GPU.Label, g.GPU.Memory, 0, 0)
						if s.ProfileTerms != nil {
							s.ProfileTerms(lay.e.Pick(s.Engine), &c)
						}
						if c.GPUMemoryUtilization == 0 {
							// the engine's default share on this GPU
							// and layout (SGLang's mem_fraction_static
							// by GPU memory and TP; vLLM 0.90)
							e := lay.e.Pick(s.Engine)
							sc := serve.DefaultConfig(e, g.GPU.Label, g.GPU.Memory)
							sc.Spec = serve.SimSpec(sp)
							in := serve.FractionInputs{GPUMemory: g.GPU.Memory, TP: n, DP: 1, Version: s.EngineVersion, Vision: s.Model.Vision}
							if lay.l.DPAttention {
								in.DP = max(1, n/lay.l.AttentionTP())
							}
							c.GPUMemoryUtilization = serve.DefaultMemFraction(&sc, in)
						}
						jobs = append(jobs, job{gi, c, lay.e})
					}
				}
			}
		}
	}
	type built struct {
		cand   Candidate
		reason string
		err    error
	}
	out := make([]built, len(jobs))
	ctx := s.Workload.FitContext()
	build := func(i int) error {
		j := &jobs[i]
		sm, err := sim.New(j.cfg)
		if err != nil {
			out[i].reason = err.Error()
			return nil
		}
		pt, err := sm.Step(1, ctx)
		if err != nil {
			out[i].err = fmt.Errorf("plan: %s: memory at context %d: %w", label(&j.cfg), ctx, err)
			return nil
		}
		out[i].cand = Candidate{Option: j.option, Config: j.cfg, Sim: sm, Engine: j.engine,
			MaxConcurrency: pt.Memory.MaxBatch, Memory: pt.Memory}
		return nil
	}
	// A calibration table is read on its first lookup, once, and a lookup
	// of a table another worker is reading waits for it (kernels' deferred
	// tables). The jobs come GPU by GPU, so the workers started on the
	// same GPU's tables and one waited while the other read each (about a
	// third of the README plan's enumeration went to reading tables, and
	// half of that to waiting). The first job of each GPU option, engine,
	// KV-cache dtype and speculation, which read most of the tables the
	// others look up, run first, apart: workers read different tables at
	// once. Each job's result is its own, whichever worker runs it and
	// when; the error of the lowest index is returned, as in job order.
	type tableSet struct {
		option int
		engine string
		kv     dtype.KVCache
		spec   sim.SpecMethod
	}
	seen := map[tableSet]bool{}
	var first, rest []int
	for i := range jobs {
		c := &jobs[i].cfg
		if k := (tableSet{jobs[i].option, c.Engine, c.KVCache, c.Spec.Method}); !seen[k] {
			seen[k] = true
			first = append(first, i)
			continue
		}
		rest = append(rest, i)
	}
	for _, part := range [][]int{first, rest} {
		if err := forEach(len(part), workers, func(k int) error { return build(part[k]) }); err != nil {
			return nil, nil, err
		}
	}
	for i := range out {
		if out[i].err != nil {
			return nil, nil, out[i].err
		}
	}
	var cands []Candidate
	var rej []Rejection
	for i := range out {
		if out[i].cand.Sim == nil {
			rej = append(rej, Rejection{Config: jobs[i].cfg, Reason: out[i].reason})
			continue
		}
		cands = append(cands, out[i].cand)
	}
	return cands, rej, nil
}
