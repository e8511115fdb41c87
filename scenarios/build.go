package scenarios

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// Defaults of optional keys (README.md lists them with the schema).
const (
	// DefaultGPUMemoryUtilization is vLLM's default gpu_memory_utilization
	// (vllm/config/cache.py: 0.9).
	DefaultGPUMemoryUtilization = 0.90
	// DefaultContext is workload.context when absent, in tokens.
	DefaultContext = 2048
	// DefaultCalibration is hardware.calibration when absent.
	DefaultCalibration = "embedded"
)

// DefaultBatches is workload.batch when absent.
var DefaultBatches = []int{1}

// build converts the decoded document into s.Config and the workload.
func (s *Scenario) build() error {
	d := s.doc
	r := &d.raw
	s.Name = r.Name
	if s.Name == "" {
		s.Name = strings.TrimSuffix(path.Base(strings.TrimPrefix(s.File, embeddedPrefix)), ".toml")
	}
	c := &s.Config

	// [model]
	m, err := s.loadModel()
	if err != nil {
		return err
	}
	c.Model = m
	switch r.Model.KVCache {
	case "", "auto":
		// vLLM's --kv-cache-dtype auto: the checkpoint's declared KV
		// dtype, else the model dtype (vllm/utils/torch_utils.py
		// resolve_kv_cache_dtype_string)
		c.KVCache = dtype.KVBF16
		if m.Quant.KVCacheDeclared {
			c.KVCache, s.KVCacheFromCheckpoint = m.Quant.KVCache, true
		}
	case "bf16":
		c.KVCache = dtype.KVBF16
	case "fp8", "fp8_e4m3":
		c.KVCache = dtype.KVFP8
	default:
		return d.errorf("model.kv_cache", "unknown KV-cache dtype %q (want bf16 or fp8)", r.Model.KVCache)
	}

	// [parallel] and hardware.gpus
	if err := s.buildLayout(); err != nil {
		return err
	}

	// [hardware]
	if c.GPU, err = s.buildGPU(); err != nil {
		return err
	}
	if c.Fabric, err = s.buildFabric(); err != nil {
		return err
	}
	if c.NIC, err = s.buildNIC(); err != nil {
		return err
	}

	// [runtime]
	c.Graphs = true
	// eager kernels at the engine's own host time per kernel, issued
	// ahead of the GPU (mechanisms engine-launch, launch-ahead)
	c.EngineLaunch, c.LaunchAhead = true, true
	if r.Runtime.CUDAGraphs != nil {
		c.Graphs = *r.Runtime.CUDAGraphs
	}
	if mode := r.Runtime.CUDAGraphMode; mode != "" {
		// vLLM's cudagraph_mode NONE captures no graph: priced as
		// --enforce-eager (cudaGraphModes); the other modes are set with
		// the engine's serving keys (setGraphMode)
		m, err := parseCUDAGraphMode(mode)
		if err != nil {
			return d.wrap("runtime.cudagraph_mode", err)
		}
		if e, ok := serve.ParseEngine(r.Runtime.Engine); m == "NONE" && (r.Runtime.Engine == "" || (ok && e == serve.VLLM)) {
			if r.Runtime.CUDAGraphs != nil && *r.Runtime.CUDAGraphs {
				return d.errorf("runtime.cudagraph_mode", "NONE runs no CUDA graph, which runtime.cuda_graphs = true contradicts")
			}
			c.Graphs = false
		}
		if e, ok := serve.ParseEngine(r.Runtime.Engine); m != "NONE" && (r.Runtime.Engine == "" || (ok && e == serve.VLLM)) &&
			r.Runtime.CUDAGraphs != nil && !*r.Runtime.CUDAGraphs {
			// vLLM: --enforce-eager wins, setting cudagraph_mode to NONE
			// (VllmConfig.__post_init__); say so rather than run silently
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.cudagraph_mode %s is ignored: runtime.cuda_graphs = false runs no CUDA graph, as vLLM's --enforce-eager sets cudagraph_mode to NONE",
				s.pos("runtime.cudagraph_mode"), m))
		}
	}
	if c.AllReduce, err = comm.ParseImpl(r.Runtime.AllReduce); err != nil {
		return d.wrap("runtime.allreduce", err)
	}
	c.GPUMemoryUtilization = DefaultGPUMemoryUtilization
	if r.Runtime.GPUMemoryUtilization != nil {
		c.GPUMemoryUtilization = *r.Runtime.GPUMemoryUtilization
	}

	// hardware.calibration (after runtime: the collective tables depend
	// on CUDA graphs)
	cal, err := d.calibrationSources()
	if err != nil {
		return err
	}
	if err := s.setCalibration(cal, "hardware.calibration"); err != nil {
		return err
	}

	// [workload]
	s.Batches = DefaultBatches
	if r.Workload.Batch != nil {
		s.Batches = r.Workload.Batch
	}
	if err := CheckBatches(s.Batches); err != nil {
		return d.wrap("workload.batch", err)
	}
	s.Context = DefaultContext
	if r.Workload.Context != nil {
		s.Context = *r.Workload.Context
	}
	if err := CheckContext(s.Context); err != nil {
		return d.wrap("workload.context", err)
	}

	// [speculative]
	if err := s.buildSpec(); err != nil {
		return err
	}
	s.Warnings = append(s.Warnings, s.hardwareWarnings()...)
	// serving keys of [workload] and [runtime] (after [speculative])
	return s.buildServing()
}

// CheckBatches validates a list of batch sizes: non-empty, each in
// [1, sim.MaxBatchSize] and given once (each is a row of the output).
func CheckBatches(b []int) error {
	if len(b) == 0 {
		return fmt.Errorf("no batch sizes")
	}
	for i, v := range b {
		if v <= 0 {
			return fmt.Errorf("batch %d (item %d) must be a positive number of sequences", v, i+1)
		}
		if v > sim.MaxBatchSize {
			return fmt.Errorf("batch %d (item %d) exceeds the limit of %d sequences", v, i+1, sim.MaxBatchSize)
		}
		if j := slices.Index(b[:i], v); j >= 0 {
			return fmt.Errorf("batch %d (item %d) repeats item %d", v, i+1, j+1)
		}
	}
	return nil
}

// CheckContext validates a context length: in [1, sim.MaxContext] tokens.
func CheckContext(n int) error {
	if n <= 0 {
		return fmt.Errorf("context %d must be a positive number of tokens", n)
	}
	if n > sim.MaxContext {
		return fmt.Errorf("context %d exceeds the limit of %d tokens", n, sim.MaxContext)
	}
	return nil
}

// loadModel resolves [model]: exactly one of preset and config.
func (s *Scenario) loadModel() (*model.Config, error) {
	d := s.doc
	pm := d.raw.Model
	switch {
	case pm.Preset != "" && pm.Config != "":
		return nil, d.errorf("model.config", "give model.preset or model.config, not both")
	case pm.Preset != "":
		s.ModelRef = pm.Preset
		m, err := model.Preset(pm.Preset)
		if err != nil {
			return nil, d.wrap("model.preset", err)
		}
		return m, nil
	case pm.Config != "":
		var (
			m   *model.Config
			err error
		)
		if s.fsys != nil {
			p := path.Clean(path.Join(s.dir, pm.Config))
			s.ModelRef, s.modelFile = p, p
			m, err = model.Load(s.fsys, p)
		} else {
			p := s.osPath(pm.Config)
			s.ModelRef, s.modelFile = p, p
			m, err = model.LoadFile(p)
		}
		if err != nil {
			return nil, d.wrap("model.config", err)
		}
		return m, nil
	}
	return nil, d.errorf("model", "missing model: set model.preset (one of %s) or model.config = \"path/config.json\"",
		strings.Join(model.PresetNames(), ", "))
}

// osPath resolves p against the scenario's directory unless absolute.
func (s *Scenario) osPath(p string) string {
	if filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(filepath.FromSlash(s.dir), p)
}

// buildLayout reads [parallel] and hardware.gpus. Defaults: gpus = tp x dp;
// tp = gpus / dp; dp = gpus / tp; ep = 1; dp_attention = false.
func (s *Scenario) buildLayout() error {
	d := s.doc
	r := &d.raw
	if r.Disagg != nil {
		return s.buildDisagg()
	}
	get := func(p *int, key string) (int, bool, error) {
		if p == nil {
			return 0, false, nil
		}
		if *p <= 0 {
			return 0, true, d.errorf(key, "%d must be a positive integer", *p)
		}
		if *p > sim.MaxRanks {
			return 0, true, d.errorf(key, "%d exceeds the limit of %d", *p, sim.MaxRanks)
		}
		return *p, true, nil
	}
	gpus, hasGPUs, err := get(r.Hardware.GPUs, "hardware.gpus")
	if err != nil {
		return err
	}
	tp, hasTP, err := get(r.Parallel.TP, "parallel.tp")
	if err != nil {
		return err
	}
	dp, hasDP, err := get(r.Parallel.DP, "parallel.dp")
	if err != nil {
		return err
	}
	ep, hasEP, err := get(r.Parallel.EP, "parallel.ep")
	if err != nil {
		return err
	}
	if !hasEP {
		ep = 1
	}
	switch {
	case !hasGPUs:
		if !hasTP {
			tp = 1
		}
		if !hasDP {
			dp = 1
		}
		gpus = tp * dp // each <= MaxRanks: no overflow
		if gpus > sim.MaxRanks {
			return d.errorf("parallel.dp", "tp x dp = %d x %d = %d GPUs exceeds the limit of %d", tp, dp, gpus, sim.MaxRanks)
		}
	case !hasTP && !hasDP:
		tp, dp = gpus, 1
	case !hasTP:
		if gpus%dp != 0 {
			return d.errorf("parallel.dp", "dp = %d does not divide hardware.gpus = %d", dp, gpus)
		}
		tp = gpus / dp
	case !hasDP:
		if gpus%tp != 0 {
			return d.errorf("parallel.tp", "tp = %d does not divide hardware.gpus = %d (gpus must equal tp x dp)", tp, gpus)
		}
		dp = gpus / tp
	}
	s.Config.GPUs = gpus
	s.Config.Layout = model.Layout{TP: tp, EP: ep, DP: dp}
	if r.Parallel.DPAttention != nil {
		s.Config.Layout.DPAttention = *r.Parallel.DPAttention
	}
	return nil
}

// archForm is an architecture as moecast names it: a CUDA compute
// capability, "sm_90", "sm_100" (no arch-specific suffix: sm_90a's
// kernels are sm_90's), or an AMD GCN/CDNA target, "gfx942".
var archForm = regexp.MustCompile(`^(sm_[1-9][0-9]{1,2}|gfx[0-9][0-9a-f]{2,3})$`)

// archNames lists the presets' architectures, each once.
func archNames() string {
	var out []string
	for _, n := range kernels.GPUNames() {
		g, _ := kernels.LookupGPU(n)
		if a := string(g.Arch); a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// minGEMMEfficiency is the least GEMM fraction [hardware.custom_gpu]
// takes (gemm_mem_efficiency, gemm_compute_efficiency).
const minGEMMEfficiency = 0.05

// buildGPU resolves hardware.gpu (a preset) and [hardware.custom_gpu]
// (a GPU of its own, or overrides of the preset's figures).
func (s *Scenario) buildGPU() (kernels.GPU, error) {
	d := s.doc
	h := d.raw.Hardware
	var g kernels.GPU
	if h.GPU != "" {
		var ok bool
		if g, ok = kernels.LookupGPU(h.GPU); !ok {
			return g, d.errorf("hardware.gpu", "unknown GPU %q (presets: %s; or define [hardware.custom_gpu])",
				h.GPU, strings.Join(kernels.GPUNames(), ", "))
		}
	}
	cg := h.CustomGPU
	if cg == nil {
		if h.GPU == "" {
			return g, d.errorf("hardware.gpu", "missing GPU: set hardware.gpu (one of %s) or define [hardware.custom_gpu]",
				strings.Join(kernels.GPUNames(), ", "))
		}
		return g, nil
	}
	const k = "hardware.custom_gpu."
	if h.GPU == "" {
		// A GPU of its own: these figures have no preset to fall back on.
		for _, f := range [][2]string{{"memory", cg.Memory}, {"bandwidth", cg.Bandwidth}, {"bf16", cg.BF16}} {
			if f[1] == "" {
				return g, d.errorf(k+f[0], "missing: a custom GPU without hardware.gpu needs memory, bandwidth and bf16")
			}
		}
		g.Name, g.Label = "custom", "custom GPU"
	}
	if cg.Name != "" {
		g.Name = cg.Name
	}
	if cg.Label != "" {
		g.Label = cg.Label
	} else if cg.Name != "" {
		g.Label = cg.Name
	}
	if cg.Arch != "" {
		if !archForm.MatchString(cg.Arch) {
			return g, d.errorf(k+"arch", "%q: want a CUDA compute capability sm_NN (the presets': %s) or an AMD target gfxNNN", cg.Arch, archNames())
		}
		g.Arch = kernels.Arch(cg.Arch)
	}
	if cg.SMs != nil {
		if *cg.SMs <= 0 {
			return g, d.errorf(k+"sms", "%d must be positive", *cg.SMs)
		}
		g.SMs = *cg.SMs
	}
	for _, f := range []struct {
		key string
		v   *float64
		dst *float64
	}{{"gemm_mem_efficiency", cg.GEMMMemEfficiency, &g.GEMMMem}, {"gemm_compute_efficiency", cg.GEMMComputeEfficiency, &g.GEMMCompute}} {
		if f.v == nil {
			continue
		}
		// A fraction of the GPU's own bandwidth or bf16 peak; above 1
		// is allowed up to 1.25 (a card that clocks beyond the boost
		// its datasheet quotes the peak at), beyond it is a slip. Below
		// 0.05 is a slip too (the architectures' measured fractions are
		// 0.5 to 0.96): 1e-300 priced a GEMM at 1e297 s, which simulate
		// printed as 300-digit TTFTs.
		if v := *f.v; !(v >= minGEMMEfficiency && v <= 1.25) {
			return g, d.errorf(k+f.key, "%g must be in [%g, 1.25]: a measured fraction of the GPU's bandwidth or bf16 peak", v, minGEMMEfficiency)
		}
		*f.dst = *f.v
	}
	bytesField := func(v, key string, dst *unit.Bytes) error {
		if v == "" {
			return nil
		}
		b, err := unit.ParseBytes(v)
		if err == nil && b <= 0 {
			err = fmt.Errorf("%q must be positive", v)
		}
		if err != nil {
			return d.wrap(k+key, err)
		}
		*dst = b
		return nil
	}
	if err := bytesField(cg.Memory, "memory", &g.Memory); err != nil {
		return g, err
	}
	if cg.Memory != "" {
		// the preset's measured cudaMemGetInfo total is of its own
		// memory, not of the one given here
		g.CUDAMemory = 0
	}
	if err := bytesField(cg.L2, "l2", &g.L2); err != nil {
		return g, err
	}
	if cg.FA2MixedRead != "" {
		bw, err := unit.ParseBandwidth(cg.FA2MixedRead)
		if err == nil && bw <= 0 {
			err = fmt.Errorf("%q must be positive", cg.FA2MixedRead)
		}
		if err != nil {
			return g, d.wrap(k+"fa2_mixed_read_bandwidth", err)
		}
		g.FA2MixedRead = bw
	}
	if cg.Bandwidth != "" {
		bw, err := unit.ParseBandwidth(cg.Bandwidth)
		if err == nil && bw <= 0 {
			err = fmt.Errorf("%q must be positive", cg.Bandwidth)
		}
		if err != nil {
			return g, d.wrap(k+"bandwidth", err)
		}
		g.MemBW = bw
	}
	for _, f := range []struct {
		v, key string
		c      dtype.Compute
	}{{cg.BF16, "bf16", dtype.BF16}, {cg.FP8, "fp8", dtype.FP8}, {cg.INT8, "int8", dtype.INT8}, {cg.FP4, "fp4", dtype.FP4}} {
		if f.v == "" {
			continue
		}
		r, err := unit.ParseFLOPs(f.v)
		if err != nil {
			return g, d.wrap(k+f.key, err)
		}
		g.Peak[f.c] = r
	}
	g.Source = "scenario " + s.File + " [hardware.custom_gpu]"
	if h.GPU != "" {
		g.Source = "preset " + h.GPU + " with overrides from " + s.File + " [hardware.custom_gpu]"
	}
	if err := s.checkGPULimits(&g); err != nil {
		return g, err
	}
	if err := g.Validate(); err != nil {
		return g, d.wrap("hardware.custom_gpu", err)
	}
	return g, nil
}

// buildNIC resolves hardware.nic: a NIC preset (comm.NICNames), one per
// GPU, that joins the nodes of the fabric's node_gpus GPUs when a replica
// spans several; collectives across nodes are then priced on it.
func (s *Scenario) buildNIC() (comm.Link, error) {
	name := s.doc.raw.Hardware.NIC
	if name == "" {
		return comm.Link{}, nil
	}
	l, ok := comm.LookupNIC(name)
	if !ok {
		return l, s.doc.errorf("hardware.nic", "unknown NIC %q (want %s)", name, strings.Join(comm.NICNames(), ", "))
	}
	return l, nil
}

// buildFabric resolves hardware.fabric and [hardware.custom_fabric]. When
// both are absent the GPU preset's usual fabric is used; a single GPU needs
// none.
func (s *Scenario) buildFabric() (comm.Fabric, error) {
	d := s.doc
	h := d.raw.Hardware
	name := h.Fabric
	if name == "" && h.CustomFabric == nil && s.Config.GPUs > 1 {
		name = s.Config.GPU.Fabric
	}
	var f comm.Fabric
	if name != "" {
		var ok bool
		if f, ok = comm.LookupFabric(name); !ok {
			return f, d.errorf("hardware.fabric", "unknown fabric %q (presets: %s; or define [hardware.custom_fabric])",
				name, strings.Join(comm.FabricNames(), ", "))
		}
	}
	cf := h.CustomFabric
	if cf == nil {
		if name == "" {
			if s.Config.GPUs > 1 {
				return f, d.errorf("hardware.fabric", "missing fabric for %d GPUs: set hardware.fabric (one of %s) or define [hardware.custom_fabric]",
					s.Config.GPUs, strings.Join(comm.FabricNames(), ", "))
			}
			f.Name = "none"
		}
		return f, nil
	}
	const k = "hardware.custom_fabric."
	if name == "" {
		for _, kv := range [][2]string{{"bandwidth", cf.Bandwidth}, {"latency", cf.Latency},
			{"bus_bandwidth", cf.BusBandwidth}, {"alltoall_bandwidth", cf.AllToAllBandwidth}} {
			if kv[1] == "" {
				return f, d.errorf(k+kv[0], "missing: a custom fabric without hardware.fabric needs bandwidth, latency, bus_bandwidth and alltoall_bandwidth")
			}
		}
		f.Name = "custom"
	}
	if cf.Name != "" {
		f.Name = cf.Name
	}
	for _, b := range []struct {
		v, key string
		dst    *unit.BytesPerSecond
	}{{cf.Bandwidth, "bandwidth", &f.BW}, {cf.BusBandwidth, "bus_bandwidth", &f.BusBW},
		{cf.AllToAllBandwidth, "alltoall_bandwidth", &f.AllToAllBW}, {cf.P2PBandwidth, "p2p_bandwidth", &f.P2PBW}} {
		if b.v == "" {
			continue
		}
		bw, err := unit.ParseBandwidth(b.v)
		if err == nil && bw <= 0 {
			err = fmt.Errorf("%q must be positive", b.v)
		}
		if err != nil {
			return f, d.wrap(k+b.key, err)
		}
		*b.dst = bw
	}
	for _, l := range []struct {
		v, key string
		dst    *unit.Seconds
	}{{cf.Latency, "latency", &f.Latency}, {cf.CustomARLatency, "custom_allreduce_latency", &f.CustomARLatency}} {
		if l.v == "" {
			continue
		}
		t, err := unit.ParseSeconds(l.v)
		if err != nil {
			return f, d.wrap(k+l.key, err)
		}
		*l.dst = t
	}
	if cf.P2P != nil {
		f.P2P = *cf.P2P
	}
	if cf.NVLink != nil {
		f.NVLink = *cf.NVLink
	}
	if cf.NodeGPUs != nil {
		if *cf.NodeGPUs <= 0 || *cf.NodeGPUs > sim.MaxRanks {
			return f, d.errorf(k+"node_gpus", "%d must be in [1, %d]", *cf.NodeGPUs, sim.MaxRanks)
		}
		f.NodeGPUs = *cf.NodeGPUs
	}
	f.Source = "scenario " + s.File + " [hardware.custom_fabric]"
	if name != "" {
		f.Source = "preset " + name + " with overrides from " + s.File + " [hardware.custom_fabric]"
	}
	if err := s.checkFabricLimits(&f); err != nil {
		return f, err
	}
	if err := f.Validate(); err != nil {
		return f, d.wrap("hardware.custom_fabric", err)
	}
	return f, nil
}

// buildSpec reads [speculative].
func (s *Scenario) buildSpec() error {
	d := s.doc
	sp := d.raw.Speculative
	var m sim.SpecMethod
	switch sp.Method {
	case "", "none":
		if sp.Acceptance != nil {
			if _, err := d.acceptance(); err != nil { // ignored, but not wrong
				return err
			}
		}
		if sp.DraftTokens != nil || sp.Acceptance != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: speculative.method is none: draft_tokens and acceptance are ignored",
				s.pos("speculative")))
		}
		s.Config.Spec = sim.Spec{Method: sim.SpecNone}
		return nil
	case "mtp":
		m = sim.SpecMTP
	case "eagle3":
		m = sim.SpecEAGLE3
	case "ngram":
		m = sim.SpecNgram
	default:
		return d.errorf("speculative.method", "unknown method %q (want none, mtp, eagle3 or ngram)", sp.Method)
	}
	if sp.DraftTokens == nil {
		return d.errorf("speculative.draft_tokens", "missing: method %q needs draft_tokens (K, the tokens drafted per step)", sp.Method)
	}
	if k := *sp.DraftTokens; k < 1 || k > sim.MaxDraftTokens {
		return d.errorf("speculative.draft_tokens", "%d must be in [1, %d]", k, sim.MaxDraftTokens)
	}
	if sp.Acceptance == nil {
		return d.errorf("speculative.acceptance", "missing: method %q needs acceptance (one value, or one per draft position)", sp.Method)
	}
	acc, err := d.acceptance()
	if err != nil {
		return err
	}
	s.Config.Spec = sim.Spec{Method: m, DraftTokens: *sp.DraftTokens, Acceptance: acc}
	return nil
}

// acceptance reads speculative.acceptance: one number (the same for every
// draft position) or an array of numbers, one per position.
func (d *doc) acceptance() ([]float64, error) {
	const key = "speculative.acceptance"
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case int64:
			return float64(x), true
		}
		return 0, false
	}
	switch v := d.raw.Speculative.Acceptance.(type) {
	case []any:
		out := make([]float64, len(v))
		for i, e := range v {
			x, ok := num(e)
			if !ok {
				return nil, d.errorf(key, "element %d is %s, not a number (want e.g. [0.8, 0.6, 0.45])", i+1, tomlType(e))
			}
			out[i] = x
		}
		return out, nil
	default:
		if x, ok := num(v); ok {
			return []float64{x}, nil
		}
		return nil, d.errorf(key, "is %s: want a number in [0, 1] or an array of them (e.g. 0.7 or [0.8, 0.6, 0.45])", tomlType(v))
	}
}

// SetCalibration switches the scenario's calibration to the sources
// given ("embedded", "embedded:NAME", "none" or calibration file paths,
// relative to the current directory), later ones overriding earlier ones
// table by table, as `moecast predict --calibration` does. Errors name the
// flag.
func (s *Scenario) SetCalibration(specs ...string) (err error) {
	defer asInput(&err)
	if err := s.setCalibration(specs, ""); err != nil {
		return err
	}
	_, err = s.Sim()
	return err
}
