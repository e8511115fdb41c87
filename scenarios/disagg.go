package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

// [disagg]: disaggregated prefill/decode instead of [parallel].
//
//	[disagg]
//	transfer = "nvlink4"   # fabric preset the KV cache crosses (or a NIC: ib-400, roce-400, ...)
//	router = "round-robin" # or "least-loaded"
//	[disagg.prefill]
//	workers = 1
//	tp = 8
//	ep = 1
//	dp = 1
//	dp_attention = false
//	[disagg.decode]
//	workers = 1
//	tp = 1
//	ep = 8
//	dp = 8
//	dp_attention = true
//	max_num_seqs = 256     # the pool's own --max-num-seqs (SGLang: --max-running-requests)
//	scheduler_recv_interval = 10   # the pool's own SGLang --scheduler-recv-interval (not with DP attention)
//	max_total_tokens = 524288      # the pool's own SGLang --max-total-tokens: KV-cache tokens per DP rank at most
//	gpu_memory_utilization = 0.83  # the pool's own share of GPU memory (SGLang: --mem-fraction-static)
//	max_num_batched_tokens = 16384 # the pool's own step budget (SGLang: --chunked-prefill-size)
//	max_prefill_tokens = 32768     # the pool's own SGLang --max-prefill-tokens
type rawDisagg struct {
	Transfer string   `toml:"transfer"`
	Router   string   `toml:"router"`
	Prefill  *rawPool `toml:"prefill"`
	Decode   *rawPool `toml:"decode"`
}

type rawPool struct {
	Workers     *int  `toml:"workers"`
	TP          *int  `toml:"tp"`
	EP          *int  `toml:"ep"`
	DP          *int  `toml:"dp"`
	DPAttention *bool `toml:"dp_attention"`
	// MoEA2ABackend is the pool's runtime.moe_a2a_backend, when its
	// instances run another than the scenario's (the pools are separate
	// engine instances, each with its own flags).
	MoEA2ABackend string `toml:"moe_a2a_backend"`
	// MaxNumSeqs is the pool's runtime.max_num_seqs (vLLM's
	// --max-num-seqs, SGLang's --max-running-requests), when its
	// instances are started with another than the scenario's.
	MaxNumSeqs *int `toml:"max_num_seqs"`
	// SchedulerRecvInterval is the pool's runtime.scheduler_recv_interval
	// (SGLang's --scheduler-recv-interval).
	SchedulerRecvInterval *int `toml:"scheduler_recv_interval"`
	// MaxTotalTokens is SGLang's --max-total-tokens of the pool's
	// instances: the KV cache of each attention DP rank holds at most
	// this many tokens.
	MaxTotalTokens *int `toml:"max_total_tokens"`
	// GPUMemoryUtilization is the pool's runtime.gpu_memory_utilization
	// (vLLM's --gpu-memory-utilization, SGLang's --mem-fraction-static).
	GPUMemoryUtilization *float64 `toml:"gpu_memory_utilization"`
	// MaxNumBatchedTokens is the pool's runtime.max_num_batched_tokens
	// (vLLM's --max-num-batched-tokens, SGLang's --chunked-prefill-size)
	// and MaxPrefillTokens SGLang's --max-prefill-tokens.
	MaxNumBatchedTokens *int `toml:"max_num_batched_tokens"`
	MaxPrefillTokens    *int `toml:"max_prefill_tokens"`
}

// DisaggSpec is a scenario's [disagg]: its pools, the transfer fabric and
// the router. The scenario's Config.Layout and GPUs are the decode pool's
// instance (what predict and plan price).
type DisaggSpec struct {
	Prefill, Decode PoolSpec
	Transfer        comm.Link
	Router          serve.Router
}

// PoolSpec is one pool: Workers instances of Layout.
type PoolSpec struct {
	Workers int
	Layout  model.Layout
	GPUs    int // per instance: tp x dp
	// A2A is the pool's expert-parallel exchange when A2ASet (the pool's
	// moe_a2a_backend); else the scenario's runtime.moe_a2a_backend.
	A2A    sim.A2A
	A2ASet bool
	// MaxNumSeqs is the pool's max_num_seqs; 0 = the scenario's
	// (serve.Pool.MaxNumSeqs).
	MaxNumSeqs int
	// SchedulerRecvInterval is the pool's scheduler_recv_interval; 0 =
	// the scenario's (serve.Pool.SchedulerRecvInterval).
	SchedulerRecvInterval int
	// MaxTotalTokens caps the KV cache of each of the pool's attention
	// DP ranks at this many tokens; 0 = no cap.
	MaxTotalTokens int
	// MemFraction is the pool's gpu_memory_utilization; 0 = the
	// scenario's (runtime.gpu_memory_utilization or the engine's
	// default for the pool's layout).
	MemFraction float64
	// MaxNumBatchedTokens and MaxPrefillTokens are the pool's
	// max_num_batched_tokens and max_prefill_tokens; 0 = the scenario's
	// (serve.Pool).
	MaxNumBatchedTokens, MaxPrefillTokens int
}

// config is c with the pool's layout and exchange.
func (p PoolSpec) config(c sim.Config) sim.Config {
	c.Layout, c.GPUs = p.Layout, p.GPUs
	if p.A2ASet {
		c.MoEA2A = p.A2A
	}
	return c
}

// poolBudget is the token budget p's instances run with where it is
// their own ([disagg.<pool>] max_num_batched_tokens, with the
// pool-prefill-budget mechanism on); 0: the scenario's.
func (s *Scenario) poolBudget(p PoolSpec) int {
	if s.Serving.NoPoolBudget {
		return 0
	}
	return p.MaxNumBatchedTokens
}

// poolSeqs is the max_num_seqs p's instances run with where it is their
// own ([disagg.<pool>] max_num_seqs, with the pool-max-seqs mechanism on);
// 0: the scenario's.
func (s *Scenario) poolSeqs(p PoolSpec) int {
	if s.Serving.SharedPoolSeqs {
		return 0
	}
	return p.MaxNumSeqs
}

// poolConfig is the sim config of pool p: the scenario's on the pool's
// layout, with the CUDA-graph capture size and list of an instance
// started with the pool's own token budget and max_num_seqs (vLLM filters
// its capture sizes by --max-num-batched-tokens and by default captures
// up to min(2 x max_num_seqs x (1 + K), 512) tokens, both its own
// instance's: serve.CaptureSize), unless the capture-size or
// graph-padding mechanism is off.
func (s *Scenario) poolConfig(p PoolSpec) sim.Config {
	cfg := p.config(s.Config)
	ps := s.Serving.Points()
	b, n := s.poolBudget(p), s.poolSeqs(p)
	if (b > 0 || n > 0) && len(ps) > 0 {
		c := s.serveBase(ps[0])
		if b > 0 {
			c.MaxNumBatchedTokens = b
		}
		if n > 0 {
			c.MaxNumSeqs = n
		}
		if !s.Serving.NoCaptureSize {
			cfg.CaptureSize = serve.CaptureSize(&c, s.Config.GPU.Memory, s.Config.GPUs)
		}
		if !s.Serving.NoGraphPadding {
			cfg.CaptureBatches = serve.CaptureBatches(&c, s.Config.GPU.Memory, s.Config.GPUs)
		}
	}
	return cfg
}

// validateServe is c.Validate, for a disaggregated scenario before
// DisaggConfig builds its pools per point with the pools' own token budgets
// (the capture sizes are checked against each pool's).
func (s *Scenario) validateServe(c serve.Config) error {
	if sp := s.Disagg; sp != nil {
		return c.ValidatePoolBudgets(s.poolBudget(sp.Prefill), s.poolBudget(sp.Decode))
	}
	return c.Validate()
}

var routers = map[string]serve.Router{"round-robin": serve.RoundRobin, "least-loaded": serve.LeastLoaded, "prefix-aware": serve.PrefixAware}

// buildDisagg reads [disagg] (in place of [parallel]).
func (s *Scenario) buildDisagg() error {
	d := s.doc
	r := d.raw.Disagg
	if p := d.raw.Parallel; p.TP != nil || p.EP != nil || p.DP != nil || p.DPAttention != nil {
		return d.errorf("parallel", "[parallel] and [disagg] exclude each other: a disaggregated deployment gives each pool's layout in [disagg.prefill] and [disagg.decode]")
	}
	spec := &DisaggSpec{}
	if r.Transfer == "" {
		return d.errorf("disagg.transfer", "missing: the fabric the KV cache crosses (%s)", strings.Join(comm.LinkNames(), ", "))
	}
	l, ok := comm.LookupLink(r.Transfer)
	if !ok {
		return d.errorf("disagg.transfer", "unknown transfer fabric %q (want %s)", r.Transfer, strings.Join(comm.LinkNames(), ", "))
	}
	spec.Transfer = l
	if r.Router != "" {
		rt, ok := routers[r.Router]
		if !ok {
			return d.errorf("disagg.router", "unknown router %q (want round-robin, least-loaded or prefix-aware)", r.Router)
		}
		spec.Router = rt
	}
	for _, p := range []struct {
		name string
		raw  *rawPool
		dst  *PoolSpec
	}{{"prefill", r.Prefill, &spec.Prefill}, {"decode", r.Decode, &spec.Decode}} {
		key := "disagg." + p.name
		if p.raw == nil {
			return d.errorf(key, "missing: [%s] gives the %s pool's workers and layout", key, p.name)
		}
		get := func(v *int, k string, def int) (int, error) {
			if v == nil {
				return def, nil
			}
			if *v <= 0 || *v > sim.MaxRanks {
				return 0, d.errorf(key+"."+k, "%d must be in [1, %d]", *v, sim.MaxRanks)
			}
			return *v, nil
		}
		var err error
		if p.dst.Workers, err = get(p.raw.Workers, "workers", 1); err != nil {
			return err
		}
		tp, err := get(p.raw.TP, "tp", 1)
		if err != nil {
			return err
		}
		ep, err := get(p.raw.EP, "ep", 1)
		if err != nil {
			return err
		}
		dp, err := get(p.raw.DP, "dp", 1)
		if err != nil {
			return err
		}
		if tp*dp > sim.MaxRanks {
			return d.errorf(key+".dp", "tp x dp = %d x %d exceeds the limit of %d GPUs", tp, dp, sim.MaxRanks)
		}
		p.dst.Layout = model.Layout{TP: tp, EP: ep, DP: dp}
		if p.raw.DPAttention != nil {
			p.dst.Layout.DPAttention = *p.raw.DPAttention
		}
		p.dst.GPUs = tp * dp
		if b := p.raw.MoEA2ABackend; b != "" {
			a2a, ok := moeA2ABackends[b]
			if !ok {
				return d.errorf(key+".moe_a2a_backend", "unknown backend %q (want %s)", b, strings.Join(moeA2ANames(), ", "))
			}
			p.dst.A2A, p.dst.A2ASet = a2a, true
		}
		if n := p.raw.MaxNumSeqs; n != nil {
			if *n < 1 || *n > sim.MaxBatchSize {
				return d.errorf(key+".max_num_seqs", "%d must be in [1, %d]", *n, sim.MaxBatchSize)
			}
			p.dst.MaxNumSeqs = *n
		}
		if n := p.raw.SchedulerRecvInterval; n != nil {
			if *n < 1 || *n > 1<<20 {
				return d.errorf(key+".scheduler_recv_interval", "%d must be in [1, %d]", *n, 1<<20)
			}
			if g := p.dst.GPUs / p.dst.Layout.AttentionTP(); *n > 1 && g > 1 {
				return d.errorf(key+".scheduler_recv_interval", "%d needs dp_attention false (SGLang's SchedulerRecvSkipper asserts not enable_dp_attention), the pool has %d attention DP ranks", *n, g)
			}
			p.dst.SchedulerRecvInterval = *n
		}
		if n := p.raw.MaxTotalTokens; n != nil {
			if *n < 1 || *n > 1<<30 {
				return d.errorf(key+".max_total_tokens", "%d must be in [1, %d]", *n, 1<<30)
			}
			p.dst.MaxTotalTokens = *n
		}
		if f := p.raw.GPUMemoryUtilization; f != nil {
			if !(*f > 0 && *f <= 1) {
				return d.errorf(key+".gpu_memory_utilization", "%g must be in (0, 1]", *f)
			}
			p.dst.MemFraction = *f
		}
		for _, k := range []struct {
			key string
			v   *int
			dst *int
		}{{"max_num_batched_tokens", p.raw.MaxNumBatchedTokens, &p.dst.MaxNumBatchedTokens}, {"max_prefill_tokens", p.raw.MaxPrefillTokens, &p.dst.MaxPrefillTokens}} {
			if k.v == nil {
				continue
			}
			if *k.v < 1 || *k.v > sim.MaxChunk {
				return d.errorf(key+"."+k.key, "%d must be in [1, %d] tokens", *k.v, sim.MaxChunk)
			}
			*k.dst = *k.v
		}
		if e := d.raw.Runtime.Engine; e != "" && e != "sglang" {
			for _, k := range []string{"scheduler_recv_interval", "max_total_tokens", "max_prefill_tokens"} {
				if s.Given(key + "." + k) {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s.%s is SGLang's; engine %q has no such setting, so it is ignored", s.pos(key+"."+k), key, k, e))
				}
			}
		}
	}
	total := spec.Prefill.Workers*spec.Prefill.GPUs + spec.Decode.Workers*spec.Decode.GPUs
	if g := d.raw.Hardware.GPUs; g != nil && *g != total {
		return d.errorf("hardware.gpus", "%d GPUs, but the pools hold %d (prefill %d x %d + decode %d x %d)", *g, total,
			spec.Prefill.Workers, spec.Prefill.GPUs, spec.Decode.Workers, spec.Decode.GPUs)
	}
	s.Disagg = spec
	s.Config.GPUs = spec.Decode.GPUs
	s.Config.Layout = spec.Decode.Layout
	return nil
}

// poolKeys maps a layout field to its key in a pool's table.
var poolKeys = map[string]string{"TP": "tp", "EP": "ep", "DP": "dp", "Layout": "", "GPUs": ""}

// DisaggSims builds the simulators of the two pools (prefill, decode); a
// layout the model or the engine cannot run is an *Error at the pool's
// key.
func (s *Scenario) DisaggSims() (*sim.Sim, *sim.Sim, error) {
	if s.Disagg == nil {
		return nil, nil, fmt.Errorf("%s: no [disagg]", s.File)
	}
	var out [2]*sim.Sim
	for i, p := range []struct {
		name string
		spec PoolSpec
	}{{"prefill", s.Disagg.Prefill}, {"decode", s.Disagg.Decode}} {
		key := "disagg." + p.name
		cfg := s.poolConfig(p.spec)
		cfg.GPUMemoryUtilization = s.poolFraction(p.spec, cfg)
		if err := s.fractionError(cfg); err != nil {
			return nil, nil, err
		}
		sm, err := sim.New(cfg)
		if err != nil {
			k := key
			var le *model.LayoutError
			var fe *model.FieldError
			switch {
			case errors.As(err, &le):
				if f := poolKeys[le.Field]; f != "" {
					k += "." + f
				}
				return nil, nil, &Error{File: s.File, Line: s.doc.line(k), Key: k, Msg: le.Msg, Err: err}
			case errors.As(err, &fe) && strings.HasPrefix(fe.Field, "Layout"):
				if f := poolKeys[strings.TrimPrefix(fe.Field, "Layout.")]; f != "" {
					k += "." + f
				}
				return nil, nil, &Error{File: s.File, Line: s.doc.line(k), Key: k, Msg: fe.Msg, Err: err}
			}
			return nil, nil, s.KeyError(err)
		}
		out[i] = sm
	}
	return out[0], out[1], nil
}

// poolFraction is the share of GPU memory p's instances run with: the
// pool's gpu_memory_utilization, else the scenario's for the pool's
// layout (memFraction).
func (s *Scenario) poolFraction(p PoolSpec, cfg sim.Config) float64 {
	if p.MemFraction > 0 && !s.Serving.NoPoolFraction {
		return p.MemFraction
	}
	return s.memFraction(cfg)
}

// DisaggConfig fills c (a point's serve.Config) with the pools of
// [disagg] from the pools' simulators: their KV memory and step costers,
// the transfer priced per GPU (each GPU of the prefill instance sends
// its own share of the KV cache over its own link).
func (s *Scenario) DisaggConfig(c *serve.Config, psm, dsm *sim.Sim) error {
	sp := s.Disagg
	mk := func(p PoolSpec, sm *sim.Sim) (serve.Pool, error) {
		cfg := s.poolConfig(p)
		cfg.GPUMemoryUtilization = s.poolFraction(p, cfg) // the pool's layout, at this point's engine version
		if err := s.fractionError(cfg); err != nil {
			return serve.Pool{}, err
		}
		mem, err := serve.SimMemory(cfg, sm, c.Engine)
		if err != nil {
			return serve.Pool{}, s.KeyError(err)
		}
		if n := p.MaxTotalTokens; n > 0 && !s.Serving.NoPoolTokens && c.Engine == serve.SGLang {
			// SGLang's model runner takes min(profiled tokens,
			// --max-total-tokens) as its KV pool (sgl-project/sglang
			// `python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py`
			// @ 001ccef, init_memory); each attention DP rank runs a
			// model runner of its own, so the cap is per rank, which is
			// what a group's KVCapacity / KVBytesPerToken counts.
			mem.KVCapacity = min(mem.KVCapacity, unit.Bytes(float64(n)*float64(mem.KVBytesPerToken)))
		}
		pool := serve.Pool{Workers: p.Workers, GPUs: p.GPUs, Memory: mem, Coster: serve.NewSimCoster(sm)}
		pool.MaxNumSeqs = s.poolSeqs(p)
		if !s.Serving.NoPoolRecv && c.Engine == serve.SGLang {
			pool.SchedulerRecvInterval = p.SchedulerRecvInterval
		}
		if !s.Serving.NoPoolBudget {
			pool.MaxNumBatchedTokens = p.MaxNumBatchedTokens
			if c.Engine == serve.SGLang {
				pool.MaxPrefillTokens = p.MaxPrefillTokens
			}
		}
		return pool, nil
	}
	pre, err := mk(sp.Prefill, psm)
	if err != nil {
		return err
	}
	dec, err := mk(sp.Decode, dsm)
	if err != nil {
		return err
	}
	c.Memory = dec.Memory
	// The engine's KV transfer: vLLM's decode instance pulls it, SGLang's
	// prefill instance pushes it (serve.PullsKV).
	c.Disagg = &serve.Disagg{Prefill: pre, Decode: dec, KVBytesPerToken: pre.Memory.KVBytesPerToken,
		TransferBandwidth: float64(sp.Transfer.BW), TransferLatency: sp.Transfer.Latency, Router: sp.Router,
		Pull: serve.PullsKV(c.Engine) && !s.Serving.PushKV}
	if err := c.ValidateRankShares(); err != nil {
		return s.KeyError(err)
	}
	return nil
}
