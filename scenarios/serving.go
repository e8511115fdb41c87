package scenarios

import (
	"errors"
	"fmt"
	"github.com/moecast/moecast/internal/dtype"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// Serving is the serving workload and engine settings of a scenario, for
// `moecast simulate`: [workload] concurrency / request_rate and the
// request shape, [runtime] engine and scheduler settings. Zero values
// (and nil pointers) take the engine's defaults for the GPU.
type Serving struct {
	Engine serve.Engine // runtime.engine
	// Concurrency (closed loop, one point each) or RequestRate (open loop,
	// requests/s): exactly one is non-empty. When the file gives neither,
	// Concurrency is workload.batch.
	Concurrency []int
	RequestRate []float64
	Burstiness  float64 // workload.burstiness, 1 = Poisson
	// Requests per point; 0 = 10 x concurrency, at least 100 (closed
	// loop), 1000 (open loop: vllm bench serve's --num-prompts default).
	Requests     int
	InputTokens  int
	OutputTokens int
	RangeRatio   float64
	// RangeStyle is workload.range_style: how the client reads
	// RangeRatio (serve.RangeStyle; symmetric, vllm bench serve's, by
	// default).
	RangeStyle serve.RangeStyle
	// FixedLengths sends every request at the nominal lengths whatever
	// RangeRatio says; set only by the client-lengths mechanism.
	FixedLengths bool
	// ClientTokens sends the client's input lengths as its benchmark
	// recorded them where the server is known to have tokenised the
	// prompts into more (validate's BenchResult.ServerInputScale); set
	// only by the client-tokenizer mechanism.
	ClientTokens bool
	// NoDeployBudget leaves a result's known deployment token budget
	// (validate's BenchResult.MaxNumBatchedTokens) out, the engine's
	// default in its place; set only by the aic-generator-budget
	// mechanism.
	NoDeployBudget bool
	Seed           uint64
	// Trace is workload.trace as written: a request log whose arrivals
	// and lengths are replayed instead of generated (the caller reads it,
	// ReadRelative, and hands the requests to SetReplay).
	Trace string
	// Replay is the replayed log; when set, Points is its one point.
	Replay []serve.TraceRequest
	// Engine settings; 0 or nil = the engine's default on the GPU.
	MaxNumBatchedTokens int
	MaxNumSeqs          *int
	MixedChunk          *bool
	AsyncScheduling     *bool
	// EngineVersion is runtime.engine_version ("" = the newest): the
	// version-dependent defaults follow it (serve.AsyncDefault).
	EngineVersion string
	// NoHost leaves the engine's host work per step out
	// (serve.EngineHost); set only by the host-overhead mechanism.
	NoHost bool
	// NoSpecSync runs SGLang's speculative decoding as its overlapped V2
	// worker even where the version's default is the synchronous V1
	// worker (serve.SpecSyncDefault); set only by the sglang-spec-v1
	// mechanism.
	NoSpecSync bool
	// NoSpecPrepBubble hides a vLLM speculative decode step's host work
	// behind its whole GPU time as at the newest version, not behind its
	// draft passes alone (serve.SpecPrepBubbleDefault); set only by the
	// spec-prep-bubble mechanism turned off.
	NoSpecPrepBubble bool
	// NoFullISL admits by the first chunk's KV alone, leaving vLLM's
	// scheduler_reserve_full_isl out (serve.ReserveFullISLDefault); set
	// only by the full-isl-admission mechanism.
	NoFullISL bool
	// NoRecoverPreempted recomputes a preempted request's whole KV on
	// re-admission (serve.Config.RecoverPreempted off); set only by the
	// preempt-recovery mechanism.
	NoRecoverPreempted bool
	// NoScheduleAhead schedules a request that reaches a busy engine into
	// the next step (the mechanism schedule-ahead off;
	// serve.Config.ScheduleAhead).
	NoScheduleAhead bool
	// Prefix caching: workload.system_prompt_tokens or
	// workload.prefix_hit_rate describe what the prompts share
	// (serve.PrefixLoad; nil = nothing), workload.hash_block_tokens the
	// tokens per hash ID of a replayed trace; runtime.prefix_caching
	// (default on, as in vLLM and SGLang) turns the engine's cache off.
	Prefix          *serve.PrefixLoad
	HashBlockTokens int
	NoPrefixCache   bool
	// SLO is goodput's objectives (simulate --goodput); zero: none.
	SLO serve.SLO
	// TokenizeTime is runtime.tokenize_us_per_token in seconds; nil = the
	// default (serve.TokenizeTime), 0 = no front end.
	TokenizeTime *float64
	// ScheduleConservativeness is runtime.schedule_conservativeness
	// (SGLang); nil = the engine's default.
	ScheduleConservativeness *float64
	// LongPrefillTokenThreshold, MaxNumPartialPrefills and
	// MaxLongPartialPrefills are vLLM's runtime keys of those names, and
	// PrefillDecodeInterval is SGLang's runtime.prefill_decode_interval
	// (serve.Config); 0 = the engine's default.
	LongPrefillTokenThreshold, MaxNumPartialPrefills, MaxLongPartialPrefills int
	PrefillDecodeInterval                                                    int
	// PrefillScheduleInterval is vLLM's runtime.prefill_schedule_interval
	// (serve.Config.PrefillScheduleInterval); 0 = the default (1, never
	// throttled).
	PrefillScheduleInterval int
	// NumGPUBlocks is vLLM's runtime.num_gpu_blocks
	// (--num-gpu-blocks-override): the KV cache's blocks per GPU; 0 = what
	// the memory profile leaves (serve.SimMemory).
	NumGPUBlocks int
	// NoGPUBlocks drops NumGPUBlocks; set only by the vllm-num-gpu-blocks
	// mechanism.
	NoGPUBlocks bool
	// SchedulerRecvInterval is SGLang's runtime.scheduler_recv_interval
	// (serve.Config.SchedulerRecvInterval); 0 = the default (every
	// iteration).
	SchedulerRecvInterval int
	// NoRecvInterval drops SchedulerRecvInterval (SGLang receives every
	// iteration); set only by the sglang-recv-interval mechanism.
	NoRecvInterval bool
	// CUDAGraphMaxBS is SGLang's runtime.cuda_graph_max_bs and
	// MaxCUDAGraphCaptureSize vLLM's runtime.max_cudagraph_capture_size
	// (serve.Config.CUDAGraphMax); 0 = the engine's default.
	CUDAGraphMaxBS, MaxCUDAGraphCaptureSize int
	// CUDAGraphCaptureSizes is vLLM's runtime.cudagraph_capture_sizes
	// (serve.Config.CUDAGraphSizes); nil = vLLM's default list.
	CUDAGraphCaptureSizes []int
	// CUDAGraphMode is vLLM's runtime.cudagraph_mode, canonical
	// (cudaGraphModes); "" = FULL_AND_PIECEWISE. NoCUDAGraphMode prices
	// every vLLM step as FULL_AND_PIECEWISE; set only by the cudagraph-mode
	// mechanism.
	CUDAGraphMode   string
	NoCUDAGraphMode bool
	// MXFP4Activation is runtime.mxfp4_activation ("bf16", "mxfp8"; ""
	// = the engine's default: mxfp8ByDefault). NoMXFP8 prices MXFP4
	// experts with bf16 activations whatever it says; set only by the
	// mxfp4-mxfp8 mechanism.
	MXFP4Activation string
	NoMXFP8         bool
	// MXFP4Backend is runtime.mxfp4_moe_backend ("marlin"; "" = the
	// engine's pick). NoMXFP4Marlin prices MXFP4 experts with the engine's
	// default kernel whatever it says; set only by the mxfp4-marlin
	// mechanism.
	MXFP4Backend  string
	NoMXFP4Marlin bool
	// NSAPrefillBackend is runtime.nsa_prefill_backend ("" = SGLang's
	// default, Scenario.NSAPrefillImpl). NoSparsePrefill prices SGLang's
	// DSA prefill chunks un-absorbed whatever it says; set only by the
	// sglang-sparse-prefill mechanism.
	NSAPrefillBackend string
	NoSparsePrefill   bool
	// QKNormTPDeclared is the model's Attn.QKNormTP as loaded; NoQKNormTP
	// drops the all-reduce of its layer-wide q/k norm; set only by the
	// qk-norm-allreduce mechanism.
	QKNormTPDeclared, NoQKNormTP bool
	// NoEagerPrefill prices SGLang's steps with prefill chunks with vLLM's
	// piecewise graphs; set only by the eager-prefill mechanism.
	NoEagerPrefill bool
	// PooledDP pools the DP ranks under one scheduler
	// (serve.Config.PooledDP); set only by the dp-ranks mechanism.
	PooledDP bool
	// PooledSGLangDP pools SGLang's DP-attention ranks under one
	// scheduler (serve.Config.PooledSGLangDP); set only by the
	// sglang-dp-ranks mechanism.
	PooledSGLangDP bool
	// DecodeRecompute is serve.Config.DecodeRecompute; set only by the
	// prebuilt-decode mechanism.
	DecodeRecompute bool
	// SharedPoolSeqs runs both disaggregated pools under the scenario's
	// runtime.max_num_seqs, leaving [disagg.prefill] and [disagg.decode]
	// max_num_seqs out; set only by the pool-max-seqs mechanism.
	SharedPoolSeqs bool
	// NoPoolRecv, NoPoolTokens and NoPoolFraction leave out the pools'
	// own scheduler_recv_interval, max_total_tokens and
	// gpu_memory_utilization ([disagg.prefill] / [disagg.decode]); set
	// only by the pool-recv-interval, pool-max-total-tokens and
	// pool-mem-fraction mechanisms.
	NoPoolRecv, NoPoolTokens, NoPoolFraction bool
	// NoPoolBudget leaves out the pools' own max_num_batched_tokens and
	// max_prefill_tokens; set only by the pool-prefill-budget mechanism.
	NoPoolBudget bool
	// NoCaptureSize and NoGraphPadding leave the CUDA-graph capture size
	// and list out of the pools' sim configs too (poolConfig); set only
	// by the capture-size and graph-padding mechanisms.
	NoCaptureSize, NoGraphPadding bool
	// PushKV prices a vLLM disaggregation's KV as pushed when the prefill
	// ends (serve.Disagg.Pull off); set only by the kv-pull mechanism.
	PushKV bool
	// FixedReserve keeps aiconfigurator's fixed reserve in place of
	// vLLM's memory-profile run; set only by the memory-profile
	// mechanism.
	FixedReserve bool
	// NoSamplerSort prices vLLM's dummy sampler run as fp32 logits and
	// probabilities whatever the version (set only by the
	// profile-sampler-sort mechanism); NoIndexerWorkspace leaves the
	// sparse indexer's workspace out of the reserve (set only by the
	// indexer-workspace mechanism); NoSamplerTriton prices it so where
	// vLLM's Triton top-k/top-p kernel would run (set only by the
	// profile-sampler-triton mechanism).
	NoSamplerSort, NoIndexerWorkspace, NoSamplerTriton bool
	// NoARFusion leaves FlashInfer's all-reduce fusion workspace out of
	// vLLM's reserve (set only by the allreduce-fusion-workspace
	// mechanism).
	NoARFusion bool
	// NoFICutlassMoE prices the profile's MoE block with the Triton
	// caches where vLLM would run FlashInfer's CUTLASS fused MoE (set only
	// by the flashinfer-cutlass-moe-workspace mechanism).
	NoFICutlassMoE bool
	// SGLangReserve subtracts aiconfigurator's fixed reserve from
	// SGLang's mem_fraction_static share as well (in place of its KV pool
	// of profile_max_num_token); set only by the sglang-kv-pool
	// mechanism.
	SGLangReserve bool
	// VLLMFraction gives SGLang vLLM's 0.90 in place of its own default
	// mem_fraction_static when runtime.gpu_memory_utilization is not
	// given; set only by the sglang-mem-fraction mechanism.
	VLLMFraction bool
	// NoMaxRunning leaves SGLang's max_running_requests unlimited when
	// runtime.max_num_seqs is not given, in place of the limit it derives
	// from its KV pool; set only by the sglang-max-running mechanism.
	NoMaxRunning bool
	// Lengths is workload.lengths read (its file in LengthsFile): the
	// (input, output) pairs each request draws from; nil = input_tokens
	// and output_tokens. Turns and ThinkTime are workload.turns and
	// workload.think_time (sessions; 0 = independent requests).
	Lengths     []serve.LengthPair
	LengthsFile string
	Turns       int
	ThinkTime   unit.Seconds
}

// Defaults of the serving keys.
const (
	DefaultInputTokens  = 1024 // vllm bench serve --random-input-len
	DefaultOutputTokens = 1024
	DefaultOpenRequests = 1000 // vllm bench serve --num-prompts
	// MaxRequests bounds workload.requests.
	MaxRequests = 1 << 24
)

// ServePoint is one point of a serving sweep: a concurrency (closed loop)
// or a request rate (open loop).
type ServePoint struct {
	Concurrency int     // > 0 for a closed loop
	RequestRate float64 // > 0 for an open loop
	Replay      bool    // the replayed request log (Serving.Replay)
}

// SetReplay replays tr (a request log's arrivals and lengths, in arrival
// order) instead of the generated workload: one point.
func (v *Serving) SetReplay(tr []serve.TraceRequest) {
	v.Replay = tr
	v.Concurrency, v.RequestRate = nil, nil
}

// Points lists the sweep's points in the order given.
func (v *Serving) Points() []ServePoint {
	if v.Replay != nil {
		return []ServePoint{{Replay: true}}
	}
	var ps []ServePoint
	for _, c := range v.Concurrency {
		ps = append(ps, ServePoint{Concurrency: c})
	}
	for _, r := range v.RequestRate {
		ps = append(ps, ServePoint{RequestRate: r})
	}
	return ps
}

// RequestsAt is the number of requests of point p.
func (v *Serving) RequestsAt(p ServePoint) int {
	if v.Requests > 0 {
		return v.Requests
	}
	if p.Concurrency > 0 {
		return min(MaxRequests, max(100, 10*p.Concurrency))
	}
	return DefaultOpenRequests
}

// CheckConcurrency validates workload.concurrency (or --concurrency).
func CheckConcurrency(cs []int) error {
	if len(cs) == 0 {
		return fmt.Errorf("no concurrency values")
	}
	for i, c := range cs {
		if c <= 0 {
			return fmt.Errorf("concurrency %d (item %d) must be a positive number of requests", c, i+1)
		}
		if c > sim.MaxBatchSize {
			return fmt.Errorf("concurrency %d (item %d) exceeds the limit of %d", c, i+1, sim.MaxBatchSize)
		}
		if j := slices.Index(cs[:i], c); j >= 0 {
			return fmt.Errorf("concurrency %d (item %d) repeats item %d", c, i+1, j+1)
		}
	}
	return nil
}

// CheckRates validates workload.request_rate (or --request-rate).
func CheckRates(rs []float64) error {
	if len(rs) == 0 {
		return fmt.Errorf("no request rates")
	}
	for i, r := range rs {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("request rate %g (item %d) must be finite (for all requests at once use concurrency)", r, i+1)
		}
		if r <= 0 {
			return fmt.Errorf("request rate %g (item %d) must be positive, in requests/s", r, i+1)
		}
		if err := requestRateLimit.check(r, fmt.Sprintf("request rate %g (item %d)", r, i+1)); err != nil {
			return err
		}
		for j, q := range rs[:i] {
			if q == r {
				return fmt.Errorf("request rate %g (item %d) repeats item %d", r, i+1, j+1)
			}
		}
	}
	return nil
}

// Work bounds of one serving simulation: what a machine of 2 cores and a
// few GB simulates in well under a minute (measured: about 2M engine steps
// a second at concurrency 1, and 75 bytes of memory a step).
const (
	// MaxSteps bounds the decode steps of a closed-loop point:
	// requests x output tokens / concurrency.
	MaxSteps = 1 << 25
	// MaxTokens bounds an open-loop point's output tokens: requests x
	// output tokens.
	MaxTokens = 1 << 31
)

// CheckWork refuses a point whose simulation would run for minutes or
// exhaust memory, naming the figures to lower.
func (v *Serving) CheckWork(p ServePoint) (err error) {
	defer asInput(&err)
	n, out := v.RequestsAt(p), v.OutputTokens
	if p.Concurrency > 0 {
		if steps := float64(n) * float64(out) / float64(p.Concurrency); steps > MaxSteps {
			return fmt.Errorf("%d requests x %d output tokens at concurrency %d is %.3g decode steps, more than the %d one simulation runs in a minute: give fewer requests (--requests) or a higher concurrency",
				n, out, p.Concurrency, steps, MaxSteps)
		}
		return nil
	}
	if toks := float64(n) * float64(out); toks > MaxTokens {
		return fmt.Errorf("%d requests x %d output tokens is %.3g tokens, more than the %d one simulation runs in a minute: give fewer requests (--requests)",
			n, out, toks, MaxTokens)
	}
	return nil
}

// CheckTokens validates a prompt or output length: in [1, sim.MaxContext/4].
func CheckTokens(n int) error {
	if n < 1 {
		return fmt.Errorf("%d must be at least 1 token", n)
	}
	if n > sim.MaxContext/4 {
		return fmt.Errorf("%d exceeds the limit of %d tokens", n, sim.MaxContext/4)
	}
	return nil
}

// CheckRequests validates workload.requests (0 = the default).
func CheckRequests(n int) error {
	if n < 0 || n > MaxRequests {
		return fmt.Errorf("%d must be in [0, %d] (0 = 10 x concurrency, at least 100)", n, MaxRequests)
	}
	return nil
}

// buildServing reads the serving keys of [workload] and [runtime].
func (s *Scenario) buildServing() error {
	d := s.doc
	w, rt := &d.raw.Workload, &d.raw.Runtime
	v := &s.Serving
	v.Engine = serve.VLLM
	if rt.Engine != "" {
		e, ok := serve.ParseEngine(rt.Engine)
		if !ok {
			return d.errorf("runtime.engine", "unknown engine %q (want %s)", rt.Engine, serve.EngineNames(" or "))
		}
		v.Engine = e
	}
	s.Config.AllReducePolicy = v.Engine.Info().AllReduce
	s.Config.Engine = v.Engine.String()
	s.Config.SparseMLA = s.sparseMLADefault() // mechanism sparse-mla
	s.Config.IndexerTopK = true               // mechanism indexer-topk
	if err := s.checkNVFP4Arch(); err != nil {
		return err
	}
	if err := s.buildMXFP4Activation(); err != nil {
		return err
	}
	if err := s.buildNSAPrefill(); err != nil { // mechanism sglang-sparse-prefill
		return err
	}
	v.QKNormTPDeclared = s.Config.Model != nil && s.Config.Model.Attn.QKNormTP
	s.setMoERouting(true)
	if rt.MoEA2ABackend != "" {
		a2a, ok := moeA2ABackends[rt.MoEA2ABackend]
		if !ok {
			return d.errorf("runtime.moe_a2a_backend", "unknown backend %q (want %s)", rt.MoEA2ABackend, strings.Join(moeA2ANames(), ", "))
		}
		s.Config.MoEA2A = a2a
		if l := s.Config.Layout; s.Disagg == nil && a2a != sim.A2ANone && !(l.EP > 1 && l.DP > 1) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.moe_a2a_backend %q dispatches tokens between DP ranks holding different experts; "+
				"this layout (EP %d, DP %d) has no such exchange, so it changes nothing", s.pos("runtime.moe_a2a_backend"), rt.MoEA2ABackend, l.EP, l.DP))
		}
	}
	if sp := s.Disagg; sp != nil {
		// each pool without its own moe_a2a_backend runs the scenario's;
		// predict and plan price the decode pool's instance
		for _, p := range []*PoolSpec{&sp.Prefill, &sp.Decode} {
			if !p.A2ASet {
				p.A2A, p.A2ASet = s.Config.MoEA2A, true
			}
		}
		s.Config.MoEA2A = sp.Decode.A2A
	}
	switch {
	case w.Trace != "" && (w.Concurrency != nil || w.RequestRate != nil):
		return d.errorf("workload.trace", "a replayed trace sets the load: give workload.trace or workload.concurrency / request_rate, not both")
	case w.Concurrency != nil && w.RequestRate != nil:
		return d.errorf("workload.request_rate", "give workload.concurrency or workload.request_rate, not both")
	case w.Concurrency != nil:
		if err := CheckConcurrency(w.Concurrency); err != nil {
			return d.wrap("workload.concurrency", err)
		}
		v.Concurrency = w.Concurrency
	case w.RequestRate != nil:
		if err := CheckRates(w.RequestRate); err != nil {
			return d.wrap("workload.request_rate", err)
		}
		v.RequestRate = w.RequestRate
	default:
		v.Concurrency = s.Batches
	}
	v.Trace = w.Trace
	v.Burstiness = 1
	if w.Burstiness != nil {
		b := *w.Burstiness
		if !(b > 0) {
			return d.errorf("workload.burstiness", "%g must be positive (1 = Poisson, inf = constant intervals)", b)
		}
		v.Burstiness = b
	}
	if w.Requests != nil {
		if err := CheckRequests(*w.Requests); err != nil {
			return d.wrap("workload.requests", err)
		}
		v.Requests = *w.Requests
	}
	v.InputTokens, v.OutputTokens = DefaultInputTokens, DefaultOutputTokens
	for _, t := range []struct {
		p   *int
		key string
		dst *int
	}{{w.InputTokens, "workload.input_tokens", &v.InputTokens}, {w.OutputTokens, "workload.output_tokens", &v.OutputTokens}} {
		if t.p == nil {
			continue
		}
		if err := CheckTokens(*t.p); err != nil {
			return d.wrap(t.key, err)
		}
		*t.dst = *t.p
	}
	if w.RangeStyle != "" {
		st, err := serve.ParseRangeStyle(w.RangeStyle)
		if err != nil {
			return d.errorf("workload.range_style", "%v", err)
		}
		v.RangeStyle = st
	}
	if w.RangeRatio != nil {
		r := *w.RangeRatio
		switch {
		case v.RangeStyle == serve.RangeBelow && !(r >= 0 && r <= 1):
			return d.errorf("workload.range_ratio", "%g must be in [0, 1] with range_style \"below\" (1 = fixed lengths)", r)
		case v.RangeStyle == serve.RangeSymmetric && !(r >= 0 && r < 1):
			return d.errorf("workload.range_ratio", "%g must be in [0, 1)", r)
		}
		v.RangeRatio = r
	} else if v.RangeStyle == serve.RangeBelow {
		// The one-sided range's ratio 0 is [1, L], not fixed lengths:
		// the style alone would be a surprise.
		return d.errorf("workload.range_style", "\"below\" needs workload.range_ratio (1 = fixed lengths)")
	}
	if w.Seed != nil {
		if *w.Seed < 0 {
			return d.errorf("workload.seed", "%d must be >= 0", *w.Seed)
		}
		v.Seed = uint64(*w.Seed)
	}
	if rt.MaxNumBatchedTokens != nil {
		n := *rt.MaxNumBatchedTokens
		if n < 1 || n > sim.MaxChunk {
			return d.errorf("runtime.max_num_batched_tokens", "%d must be in [1, %d] tokens", n, sim.MaxChunk)
		}
		v.MaxNumBatchedTokens = n
	}
	if rt.MaxNumSeqs != nil {
		n := *rt.MaxNumSeqs
		if n < 0 || n > sim.MaxBatchSize || (n == 0 && !v.Engine.Info().UnlimitedSeqs) {
			return d.errorf("runtime.max_num_seqs", "%d must be in [1, %d]%s", n, sim.MaxBatchSize, unlimitedSeqs())
		}
		v.MaxNumSeqs = rt.MaxNumSeqs
	}
	if rt.MixedChunk != nil {
		if info := v.Engine.Info(); !info.MixedChunk {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.mixed_chunk is %s's; %s always mixes prefill chunks into decode steps, so it is ignored",
				s.pos("runtime.mixed_chunk"), engineTitles(func(i serve.EngineInfo) bool { return i.MixedChunk }), info.Title))
		}
		v.MixedChunk = rt.MixedChunk
	}
	v.AsyncScheduling = rt.AsyncScheduling
	v.EngineVersion = rt.EngineVersion
	if ver := rt.EngineVersion; ver != "" && !serve.VersionKnown(ver) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.engine_version %q does not read as MAJOR.MINOR[.PATCH]: the defaults that follow the version (async scheduling, vLLM's full-ISL admission and speculative host bubble, SGLang's mem_fraction_static and speculative worker) are the newest's",
			s.pos("runtime.engine_version"), ver))
	}
	if rt.PrefixCaching != nil {
		v.NoPrefixCache = !*rt.PrefixCaching
	}
	if err := s.buildPrefix(w); err != nil {
		return err
	}
	if err := s.buildSessions(w); err != nil {
		return err
	}
	if p := rt.TokenizeUsPerToken; p != nil {
		if !(*p >= 0 && *p <= 1e6) {
			return d.errorf("runtime.tokenize_us_per_token", "%g must be in [0, 1e6] microseconds per token (0 = requests reach the engine at their send)", *p)
		}
		sec := *p * 1e-6
		v.TokenizeTime = &sec
	}
	if p := rt.ScheduleConservativeness; p != nil {
		if !(*p >= 0 && *p <= 1e3) {
			return d.errorf("runtime.schedule_conservativeness", "%g must be in [0, 1000] (SGLang's default 1; 0 = admit by the chunk's KV alone)", *p)
		}
		if v.Engine != serve.SGLang {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.schedule_conservativeness is SGLang's; %s admits by the chunk's KV, so it is ignored",
				s.pos("runtime.schedule_conservativeness"), v.Engine.Info().Title))
		}
		v.ScheduleConservativeness = p
	}
	if err := s.buildPartialPrefills(rt); err != nil {
		return err
	}
	if rt.CUDAGraphMode != "" {
		m, err := parseCUDAGraphMode(rt.CUDAGraphMode)
		if err != nil {
			return d.wrap("runtime.cudagraph_mode", err)
		}
		if v.Engine != serve.VLLM {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.cudagraph_mode is %s's; %s has no such setting, so it is ignored",
				s.pos("runtime.cudagraph_mode"), serve.VLLM.Info().Title, v.Engine.Info().Title))
		}
		v.CUDAGraphMode = m
	}
	s.setCaptureSize()
	s.setProfile()
	s.Config.GPUMemoryUtilization = s.instanceFraction()
	if err := s.fractionError(s.Config); err != nil {
		return err
	}
	// Every point must make a valid serve.Config (memory is the sim's and
	// is checked when a point runs).
	for _, p := range v.Points() {
		c := s.serveBase(p)
		c.Memory = serve.Memory{KVBytesPerToken: 1, KVCapacity: 1, BlockSize: 1, Groups: 1}
		if err := s.validateServe(c); err != nil {
			return s.KeyError(err)
		}
	}
	return nil
}

// buildPrefix reads the shared-content keys of [workload].
func (s *Scenario) buildPrefix(w *rawWorkload) error {
	d := s.doc
	v := &s.Serving
	switch {
	case w.SystemPromptTokens != nil && w.PrefixHitRate != nil:
		return d.errorf("workload.prefix_hit_rate", "give workload.system_prompt_tokens or workload.prefix_hit_rate, not both")
	case w.SystemPromptTokens != nil:
		n := *w.SystemPromptTokens
		if n < 0 || n > sim.MaxContext {
			return d.errorf("workload.system_prompt_tokens", "%d must be in [0, %d] tokens", n, sim.MaxContext)
		}
		v.Prefix = &serve.PrefixLoad{SystemTokens: n}
	case w.PrefixHitRate != nil:
		h := *w.PrefixHitRate
		if !(h >= 0 && h <= 1) {
			return d.errorf("workload.prefix_hit_rate", "%g must be in [0, 1]", h)
		}
		v.Prefix = &serve.PrefixLoad{HitRate: h}
	}
	if w.HashBlockTokens != nil {
		n := *w.HashBlockTokens
		if n < 1 || n > sim.MaxContext {
			return d.errorf("workload.hash_block_tokens", "%d must be in [1, %d] tokens", n, sim.MaxContext)
		}
		v.HashBlockTokens = n
	}
	return nil
}

// setCaptureSize sets the simulator's CUDA-graph capture size to the
// engine's (decode steps above it are priced eagerly) and the batch sizes
// it pads decode steps up to (setCaptureBatches); the engine's settings
// are the same at every point.
func (s *Scenario) setCaptureSize() {
	if ps := s.Serving.Points(); len(ps) > 0 {
		c := s.serveBase(ps[0])
		s.Config.CaptureSize = serve.CaptureSize(&c, s.Config.GPU.Memory, s.Config.GPUs)
	}
	s.setCaptureBatches()
	s.setGraphMode()
}

// cudaGraphModes are vLLM's CUDAGraphMode values (vllm/config/compilation.py;
// docs/design/cuda_graphs.md @ vllm-project/vllm 0248dcd), as
// runtime.cudagraph_mode and --compilation-config's cudagraph_mode take
// them (case-insensitive, as vLLM's validator reads them), and how moecast
// prices each:
//   - NONE: no CUDA graph (as --enforce-eager, runtime.cuda_graphs = false);
//   - PIECEWISE: every step up to the capture size replays piecewise
//     graphs, attention launched eagerly between them (sim.Config.
//     DecodePiecewise); vLLM's default before v0.11.0 (vllm-project/vllm#25444);
//   - FULL_DECODE_ONLY: uniform decode steps replay full graphs, every
//     step with a prefill chunk runs without any graph, each kernel launched
//     from the host (sim.Config.EagerPrefill);
//   - FULL_AND_PIECEWISE: full graphs for decode steps, piecewise for mixed
//     and prefill steps; the default since v0.11.0, and moecast's without the key;
//   - FULL: full graphs for decode steps; mixed steps take a full graph
//     only where the attention backend supports it (AttentionCGSupport),
//     which moecast does not model: priced as FULL_AND_PIECEWISE.
var cudaGraphModes = []string{"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"}

// parseCUDAGraphMode returns the canonical name of a cudagraph_mode value.
func parseCUDAGraphMode(v string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(v))
	if slices.Contains(cudaGraphModes, u) {
		return u, nil
	}
	return "", fmt.Errorf("unknown cudagraph_mode %q (want one of %s)", v, strings.Join(cudaGraphModes, ", "))
}

// setGraphMode sets how the engine's steps launch their kernels beyond the
// capture size: SGLang's eager prefill (serve.EagerPrefill) and vLLM's
// runtime.cudagraph_mode (cudaGraphModes), the latter unless the
// cudagraph-mode mechanism is off.
func (s *Scenario) setGraphMode() {
	v := &s.Serving
	mode := v.CUDAGraphMode
	if v.Engine != serve.VLLM || v.NoCUDAGraphMode {
		mode = ""
	}
	s.Config.EagerPrefill = (serve.EagerPrefill(v.Engine) && !v.NoEagerPrefill) || mode == "FULL_DECODE_ONLY"
	s.Config.DecodePiecewise = mode == "PIECEWISE"
}

// setProfile sets the simulator's memory-profile run to the engine's at
// the scenario's token budget and sequence limit (serve.MemoryProfile:
// vLLM's profile run, SGLang's KV pool of mem_fraction_static - weights);
// aiconfigurator's fixed reserve with the memory-profile (vLLM) or
// sglang-kv-pool (SGLang) mechanism off.
func (s *Scenario) setProfile() {
	s.Config.Profile = sim.MemoryProfile{}
	v := &s.Serving
	if (v.Engine == serve.SGLang && v.SGLangReserve) || (v.Engine != serve.SGLang && v.FixedReserve) {
		return
	}
	c := s.serveBase(ServePoint{})
	p := serve.MemoryProfile(v.Engine, s.Config.GPU.Label, s.Config.GPU.Memory, c.MaxNumBatchedTokens, c.MaxNumSeqs)
	s.profileTerms(&p, v.Engine, s.Config.Graphs, s.Config.Model, c.MaxModelLen)
	s.Config.Profile = p
}

// profileTerms sets the terms of vLLM's profile run p that follow the
// engine's version (runtime.engine_version) for engine e, graphs (CUDA
// graphs on) and model m at max_model_len maxModelLen: the sampler's
// top-k/top-p path, the all-reduce fusion workspace and the indexer's
// workspace, each unless its mechanism is off. A plan's candidates take
// them too (PlanSpace).
func (s *Scenario) profileTerms(p *sim.MemoryProfile, e serve.Engine, graphs bool, m *model.Config, maxModelLen int) {
	v := &s.Serving
	if p.WeightsAndKV || p.Tokens <= 0 {
		return
	}
	p.SamplerSort = !v.NoSamplerSort && serve.SamplerSortDefault(e, v.EngineVersion)
	p.SamplerTriton = !v.NoSamplerTriton && serve.SamplerTritonDefault(e, v.EngineVersion)
	p.ARFusion = !v.NoARFusion && serve.ARFusionDefault(e, v.EngineVersion) && graphs && !dsv3NVFP4(m)
	p.FICutlassMoE = !v.NoFICutlassMoE && serve.FICutlassMoEDefault(e, v.EngineVersion)
	if !v.NoIndexerWorkspace && serve.IndexerWorkspaceDefault(e, v.EngineVersion) && maxModelLen > 0 {
		p.IndexerWorkspace, p.MaxModelLen = true, maxModelLen
	}
}

// vllmMaxModelLen is vLLM's default max_model_len for model m: its
// max_position_embeddings (capped at 2^24); 0 without a model.
func vllmMaxModelLen(m *model.Config) int {
	if m == nil {
		return 0
	}
	return min(m.MaxPosition, 1<<24)
}

// dsv3NVFP4 reports a DeepSeek-V3-architecture model with NVFP4 routed
// experts, for which vLLM turns the all-reduce + RMSNorm fusion off by
// default (DeepseekV3ForCausalLM.verify_and_update_config,
// vllm/model_executor/models/config.py @ ba2f0acc2, PR #34392).
func dsv3NVFP4(m *model.Config) bool {
	if m == nil {
		return false
	}
	a := m.Architecture
	return (a == "DeepseekV3ForCausalLM" || a == "DeepseekV32ForCausalLM") && m.Quant.RoutedExperts == dtype.NVFP4
}

// memFraction is the share of each GPU's memory the engine takes on the
// GPU and layout of cfg (one of the scenario's sim configs: the
// scenario's own or a disaggregated pool's): runtime.gpu_memory_utilization
// when the file (or a flag) gives it, SGLang's --mem-fraction-static
// among them; else the engine's default at the scenario's engine version
// (serve.DefaultMemFraction: vLLM 0.90, SGLang's by GPU memory, TP, DP
// attention, chunked_prefill_size and its drafter), vLLM's 0.90 with the
// sglang-mem-fraction mechanism off.
func (s *Scenario) memFraction(cfg sim.Config) float64 {
	if s.doc != nil && s.doc.raw.Runtime.GPUMemoryUtilization != nil {
		return *s.doc.raw.Runtime.GPUMemoryUtilization
	}
	v := &s.Serving
	if v.Engine != serve.SGLang || v.VLLMFraction {
		return DefaultGPUMemoryUtilization
	}
	c := s.serveBase(ServePoint{})
	in := serve.FractionInputs{GPUMemory: cfg.GPU.Memory, TP: cfg.GPUs, DP: 1, Version: v.EngineVersion}
	if cfg.Layout.DPAttention {
		in.DP = max(1, cfg.GPUs/cfg.Layout.AttentionTP())
	}
	if cfg.Model != nil {
		in.Vision = cfg.Model.Vision
	}
	return serve.DefaultMemFraction(&c, in)
}

// instanceFraction is the share of GPU memory of the instance s.Config
// describes: the decode pool's (poolFraction) when disaggregated, whose
// instance it is, else memFraction's.
func (s *Scenario) instanceFraction() float64 {
	if s.Disagg != nil {
		return s.poolFraction(s.Disagg.Decode, s.Config)
	}
	return s.memFraction(s.Config)
}

// fractionError is the error of an engine default share of GPU memory
// that leaves nothing (cfg.GPUMemoryUtilization, memFraction's, 0 or
// less): SGLang's mem_fraction_static on a GPU smaller than the memory its
// server keeps outside the fraction. It names the key that gives the
// GPU's memory; nil when the share is positive or the file gives it
// (sim rejects a given share outside (0, 1] at its own key).
func (s *Scenario) fractionError(cfg sim.Config) error {
	f := cfg.GPUMemoryUtilization
	if f > 0 || s.doc == nil || s.doc.raw.Runtime.GPUMemoryUtilization != nil {
		return nil
	}
	c := s.serveBase(ServePoint{})
	chunk := c.MaxNumBatchedTokens
	if chunk <= 0 {
		chunk = c.MaxPrefillTokens
	}
	reserved := unit.Bytes(float64(cfg.GPU.Memory) * (1 - f))
	key := "hardware.gpu"
	if k := "hardware.custom_gpu.memory"; s.Given(k) || slices.Contains(s.doc.overridden, k) {
		key = k
	}
	// SGLang's reserve takes 1.5 MiB per token of chunked_prefill_size
	// (from 0.5.3): a chunk whose share alone exceeds the GPU is the key
	// to change
	at := ""
	if serve.SGLangChunkReserve(s.Serving.EngineVersion) {
		at = fmt.Sprintf(" at max_num_batched_tokens (chunked_prefill_size) %d", chunk)
		if k := "runtime.max_num_batched_tokens"; s.doc.raw.Runtime.MaxNumBatchedTokens != nil && unit.Bytes(1.5*float64(chunk))*serve.MiB >= cfg.GPU.Memory {
			key = k
		}
	}
	version := "its newest version"
	if v := s.Serving.EngineVersion; v != "" {
		version = fmt.Sprintf("version %q", v)
	}
	return s.keyError(key, fmt.Sprintf("%s (%s) keeps %v of each GPU's %v outside its share of memory on %d %s%s: its default mem_fraction_static would be %.3f; give runtime.gpu_memory_utilization, a smaller chunk or a GPU with more memory",
		s.Serving.Engine.Info().Title, version, reserved, cfg.GPU.Memory, cfg.GPUs, plural(cfg.GPUs, "GPU"), at, f), nil)
}

// setCaptureBatches sets the simulator's CUDA-graph capture list to the
// engine's (serve.CaptureBatches: SGLang pads a decode batch to the next
// captured size).
func (s *Scenario) setCaptureBatches() {
	s.Config.CaptureBatches = nil
	if ps := s.Serving.Points(); len(ps) > 0 {
		c := s.serveBase(ps[0])
		s.Config.CaptureBatches = serve.CaptureBatches(&c, s.Config.GPU.Memory, s.Config.GPUs)
	}
}

// unlimitedSeqs is " (SGLang: 0 = no limit)": the engines where
// runtime.max_num_seqs 0 means no limit.
func unlimitedSeqs() string {
	t := engineTitles(func(i serve.EngineInfo) bool { return i.UnlimitedSeqs })
	if t == "" {
		return ""
	}
	return " (" + t + ": 0 = no limit)"
}

// engineTitles joins the titles of the engines whose info has a property.
func engineTitles(has func(serve.EngineInfo) bool) string {
	var out []string
	for _, e := range serve.Engines() {
		if i := e.Info(); has(i) {
			out = append(out, i.Title)
		}
	}
	return strings.Join(out, ", ")
}

// serveBase is the serve.Config of point p without Memory: the engine's
// defaults on the scenario's GPU, the keys given, speculative decoding.
func (s *Scenario) serveBase(p ServePoint) serve.Config {
	v := &s.Serving
	g := s.Config.GPU
	c := serve.DefaultConfig(v.Engine, g.Label, g.Memory)
	c.Spec = serve.SimSpec(s.Config.Spec)
	c.AsyncScheduling = serve.AsyncDefault(v.Engine, v.EngineVersion)
	c.ReserveFullISL = !v.NoFullISL && serve.ReserveFullISLDefault(v.Engine, v.EngineVersion)
	c.RecoverPreempted = !v.NoRecoverPreempted
	c.ScheduleAhead = !v.NoScheduleAhead
	if !v.NoHost {
		c.Host = serve.EngineHost(v.Engine)
	}
	if s.Config.Spec.Method == sim.SpecNgram {
		c.AsyncScheduling = false
	}
	if v.MaxNumBatchedTokens > 0 {
		c.MaxNumBatchedTokens = v.MaxNumBatchedTokens
	}
	if v.MaxNumSeqs != nil {
		c.MaxNumSeqs = *v.MaxNumSeqs
	}
	if v.MixedChunk != nil && v.Engine.Info().MixedChunk {
		c.MixedChunk = *v.MixedChunk
	}
	if v.AsyncScheduling != nil {
		c.AsyncScheduling = *v.AsyncScheduling
	}
	if c.Spec.DraftTokens > 0 && v.Engine == serve.SGLang && s.Config.Spec.Method != sim.SpecNgram {
		// SGLang's EAGLE/MTP worker: V1 (no overlap, one host
		// preparation per forward) by the version's default, unless
		// runtime.async_scheduling says which.
		sync := serve.SpecSyncDefault(v.Engine, v.EngineVersion) && !v.NoSpecSync
		if v.AsyncScheduling != nil {
			sync = !*v.AsyncScheduling
		}
		c.Spec.Sync = sync
		if sync {
			c.AsyncScheduling = false
		}
	}
	c.FrontEnd.PerInputToken = serve.TokenizeTime
	if v.TokenizeTime != nil {
		c.FrontEnd.PerInputToken = unit.Seconds(*v.TokenizeTime)
	}
	if v.ScheduleConservativeness != nil && v.Engine == serve.SGLang {
		c.ScheduleConservativeness = *v.ScheduleConservativeness
	}
	if v.Engine == serve.VLLM {
		c.LongPrefillTokenThreshold = v.LongPrefillTokenThreshold
		c.MaxNumPartialPrefills, c.MaxLongPartialPrefills = v.MaxNumPartialPrefills, v.MaxLongPartialPrefills
		c.PrefillScheduleInterval = v.PrefillScheduleInterval
		c.MaxModelLen = vllmMaxModelLen(s.Config.Model)
	}
	if v.Engine == serve.SGLang {
		c.PrefillDecodeInterval = v.PrefillDecodeInterval
		if !v.NoRecvInterval {
			c.SchedulerRecvInterval = v.SchedulerRecvInterval
		}
	}
	switch v.Engine {
	case serve.SGLang:
		c.CUDAGraphMax = v.CUDAGraphMaxBS
	case serve.VLLM:
		c.CUDAGraphMax = v.MaxCUDAGraphCaptureSize
		c.CUDAGraphSizes = v.CUDAGraphCaptureSizes
	}
	c.PooledDP = v.PooledDP
	c.PooledSGLangDP = v.PooledSGLangDP
	c.DecodeRecompute = v.DecodeRecompute
	c.Workload = serve.Workload{Requests: v.RequestsAt(p), RequestRate: math.Inf(1), Burstiness: v.Burstiness,
		InputTokens: v.InputTokens, OutputTokens: v.OutputTokens, RangeRatio: v.RangeRatio, RangeStyle: v.RangeStyle}
	if v.FixedLengths {
		c.Workload.RangeRatio, c.Workload.RangeStyle = 0, serve.RangeSymmetric
	}
	switch {
	case p.Replay:
		c.Workload.Requests, c.Workload.Trace = len(v.Replay), v.Replay
		// The mean lengths, for reports (the trace's own are simulated).
		var in, out int
		for _, q := range v.Replay {
			in += q.InputTokens
			out += q.OutputTokens
		}
		if n := len(v.Replay); n > 0 {
			c.Workload.InputTokens, c.Workload.OutputTokens = (in+n/2)/n, (out+n/2)/n
		}
	case p.Concurrency > 0:
		c.Workload.MaxConcurrency = p.Concurrency
	default:
		c.Workload.RequestRate = p.RequestRate
	}
	c.Workload.Prefix, c.Workload.HashBlockTokens = v.Prefix, v.HashBlockTokens
	if !p.Replay {
		c.Workload.Lengths, c.Workload.Turns, c.Workload.ThinkTime = v.Lengths, v.Turns, v.ThinkTime
	}
	c.NoPrefixCache = v.NoPrefixCache
	c.SLO = v.SLO
	c.Seed = v.Seed
	return c
}

// draftShare is the draft passes' share of a decode step's GPU time on sm:
// one sequence verifying k+1 tokens at a 1,024-token context, the time of
// the ops of the draft passes ("mtp pass ..." and "eagle3 ..." layers) over
// the step's (serve.Spec.DraftShare; the share moves little with the batch,
// the draft running one layer where the target runs all).
func draftShare(sm *sim.Sim, k int) (float64, error) {
	ops, err := sm.ExplainBatch([]sim.Seq{{Query: k + 1, Context: 1024}})
	if err != nil {
		return 0, err
	}
	var draft, all float64
	for _, o := range ops {
		t := o.Count * float64(o.Estimate.Time+o.Launch)
		all += t
		if strings.HasPrefix(o.Layer, "mtp pass") || strings.HasPrefix(o.Layer, "eagle3") {
			draft += t
		}
	}
	if !(all > 0) || !(draft < all) {
		return 0, fmt.Errorf("draft share of a decode step: draft %g s of %g s", draft, all)
	}
	return draft / all, nil
}

// ServeConfig is the serve.Config of point p for the simulator sm (built
// from s.Config): serveBase with serve.SimMemory. A *model.FieldError from serve comes
// back as an *Error naming the scenario key. The KV capacity may be 0 or
// less (the weights do not fit): callers check Memory.KVCapacity before
// serve.Run, which would reject it.
func (s *Scenario) ServeConfig(sm *sim.Sim, p ServePoint) (serve.Config, error) {
	c := s.serveBase(p)
	cfg := s.Config
	cfg.GPUMemoryUtilization = s.memFraction(cfg) // at this point's engine version
	if err := s.fractionError(cfg); err != nil {
		return c, err
	}
	mem, err := serve.SimMemory(cfg, sm, c.Engine)
	if err != nil {
		return c, s.KeyError(err)
	}
	if n := s.Serving.NumGPUBlocks; n > 0 && !s.Serving.NoGPUBlocks && c.Engine == serve.VLLM && mem.KVCapacity > 0 {
		// vLLM's --num-gpu-blocks-override replaces the block count its
		// memory profile gives (vllm-project/vllm
		// vllm/v1/core/kv_cache_utils.py, may_override_num_blocks: "if
		// vllm_config.cache_config.num_gpu_blocks_override is not None:
		// num_blocks = ..."); the blocks are per worker, one per GPU.
		// Only where the profile left memory for a cache: before the
		// override, get_kv_cache_configs' check_enough_kv_cache_memory
		// raises "No available memory for the cache blocks" when the
		// weights and the profile's peak take it all, so the engine
		// does not start (an override on a GPU too small for the
		// weights served them before).
		mem.KVCapacity = unit.Bytes(float64(n) * float64(mem.BlockSize) * float64(mem.KVBytesPerToken))
	}
	c.Memory = mem
	if v := &s.Serving; !v.NoSpecPrepBubble && c.AsyncScheduling && c.Spec.DraftTokens > 0 &&
		(s.Config.Spec.Method == sim.SpecMTP || s.Config.Spec.Method == sim.SpecEAGLE3) &&
		serve.SpecPrepBubbleDefault(c.Engine, v.EngineVersion) {
		share, err := draftShare(sm, s.Config.Spec.DraftTokens)
		if err != nil {
			return c, s.KeyError(err)
		}
		c.Spec.PrepBubble, c.Spec.DraftShare = true, share
	}
	if v := &s.Serving; v.MaxNumSeqs == nil && !v.NoMaxRunning {
		serve.SetDefaultMaxRunning(&c, cfg.Model)
	}
	if mem.KVCapacity > 0 {
		if err := s.validateServe(c); err != nil {
			return c, s.KeyError(err)
		}
	}
	return c, nil
}

// serveKeyError maps a *model.FieldError naming a serve.Config field to its scenario key, or nil.
func (s *Scenario) serveKeyError(err error) error {
	var fe *model.FieldError
	if !errors.As(err, &fe) {
		return nil
	}
	key, ok := serveKeys[fe.Field]
	if !ok {
		return nil
	}
	if fe.Field == "CUDAGraphMax" && s.Serving.Engine == serve.VLLM {
		key = "runtime.max_cudagraph_capture_size"
	}
	return s.keyError(key, fe.Msg, err)
}

// keyError is an *Error of key: at its line when the file sets it; when it
// does not (its default, or a flag's value), at no line of the file, which
// would blame a line that does not hold it, and the message says so.
func (s *Scenario) keyError(key, msg string, err error) *Error {
	if s.Given(key) && !slices.Contains(s.doc.overridden, key) {
		return &Error{File: s.File, Line: s.doc.line(key), Key: key, Msg: msg, Err: err}
	}
	how := "not set in the file, its default"
	if slices.Contains(s.doc.overridden, key) {
		how = "set by a flag"
	}
	return &Error{File: s.File, Key: key, Msg: "(" + how + ") " + msg, Err: err}
}

// serveKeys maps the serve.Config fields that serve's FieldErrors name to the
// scenario keys that set them.
var serveKeys = map[string]string{
	"Engine":                       "runtime.engine",
	"MaxNumBatchedTokens":          "runtime.max_num_batched_tokens",
	"MaxNumSeqs":                   "runtime.max_num_seqs",
	"MaxPrefillTokens":             "runtime.engine",
	"Host.PerStep":                 "runtime",
	"Host.PerSeq":                  "runtime",
	"Memory.KVBytesPerToken":       "model.kv_cache",
	"Memory.KVCapacity":            "runtime.gpu_memory_utilization",
	"Memory.BlockSize":             "runtime.engine",
	"Memory.Groups":                "parallel",
	"Spec.DraftTokens":             "speculative.draft_tokens",
	"Spec.Acceptance":              "speculative.acceptance",
	"Spec.Lookahead":               "speculative.draft_tokens",
	"Workload.Requests":            "workload.requests",
	"Workload.MaxConcurrency":      "workload.concurrency",
	"Workload.RequestRate":         "workload.request_rate",
	"Workload.Burstiness":          "workload.burstiness",
	"Workload.InputTokens":         "workload.input_tokens",
	"Workload.OutputTokens":        "workload.output_tokens",
	"Workload.RangeRatio":          "workload.range_ratio",
	"Workload.RangeStyle":          "workload.range_style",
	"Workload.Prefix":              "workload.prefix_hit_rate",
	"Workload.Prefix.SystemTokens": "workload.system_prompt_tokens",
	"Workload.Prefix.HitRate":      "workload.prefix_hit_rate",
	"Workload.HashBlockTokens":     "workload.hash_block_tokens",
	"Workload.Lengths":             "workload.lengths",
	"Workload.Turns":               "workload.turns",
	"Workload.ThinkTime":           "workload.think_time",
	"FrontEnd.PerRequest":          "runtime",
	"FrontEnd.PerInputToken":       "runtime.tokenize_us_per_token",
	"ScheduleConservativeness":     "runtime.schedule_conservativeness",
	"LongPrefillTokenThreshold":    "runtime.long_prefill_token_threshold",
	"MaxNumPartialPrefills":        "runtime.max_num_partial_prefills",
	"MaxLongPartialPrefills":       "runtime.max_long_partial_prefills",
	"MaxModelLen":                  "model",
	"PrefillDecodeInterval":        "runtime.prefill_decode_interval",
	"PrefillScheduleInterval":      "runtime.prefill_schedule_interval",
	"SchedulerRecvInterval":        "runtime.scheduler_recv_interval",
	"CUDAGraphMax":                 "runtime.cuda_graph_max_bs",
	"CUDAGraphSizes":               "runtime.cudagraph_capture_sizes",
	// [disagg.prefill] and [disagg.decode]'s own settings (DisaggConfig).
	"Disagg.Prefill.MaxNumBatchedTokens":   "disagg.prefill.max_num_batched_tokens",
	"Disagg.Decode.MaxNumBatchedTokens":    "disagg.decode.max_num_batched_tokens",
	"Disagg.Prefill.MaxPrefillTokens":      "disagg.prefill.max_prefill_tokens",
	"Disagg.Decode.MaxPrefillTokens":       "disagg.decode.max_prefill_tokens",
	"Disagg.Prefill.MaxNumSeqs":            "disagg.prefill.max_num_seqs",
	"Disagg.Decode.MaxNumSeqs":             "disagg.decode.max_num_seqs",
	"Disagg.Prefill.SchedulerRecvInterval": "disagg.prefill.scheduler_recv_interval",
	"Disagg.Decode.SchedulerRecvInterval":  "disagg.decode.scheduler_recv_interval",
}

// buildPartialPrefills reads vLLM's long_prefill_token_threshold,
// max_num_partial_prefills and max_long_partial_prefills and SGLang's
// prefill_decode_interval; a key of the other engine is a warning.
func (s *Scenario) buildPartialPrefills(rt *rawRuntime) error {
	d, v := s.doc, &s.Serving
	for _, k := range []struct {
		key    string
		val    *int
		dst    *int
		engine serve.Engine
		min    int
	}{
		{"runtime.long_prefill_token_threshold", rt.LongPrefillTokenThreshold, &v.LongPrefillTokenThreshold, serve.VLLM, 0},
		{"runtime.max_num_partial_prefills", rt.MaxNumPartialPrefills, &v.MaxNumPartialPrefills, serve.VLLM, 1},
		{"runtime.max_long_partial_prefills", rt.MaxLongPartialPrefills, &v.MaxLongPartialPrefills, serve.VLLM, 1},
		{"runtime.prefill_decode_interval", rt.PrefillDecodeInterval, &v.PrefillDecodeInterval, serve.SGLang, 0},
		{"runtime.scheduler_recv_interval", rt.SchedulerRecvInterval, &v.SchedulerRecvInterval, serve.SGLang, 1},
		{"runtime.cuda_graph_max_bs", rt.CUDAGraphMaxBS, &v.CUDAGraphMaxBS, serve.SGLang, 1},
		{"runtime.max_cudagraph_capture_size", rt.MaxCUDAGraphCaptureSize, &v.MaxCUDAGraphCaptureSize, serve.VLLM, 1},
		{"runtime.prefill_schedule_interval", rt.PrefillScheduleInterval, &v.PrefillScheduleInterval, serve.VLLM, 1},
		{"runtime.num_gpu_blocks", rt.NumGPUBlocks, &v.NumGPUBlocks, serve.VLLM, 1},
	} {
		if k.val == nil {
			continue
		}
		if n := *k.val; n < k.min || n > 1<<20 {
			return d.errorf(k.key, "%d must be in [%d, %d]", n, k.min, 1<<20)
		}
		if v.Engine != k.engine {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s is %s's; %s has no such setting, so it is ignored",
				s.pos(k.key), k.key, k.engine.Info().Title, v.Engine.Info().Title))
		}
		*k.dst = *k.val
	}
	if rt.CUDAGraphCaptureSizes != nil {
		const key = "runtime.cudagraph_capture_sizes"
		sizes := *rt.CUDAGraphCaptureSizes
		if len(sizes) == 0 {
			return d.errorf(key, "is empty: give the step sizes, in tokens, vLLM captures CUDA graphs for (or runtime.cuda_graphs = false)")
		}
		for _, n := range sizes {
			if n < 1 || n > 1<<20 {
				return d.errorf(key, "%d must be in [1, %d] tokens", n, 1<<20)
			}
		}
		if v.Engine != serve.VLLM {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s is vLLM's; %s has no such setting, so it is ignored",
				s.pos(key), key, v.Engine.Info().Title))
		}
		v.CUDAGraphCaptureSizes = slices.Clone(sizes)
	}
	s.warnScheduleInterval()
	return nil
}

// warnScheduleInterval says where vLLM's runtime.prefill_schedule_interval
// changes nothing: vLLM's releases throttle prefills only in the DP engine
// core (vllm-project/vllm `vllm/v1/engine/core.py` @ 00080ee:
// EngineCore._should_throttle_prefills returns False, overridden by
// DPEngineCoreProc; PR #54627, which would apply it to one engine, is
// open), so with one DP rank serve ignores it (serve.Config.
// PrefillScheduleInterval); a disaggregated run's pools are not given it.
// An engine_version before v0.25.0 may not take the flag: it came with
// PR #44558 (merged 2026-06), and the first release seen with it is
// v0.25.0 (SemiAnalysisAI/InferenceX @ d37b6fb, which adds it on the
// move from v0.21.0/v0.22.0 to v0.25.0); v0.23 and v0.24 are not
// checked.
func (s *Scenario) warnScheduleInterval() {
	v := &s.Serving
	n := v.PrefillScheduleInterval
	if n <= 1 || v.Engine != serve.VLLM {
		return
	}
	pos := s.pos("runtime.prefill_schedule_interval")
	if major, minor, ok := serve.ParseVersion(v.EngineVersion); ok && major == 0 && minor < 25 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: vLLM's --prefill-schedule-interval came with vllm-project/vllm PR #44558 (June 2026; first seen in v0.25.0): runtime.engine_version %q may not take it",
			pos, v.EngineVersion))
	}
	switch cfg := s.Config; {
	case s.Disagg != nil:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.prefill_schedule_interval %d is not modelled in a disaggregated run, so it is ignored", pos, n))
	case cfg.GPUs/cfg.Layout.AttentionTP() <= 1:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.prefill_schedule_interval %d: vLLM throttles prefills only with data parallelism (DPEngineCoreProc); with DP 1 it is ignored", pos, n))
	}
}

// moeA2ABackends maps runtime.moe_a2a_backend, the engines' names for their
// expert-parallel token exchange (SGLang --moe-a2a-backend, vLLM
// --all2all-backend), to sim.Config.MoEA2A: DeepEP or not. The backends
// that are not DeepEP price the exchange as before (every rank sees the DP
// group's tokens; the NCCL all-to-all model).
var moeA2ABackends = map[string]sim.A2A{
	"none": sim.A2ANone, "naive": sim.A2ANone, "allgather_reducescatter": sim.A2ANone, "pplx": sim.A2ANone,
	"deepep":                 sim.A2ADeepEP, // SGLang, --deepep-mode auto: normal for prefill, low-latency for decode
	"deepep_low_latency":     sim.A2ADeepEPLowLatency,
	"deepep_high_throughput": sim.A2ADeepEPNormal,
}

func moeA2ANames() []string {
	out := make([]string, 0, len(moeA2ABackends))
	for k := range moeA2ABackends {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sparseMLADefault says whether the scenario's DSA layers run as vLLM's
// FLASHMLA_SPARSE backend on a bf16 KV cache (sim.Config.SparseMLA): the
// engine is vLLM and the KV cache bf16. With an fp8 KV cache vLLM stores
// fp8_ds_mla and runs another kernel (the FP8 sparse decode kernel,
// flashmla_sparse.py _forward_fp8_kv_*), which is not modelled here.
func (s *Scenario) sparseMLADefault() bool {
	return s.Serving.Engine == serve.VLLM && s.Config.KVCache == dtype.KVBF16
}
