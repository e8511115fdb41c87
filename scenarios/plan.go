package scenarios

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// rawPlan mirrors [plan]: the options of `moecast plan`, keys named as
// its flags with underscores (a contract: extend, never rename).
type rawPlan struct {
	GPUs                   []string `toml:"gpus"`
	MaxGPUs                *int     `toml:"max_gpus"`
	TTFTP99                string   `toml:"ttft_p99"` // a duration: "2s", "500ms"
	TPOTP99                string   `toml:"tpot_p99"`
	MinTokensPerSPerUser   *float64 `toml:"min_tokens_per_s_per_user"`
	TargetOutputTokensPerS *float64 `toml:"target_output_tokens_per_s"`
	TargetRequestRate      *float64 `toml:"target_request_rate"`
	// Disagg asks plan for disaggregated candidates too (xPyD pools).
	Disagg            *bool  `toml:"disagg"`
	MaxPrefillWorkers *int   `toml:"max_prefill_workers"`
	MaxDecodeWorkers  *int   `toml:"max_decode_workers"`
	DisaggTransfer    string `toml:"disagg_transfer"`
}

// Plan is what `moecast plan` searches for a scenario: [plan] with
// workload.input_tokens and workload.output_tokens. Zero fields are not
// set (no cap, no objective, no target).
type Plan struct {
	// GPUs are the GPU presets to search; empty: the scenario's GPU.
	GPUs    []string
	MaxGPUs int
	TTFTP99 unit.Seconds
	TPOTP99 unit.Seconds
	// MinTokensPerSPerUser is the least tokens/s one request must see.
	MinTokensPerSPerUser   float64
	TargetOutputTokensPerS float64
	TargetRequestRate      float64 // requests/s
	// InputTokens and OutputTokens are the request shape: the workload keys
	// as Serving holds them (defaults DefaultInputTokens, DefaultOutputTokens).
	InputTokens, OutputTokens int
	// Disagg: also price disaggregated deployments, 1..MaxPrefillWorkers
	// prefill instances and 1..MaxDecodeWorkers decode instances (defaults
	// DefaultMaxPrefillWorkers, DefaultMaxDecodeWorkers), the KV cache
	// crossing DisaggTransfer (default: [disagg].transfer, else
	// DefaultDisaggTransfer).
	Disagg                              bool
	MaxPrefillWorkers, MaxDecodeWorkers int
	DisaggTransfer                      comm.Link
}

// Defaults of the disaggregated search of [plan].
const (
	DefaultMaxPrefillWorkers = 2
	DefaultMaxDecodeWorkers  = 2
	DefaultDisaggTransfer    = "ib-400"
	// DefaultPlanNIC joins the nodes of a replica spanning nodes when the
	// scenario gives no hardware.nic.
	DefaultPlanNIC = "ib-400"
)

// buildPlan reads [plan] into s.Plan, with the request shape of s.Serving
// (buildServing has read and checked the workload keys).
func (s *Scenario) buildPlan() error {
	d := s.doc
	r := &d.raw.Plan
	p := Plan{GPUs: r.GPUs, InputTokens: s.Serving.InputTokens, OutputTokens: s.Serving.OutputTokens}
	if len(r.GPUs) == 0 && s.Given("plan.gpus") {
		return d.errorf("plan.gpus", "no GPU named (want e.g. gpus = [\"h200-sxm\", \"b200-sxm\"]; leave the key out to plan the scenario's GPU)")
	}
	if r.MaxGPUs != nil {
		p.MaxGPUs = *r.MaxGPUs
		if p.MaxGPUs <= 0 {
			return d.errorf("plan.max_gpus", "%d must be > 0", p.MaxGPUs)
		}
		if p.MaxGPUs > sim.MaxRanks {
			return d.errorf("plan.max_gpus", "%d exceeds the %d (2^16) GPUs a deployment may have", p.MaxGPUs, sim.MaxRanks)
		}
	}
	for _, t := range []struct {
		text string
		key  string
		dst  *unit.Seconds
	}{{r.TTFTP99, "plan.ttft_p99", &p.TTFTP99}, {r.TPOTP99, "plan.tpot_p99", &p.TPOTP99}} {
		if t.text == "" {
			continue
		}
		v, err := unit.ParseSeconds(t.text)
		if err != nil {
			return d.wrap(t.key, err)
		}
		*t.dst = v
	}
	for _, t := range []struct {
		p   *float64
		key string
		dst *float64
	}{{r.MinTokensPerSPerUser, "plan.min_tokens_per_s_per_user", &p.MinTokensPerSPerUser},
		{r.TargetOutputTokensPerS, "plan.target_output_tokens_per_s", &p.TargetOutputTokensPerS},
		{r.TargetRequestRate, "plan.target_request_rate", &p.TargetRequestRate}} {
		if t.p != nil {
			*t.dst = *t.p
		}
	}
	if r.Disagg != nil {
		p.Disagg = *r.Disagg
	}
	p.MaxPrefillWorkers, p.MaxDecodeWorkers = DefaultMaxPrefillWorkers, DefaultMaxDecodeWorkers
	for _, w := range []struct {
		v   *int
		key string
		dst *int
	}{{r.MaxPrefillWorkers, "plan.max_prefill_workers", &p.MaxPrefillWorkers},
		{r.MaxDecodeWorkers, "plan.max_decode_workers", &p.MaxDecodeWorkers}} {
		if w.v == nil {
			continue
		}
		if *w.v < 1 || *w.v > 8 {
			return d.errorf(w.key, "%d must be in [1, 8]", *w.v)
		}
		*w.dst = *w.v
	}
	tr := DefaultDisaggTransfer
	if s.Disagg != nil {
		tr = s.Disagg.Transfer.Name
	}
	if r.DisaggTransfer != "" {
		tr = r.DisaggTransfer
	}
	l, ok := comm.LookupLink(tr)
	if !ok {
		return d.errorf("plan.disagg_transfer", "unknown transfer fabric %q (want %s)", tr, strings.Join(comm.LinkNames(), ", "))
	}
	if s.Disagg != nil && r.DisaggTransfer == "" {
		l = s.Disagg.Transfer
	}
	p.DisaggTransfer = l
	if err := p.Check(); err != nil {
		var fe *PlanError
		if errors.As(err, &fe) {
			return d.errorf(fe.Key, "%s", fe.Msg)
		}
		return d.wrap("plan", err)
	}
	s.Plan = p
	return nil
}

// PlanError is an invalid plan option; Key is its [plan] or workload key
// ("plan.max_gpus"), Flag its `moecast plan` flag ("--max-gpus").
type PlanError struct {
	Key, Flag, Msg string
}

func (e *PlanError) Error() string { return e.Flag + ": " + e.Msg }

// Check validates p: GPU names known, max GPUs > 0, objectives and targets
// positive and finite (0: not set), at most one target, a request shape
// that fits the simulator.
func (p *Plan) Check() error {
	perr := func(key, format string, args ...any) error {
		flag := "--" + strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(key, "plan."), "workload."), "_", "-")
		return &PlanError{Key: key, Flag: flag, Msg: fmt.Sprintf(format, args...)}
	}
	for _, g := range p.GPUs {
		if _, ok := kernels.LookupGPU(g); !ok {
			return perr("plan.gpus", "unknown GPU %q (have: %s)", g, strings.Join(kernels.GPUNames(), ", "))
		}
	}
	if p.MaxGPUs < 0 {
		return perr("plan.max_gpus", "%d must be > 0", p.MaxGPUs)
	}
	// hardware.gpus' own limit: beyond it no layout is enumerated, and
	// 2^63-1 was taken silently (30 s and 1.8 GB for a one-GPU model)
	if p.MaxGPUs > sim.MaxRanks {
		return perr("plan.max_gpus", "%d exceeds the %d (2^16) GPUs a deployment may have", p.MaxGPUs, sim.MaxRanks)
	}
	for _, v := range []struct {
		key string
		v   float64
	}{{"plan.ttft_p99", float64(p.TTFTP99)}, {"plan.tpot_p99", float64(p.TPOTP99)},
		{"plan.min_tokens_per_s_per_user", p.MinTokensPerSPerUser},
		{"plan.target_output_tokens_per_s", p.TargetOutputTokensPerS},
		{"plan.target_request_rate", p.TargetRequestRate}} {
		if !(v.v >= 0) || math.IsInf(v.v, 0) {
			return perr(v.key, "%g must be a positive finite value", v.v)
		}
	}
	// Plausible ranges (0: not set): below or above them a value is a
	// slip of units or digits, not a deployment to size.
	for _, v := range []struct {
		key string
		v   float64
		l   limit
	}{{"plan.ttft_p99", float64(p.TTFTP99), sloLatencyLimit},
		{"plan.tpot_p99", float64(p.TPOTP99), sloLatencyLimit},
		{"plan.min_tokens_per_s_per_user", p.MinTokensPerSPerUser, perUserLimit},
		{"plan.target_output_tokens_per_s", p.TargetOutputTokensPerS, targetOutputLimit},
		{"plan.target_request_rate", p.TargetRequestRate, requestRateLimit}} {
		if v.v > 0 {
			if err := v.l.check(v.v, fmt.Sprintf("%g", v.v)); err != nil {
				return perr(v.key, "%v", err)
			}
		}
	}
	if p.TargetOutputTokensPerS > 0 && p.TargetRequestRate > 0 {
		return perr("plan.target_request_rate", "give a target output rate or a target request rate, not both")
	}
	if p.InputTokens < 0 || p.InputTokens > sim.MaxContext {
		return perr("workload.input_tokens", "%d must be in [0, %d]", p.InputTokens, sim.MaxContext)
	}
	if p.OutputTokens < 1 || p.OutputTokens > sim.MaxContext {
		return perr("workload.output_tokens", "%d must be in [1, %d]", p.OutputTokens, sim.MaxContext)
	}
	if p.InputTokens+p.OutputTokens > sim.MaxContext {
		return perr("workload.output_tokens", "input + output = %d tokens exceeds the limit of %d", p.InputTokens+p.OutputTokens, sim.MaxContext)
	}
	return nil
}

// Options is p's objectives and target as plan.Search takes them.
func (p *Plan) Options() plan.Options {
	return plan.Options{
		SLO:    plan.SLO{TTFTP99: p.TTFTP99, TPOTP99: p.TPOTP99, MinPerUser: p.MinTokensPerSPerUser},
		Target: plan.Target{OutputTokensPerSecond: p.TargetOutputTokensPerS, RequestRate: p.TargetRequestRate},
	}
}

// prefetchTables opens the embedded calibration tables of gpus but own
// (the scenario's GPU, whose calibration the scenario opens itself), each
// on a goroutine of its own, and returns at once: calib.EmbeddedTables
// opens a GPU's file once and keeps it, and opens the files of several
// GPUs concurrently, so the reader that needs them next (PlanSpace) finds
// them open or waits for the open in flight. A scenario's [plan] GPUs are
// fetched as soon as it is decoded: the README's plan case opened its
// three GPUs' calibrations (25-50 ms each) one after another before the
// search could start. A name without an embedded calibration opens
// nothing; an error is the reader's to report.
func prefetchTables(gpus []string, own string) {
	for _, g := range gpus {
		if g != own {
			go calib.EmbeddedTables(g) //nolint:errcheck // the reader gets the same error
		}
	}
}

// PlanSpace is the search space of p for s's model and runtime: each GPU
// of p.GPUs (the scenario's own when empty) in a node of its preset
// fabric and the node size of the scenario's box (8 for other GPUs), with
// the scenario's calibration for its own GPU and the embedded tables of
// each other GPU (selected for that box, calib.Select); KV cache bf16 and
// fp8; without speculative decoding and, when the scenario gives one,
// with its method. Warnings say where a GPU has no calibration.
func (s *Scenario) PlanSpace(p Plan) (_ *plan.Space, _ []string, err error) {
	defer asInput(&err)
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	c := s.Config
	if s.doc == nil || s.doc.raw.Runtime.GPUMemoryUtilization == nil {
		c.GPUMemoryUtilization = 0 // each candidate's engine default (plan.Space.Base)
	}
	sp := &plan.Space{
		Model:    c.Model,
		MaxGPUs:  p.MaxGPUs,
		KVCaches: []dtype.KVCache{dtype.KVBF16, dtype.KVFP8},
		Specs:    []sim.Spec{{Method: sim.SpecNone}},
		Base: sim.Config{Graphs: c.Graphs, AllReduce: c.AllReduce, GPUMemoryUtilization: c.GPUMemoryUtilization,
			Efficiency: c.Efficiency, EngineLaunch: c.EngineLaunch, LaunchAhead: c.LaunchAhead},
		Engine:        s.Serving.Engine,
		EngineVersion: s.Serving.EngineVersion,
		Workload:      plan.Workload{Input: p.InputTokens, Output: p.OutputTokens},
	}
	if c.Spec.Active() {
		sp.Specs = append(sp.Specs, c.Spec)
	}
	if m := c.Model; m != nil {
		maxModelLen := vllmMaxModelLen(m)
		sp.ProfileTerms = func(e serve.Engine, c *sim.Config) {
			s.profileTerms(&c.Profile, e, c.Graphs, c.Model, maxModelLen)
		}
	}
	gpus := p.GPUs
	if len(gpus) == 0 {
		gpus = []string{c.GPU.Name}
	}
	var warnings []string
	// replicas spanning nodes (max_gpus above a node): on the scenario's
	// hardware.nic, else an assumed InfiniBand 400 Gb/s NIC per GPU
	nic := c.NIC
	if !(nic.BW > 0) {
		nic, _ = comm.LookupNIC(DefaultPlanNIC)
	}
	nicWarned := false
	prefetchTables(gpus, c.GPU.Name)
	seen := map[string]bool{}
	for _, name := range gpus {
		if seen[name] {
			continue
		}
		seen[name] = true
		if name == c.GPU.Name {
			o := plan.GPUOption{GPU: c.GPU, Fabric: c.Fabric, NodeGPUs: max(c.GPUs, 1),
				KernelTables: c.KernelTables, CommTables: c.CommTables}
			if p.MaxGPUs > o.NodeGPUs {
				o.NIC = nic
			}
			sp.GPUs = append(sp.GPUs, o)
			continue
		}
		g, _ := kernels.LookupGPU(name)
		if !sglangLoadsNVFP4(s.Serving.Engine, c.Model, g.Arch) {
			warnings = append(warnings, fmt.Sprintf("GPU %s: left out: SGLang loads an NVFP4 checkpoint only on compute capability 10.0 and later (%s is %s)", name, name, g.Arch))
			continue
		}
		f, ok := comm.LookupFabric(g.Fabric)
		if !ok {
			return nil, nil, fmt.Errorf("GPU %s: its fabric %q is not a preset", name, g.Fabric)
		}
		o := plan.GPUOption{GPU: g, Fabric: f, NodeGPUs: plan.DefaultNodeGPUs}
		if p.MaxGPUs > o.NodeGPUs {
			o.NIC = nic
		}
		cf, err := calib.EmbeddedTables(name)
		if err != nil {
			return nil, nil, err
		}
		if cf == nil {
			warnings = append(warnings, fmt.Sprintf("GPU %s: no embedded calibration tables; its op costs are roofline estimates", name))
		} else {
			sel := calib.Select(calib.Box{GPU: name, Fabric: f.Name, GPUs: o.NodeGPUs}, cf)
			o.KernelTables, o.CommTables = sel.Kernels(), sel.Comm(c.Graphs)
		}
		sp.GPUs = append(sp.GPUs, o)
	}
	if len(sp.GPUs) == 0 {
		return nil, nil, fmt.Errorf("plan gpus: none of %s can serve the scenario (%s)", strings.Join(gpus, ", "), strings.Join(warnings, "; "))
	}
	for _, o := range sp.GPUs {
		if o.NIC.BW > 0 && !(c.NIC.BW > 0) && !nicWarned {
			nicWarned = true
			warnings = append(warnings, fmt.Sprintf("max_gpus %d exceeds a node: replicas spanning nodes are priced on %s (%s per GPU, assumed; set hardware.nic)",
				p.MaxGPUs, nic.Name, nic.BW))
		}
	}
	return sp, warnings, nil
}
