package serve

import (
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/sim"
	"math"
	"sync"
)

// SimCoster prices engine steps with a sim.Sim (sim.StepBatch): GEMMs, MoE
// and collectives at the step's combined token count, decode and prefill
// attention per sequence, and the launch costs the engine's CUDA-graph
// mode gives the step (sim/batch.go graphModeOf): a uniform decode step
// replays one full graph (each kernel's graph-replay cost, measured in
// kernels/testdata/measure_h200.json, is in its op time); a mixed or
// prefill step runs piecewise graphs with attention launched eagerly up to
// sim.CaptureTokens tokens and eager above, each eager kernel paying
// kernels.HostLaunchLatency (the measured eager PyTorch launch, 10.5 us)
// beyond its own time, or, with the scenarios' defaults
// (sim.Config.EngineLaunch, LaunchAhead), the engine's own host time per
// kernel over the whole step beyond the step's GPU time. The rest of a step's host work (scheduling, input
// preparation) is Config.Host, measured per engine (host.go), which
// SimConfig sets; the run adds it to the step or hides it behind the GPU
// (Config.AsyncScheduling).
//
// StepCost is memoised on the step's shape (sim.StepKey): a step whose
// passes sim prices at the same token counts and mean contexts as an
// earlier one gets the earlier result, which is exactly what sim would
// return. The cache holds at most memoLimit shapes and is emptied when
// full. A step it misses is priced from its key with sim.KeyTimes,
// which reuses the op estimates of earlier steps whose token counts they
// share (a closed loop's decode steps differ only in their contexts: only
// attention and the MLA module are priced again, the other ops' times
// come from a template recorded once per batch shape); the result is
// StepBatch's times, bit for bit. A step over DP ranks (StepCostN) is
// keyed from the busiest rank's batch times the ranks, never written out.
// The coster's sim.OpMemo also keeps the last routing load of each pass.
//
// A caller done with a coster may Release its cache storage for later
// costers (a plan's serving simulations share it rather than each
// allocating its own).
//
// A SimCoster is not safe for concurrent use (it reuses buffers and the
// cache): use one per Run. The Sim it wraps is, so several SimCosters may
// share one.
type SimCoster struct {
	sim *sim.Sim
	res sim.StepTimes
	key sim.StepKey
	err error
	// The cache (taken from cachePool on the first step, given back by
	// Release): memo maps a key's Hash to its newest entry (ent), whose
	// next links the older entries of the same hash (-1 ends). The
	// entries live in chunks of memoChunk, never moved or freed (kept for
	// reuse when the cache is emptied); n are in use.
	*stepCache
	n   int32
	ops *sim.OpMemo // made on the first step
	// Hits and Misses count the cache's answers.
	Hits, Misses int
}

type stepCost struct {
	t    unit.Seconds
	cats [cost.NumCategories]unit.Seconds
}

type memoEnt struct {
	key  sim.StepKey
	cost stepCost
	next int32
}

// stepCache is a SimCoster's cache storage: the hash index and the entry
// chunks. A plan runs hundreds of serving simulations of about a thousand
// distinct steps each; their costers share the storage through cachePool
// (Release) rather than each allocating and zeroing its own.
type stepCache struct {
	memo   map[uint64]int32
	chunks [][]memoEnt
}

var cachePool = sync.Pool{New: func() any { return &stepCache{memo: make(map[uint64]int32)} }}

// memoLimit bounds the cache (an entry is about 1 KB with the map's
// overhead: at most about 16 MB per coster).
const memoLimit = 1 << 14

// memoChunk is the cache entries allocated at a time (about 50 KB).
const memoChunk = 64

// ent is cache entry i.
func (c *SimCoster) ent(i int32) *memoEnt { return &c.chunks[i/memoChunk][i%memoChunk] }

// memoHashMask is ANDed into the cache's hashes: all ones, except in a
// test that makes every key collide.
var memoHashMask = ^uint64(0)

// NewSimCoster wraps s.
func NewSimCoster(s *sim.Sim) *SimCoster {
	return &SimCoster{sim: s}
}

// Release empties the cache and gives its storage to later SimCosters.
// The coster stays usable, its cache starting empty; its counters are
// kept.
func (c *SimCoster) Release() {
	if c.stepCache == nil {
		return
	}
	clear(c.memo)
	cachePool.Put(c.stepCache)
	c.stepCache, c.n = nil, 0
}

// StepCost implements StepCoster. A batch sim rejects (a chunk or context
// beyond sim's limits, a decode query that is not 1 or 1+K) costs 0 and
// is kept as Err.
func (c *SimCoster) StepCost(seqs []Seq) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	return c.StepCostN(seqs, 1)
}

// StepCostN implements repeatCoster: StepCost of n copies of seqs one
// after another (sim.KeyMemoN), without their being written out.
func (c *SimCoster) StepCostN(seqs []Seq, n int) (unit.Seconds, [cost.NumCategories]unit.Seconds) {
	var cats [cost.NumCategories]unit.Seconds
	if c.ops == nil {
		c.ops = c.sim.NewOpMemo()
	}
	if c.stepCache == nil {
		c.stepCache = cachePool.Get().(*stepCache)
	}
	key := &c.key
	err := c.sim.KeyMemoN(seqs, n, c.ops, key)
	var h uint64
	if err == nil {
		h = key.Hash() & memoHashMask
		head, ok := c.memo[h]
		for i := head; ok && i >= 0; i = c.ent(i).next {
			if e := c.ent(i); e.key == *key {
				c.Hits++
				return e.cost.t, e.cost.cats
			}
		}
		c.sim.KeyTimes(key, c.ops, &c.res)
	}
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		return 0, cats
	}
	c.Misses++
	cats = c.res.Cats
	if c.n >= memoLimit {
		clear(c.memo)
		c.n = 0
	}
	next, ok := c.memo[h]
	if !ok {
		next = -1
	}
	if int(c.n/memoChunk) == len(c.chunks) {
		c.chunks = append(c.chunks, make([]memoEnt, memoChunk))
	}
	*c.ent(c.n) = memoEnt{key: *key, cost: stepCost{t: c.res.Step, cats: cats}, next: next}
	c.memo[h] = c.n
	c.n++
	return c.res.Step, cats
}

// Err is the first error sim returned for a step, or nil. A Run whose
// coster has an Err is not a prediction.
func (c *SimCoster) Err() error { return c.err }

// SimMemory is the KV-cache model of the deployment cfg describes (s must
// be sim.New(cfg)) under engine e:
//
//   - KVBytesPerToken: sim's KV bytes per token per GPU (MLA latent
//     replicated over attention-TP ranks, GQA heads split, draft layers
//     included; sim.Memory.KVPerToken).
//   - KVCapacity: the usable KV memory per GPU, cfg's GPU memory x
//     cfg.GPUMemoryUtilization - sim's weights and reserve
//     (sim.Memory.Usable when cfg is s's own config; a point may take
//     another share, SGLang's default by engine version); 0 or less when
//     the weights do not fit.
//   - BlockSize: as the engine sets it for the attention backend. vLLM
//     (vllm/platforms/cuda.py, CudaPlatform.check_and_update_config):
//     MLA models run FlashMLA on sm_90 ("Forcing kv cache block size to 64
//     for FlashMLA backend") and CUTLASS MLA on sm_100 ("... to 128 for
//     CUTLASS_MLA backend"); other models and GPUs keep the default 16.
//     SGLang: page_size 1 (server_args.py default).
//   - Groups: the attention groups, GPUs / attention TP (DP attention
//     ranks; 1 without DP attention).
//   - SeqBlocks: for models with sliding-window or recurrent layers,
//     KVBytesPerToken counts only the layers whose KV grows with the
//     context, and each request holds SeqBlocks more for its window KV
//     (window x windowed bytes per token) and recurrent state (vLLM's
//     hybrid KV-cache manager gives those their own fixed-size pages).
func SimMemory(cfg sim.Config, s *sim.Sim, e Engine) (Memory, error) {
	p, err := s.Step(1, 1)
	if err != nil {
		return Memory{}, err
	}
	usable := unit.Bytes(float64(cfg.GPU.EngineMemory())*cfg.GPUMemoryUtilization) - p.Memory.Weights - p.Memory.Reserve
	m := Memory{KVBytesPerToken: p.Memory.KVPerToken, KVCapacity: usable,
		BlockSize: blockSizeFor(e, cfg.Model, cfg.GPU.Arch)}
	m.Groups = max(1, cfg.GPUs/cfg.Layout.AttentionTP())
	// Hybrid models: blocks count the growing KV; the windowed KV (at most
	// the window) and the recurrent state are a fixed charge per request.
	mem := p.Memory
	if grow := mem.KVPerToken - mem.KVWindowPerToken; grow > 0 && (mem.KVWindowPerToken > 0 || mem.StatePerSeq > 0) {
		fixed := float64(mem.StatePerSeq) + float64(mem.Window)*float64(mem.KVWindowPerToken)
		m.KVBytesPerToken = grow
		m.SeqBlocks = int(math.Ceil(fixed / (float64(m.BlockSize) * float64(grow))))
	}
	return m, nil
}

// blockSizeFor is the KV block (page) size engine e uses for model m on a GPU
// of architecture arch (the engine row's; see SimMemory).
func blockSizeFor(e Engine, m *model.Config, arch kernels.Arch) int {
	if !e.valid() {
		return vllmBlockSize(m, arch)
	}
	return engines[e].blockSize(m, arch)
}

// SimSpec is the scheduler's view of sim's speculative decoding: K drafts
// verified per step, the per-position acceptance, and vLLM's lookahead
// slots (K for MTP and EAGLE-3, whose drafter writes KV for its drafts; 0
// for n-gram drafting on the host).
func SimSpec(sp sim.Spec) Spec {
	if !sp.Active() {
		return Spec{}
	}
	out := Spec{DraftTokens: sp.DraftTokens, Acceptance: append([]float64(nil), sp.Acceptance...)}
	if sp.Method != sim.SpecNgram {
		out.Lookahead = sp.DraftTokens
	}
	return out
}

// SimConfig is DefaultConfig for engine e on cfg's GPU with SimMemory and
// SimSpec filled in and the engine's measured host work per step
// (EngineHost) at its newest version. Async scheduling is off with n-gram drafting, as vLLM
// turns it off with non-EAGLE/MTP speculative decoding (vllm-project/vllm
// async scheduling on by default since PRs #27614/#27914, with EAGLE/MTP
// since #31998). At its newest version vLLM admits by the whole sequence
// (ReserveFullISLDefault) and recovers a preempted request's cached blocks
// (RecoverPreempted), as the scenarios configure it; SGLang's
// max_running_requests is the one it derives from the KV pool
// (SetDefaultMaxRunning).
func SimConfig(cfg sim.Config, s *sim.Sim, e Engine) (Config, error) {
	c := DefaultConfig(e, cfg.GPU.Label, cfg.GPU.Memory)
	mem, err := SimMemory(cfg, s, e)
	if err != nil {
		return c, err
	}
	c.Memory = mem
	SetDefaultMaxRunning(&c, cfg.Model)
	c.Spec = SimSpec(cfg.Spec)
	c.Host = EngineHost(e)
	c.ReserveFullISL = ReserveFullISLDefault(e, "")
	c.RecoverPreempted = true
	if cfg.Spec.Method == sim.SpecNgram {
		c.AsyncScheduling = false
	}
	return c, nil
}
