package sim

import (
	"fmt"
	"math"
	"sort"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/kernels"
)

// Seq is one sequence in a step.
type Seq struct {
	// Query is the new tokens this step: 1 for a decode, the chunk length
	// for a prefill chunk. With speculative decoding a decode is a verify of
	// K+1 tokens plus the draft passes, priced by the Spec config: Query
	// may then be 1 or K+1.
	Query int
	// Context is the tokens already in the KV cache before this step. A
	// decode attends Context keys (as Step's context); a prefill chunk
	// attends its prefix and, causally, its own tokens.
	Context int
	// Prefill is true for a prefill chunk, false for a decode.
	Prefill bool
}

// MaxChunk bounds one prefill chunk's query tokens.
const MaxChunk = 1 << 20

// BatchResult is the cost of one engine step over a batch of sequences.
type BatchResult struct {
	Step      cost.Estimate
	Breakdown [cost.NumCategories]cost.Estimate
	// Tokens is the query tokens the target model runs, summed: K+1 (or 1)
	// per decode and each chunk's Query.
	Tokens int
	// Decodes and Prefills count the sequences of each kind;
	// PrefillTokens is the prefill chunks' query tokens summed.
	Decodes, Prefills, PrefillTokens int
}

// mix is a step's batch summarised: what the ops' costs depend on. Sums
// are over all sequences of the step (all attention groups); Sim.pass
// takes the busiest group's share.
type mix struct {
	dec                    int   // decode sequences
	decCtx, decIdx, decWin int64 // their contexts summed: as given, capped at the DSA top-k, at the sliding window
	pre                    int   // prefill chunks
	preTok                 int64 // their query tokens summed
	prefix                 int64 // their contexts summed (prefix tokens up-projected by MLA prefill)
	// keys read and (query, key) pairs attended by the chunks: causal,
	// and capped at the sliding window or the DSA top-k.
	keys, winKeys, idxKeys    int64
	pairs, winPairs, idxPairs float64
	// The later draft passes run one token per sequence: every sequence as
	// a decode at its context after the step's tokens for prefill chunks.
	allCtx, allIdx, allWin int64
}

// capCtx is min(c, cap), or c when cap <= 0.
func capCtx(c, limit int) int {
	if limit > 0 && c > limit {
		return limit
	}
	return c
}

// uniform is the mix of batch decodes at context each (Step).
func (s *Sim) uniform(batch, context int) mix {
	b := int64(batch)
	m := mix{dec: batch, decCtx: b * int64(context)}
	m.decIdx = b * int64(capCtx(context, s.idxCap()))
	m.decWin = b * int64(capCtx(context, s.cfg.Model.Window()))
	m.allCtx, m.allIdx, m.allWin = m.decCtx, m.decIdx, m.decWin
	return m
}

// idxCap is the DSA top-k that caps the keys MLA attention reads, or 0.
func (s *Sim) idxCap() int { return s.idxTopK }

// summarise builds the mix of seqs, checking each sequence.
func (s *Sim) summarise(seqs []Seq) (mix, error) { return s.summariseN(seqs, 1) }

// summariseN is summarise of n copies of seqs one after another (n >= 1),
// without writing them out: the integer sums of one copy times n (exact)
// and the float sums (the chunks' attended pairs) added copy after copy,
// in the order summarise adds them.
func (s *Sim) summariseN(seqs []Seq, n int) (mix, error) {
	var m mix
	win := s.cfg.Model.Window()
	idx := s.idxCap()
	if len(seqs) == 0 || n < 1 {
		return m, fmt.Errorf("step batch: no sequences")
	}
	if len(seqs) > MaxBatchSize/n {
		return m, fmt.Errorf("step batch: %d sequences exceed the limit of %d", len(seqs)*n, MaxBatchSize)
	}
	for i := range seqs {
		q := &seqs[i]
		if q.Prefill {
			if q.Query < 1 || q.Query > MaxChunk {
				return m, fmt.Errorf("step batch: seq %d: prefill query must be in [1, %d] tokens, got %d", i, MaxChunk, q.Query)
			}
			if q.Context < 0 || q.Context > MaxContext-q.Query {
				return m, fmt.Errorf("step batch: seq %d: prefill context must be in [0, %d] tokens, got %d", i, MaxContext-q.Query, q.Context)
			}
			m.pre++
			m.preTok += int64(q.Query)
			m.prefix += int64(q.Context)
			m.keys += int64(q.Context + q.Query)
			m.winKeys += int64(capCtx(q.Context+q.Query, win))
			m.idxKeys += int64(capCtx(q.Context+q.Query, idx))
			m.pairs += kernels.CausalPairs(q.Query, q.Context, 0)
			m.winPairs += kernels.CausalPairs(q.Query, q.Context, win)
			m.idxPairs += kernels.CausalPairs(q.Query, q.Context, idx)
			after := q.Context + q.Query
			m.allCtx += int64(after)
			m.allIdx += int64(capCtx(after, idx))
			m.allWin += int64(capCtx(after, win))
			continue
		}
		if q.Query != 1 && q.Query != s.queries {
			return m, fmt.Errorf("step batch: seq %d: decode query must be 1 (or %d with speculative decoding), got %d", i, s.queries, q.Query)
		}
		if q.Context < 1 || q.Context > MaxContext {
			return m, fmt.Errorf("step batch: seq %d: decode context must be in [1, %d] tokens, got %d", i, MaxContext, q.Context)
		}
		m.dec++
		c := int64(q.Context)
		ci, cw := int64(capCtx(q.Context, idx)), int64(capCtx(q.Context, win))
		m.decCtx += c
		m.decIdx += ci
		m.decWin += cw
		m.allCtx += c
		m.allIdx += ci
		m.allWin += cw
	}
	if n > 1 {
		m.scale(seqs, n, win, idx)
	}
	return m, nil
}

// scale turns m, the mix of one copy of seqs, into that of n copies
// (summariseN).
func (m *mix) scale(seqs []Seq, n, win, idx int) {
	k := int64(n)
	m.dec *= n
	m.decCtx, m.decIdx, m.decWin = m.decCtx*k, m.decIdx*k, m.decWin*k
	m.pre *= n
	m.preTok, m.prefix = m.preTok*k, m.prefix*k
	m.keys, m.winKeys, m.idxKeys = m.keys*k, m.winKeys*k, m.idxKeys*k
	m.allCtx, m.allIdx, m.allWin = m.allCtx*k, m.allIdx*k, m.allWin*k
	if m.pre == 0 {
		return // no chunk: no pair sums to add (a decode-only step)
	}
	for range n - 1 {
		for i := range seqs {
			q := &seqs[i]
			if !q.Prefill {
				continue
			}
			m.pairs += kernels.CausalPairs(q.Query, q.Context, 0)
			m.winPairs += kernels.CausalPairs(q.Query, q.Context, win)
			m.idxPairs += kernels.CausalPairs(q.Query, q.Context, idx)
		}
	}
}

// StepBatch prices one engine step over seqs: decodes (verifies with
// speculative decoding) and prefill chunks together. GEMMs, MoE and
// collectives run once at the combined token count; attention splits into
// decode attention over the decode sequences and prefill attention over
// the chunks (see the package doc). A batch of n decodes at context c
// gives exactly Step(n, c). It does not allocate.
func (s *Sim) StepBatch(seqs []Seq, out *BatchResult) error {
	return s.StepBatchMemo(seqs, out, nil)
}

// StepBatchMemo is StepBatch reusing the estimates memo holds for ops
// whose inputs equal those of an earlier step priced with it (see
// OpMemo); the result is the same as StepBatch's, bit for bit. memo nil
// or made by another Sim is not used.
func (s *Sim) StepBatchMemo(seqs []Seq, out *BatchResult, memo *OpMemo) error {
	m, err := s.summarise(seqs)
	if err != nil {
		return err
	}
	if memo != nil && memo.sim != s {
		memo = nil
	}
	*out = BatchResult{}
	var pt Point
	s.evalMix(&m, &pt, memo)
	out.Step, out.Breakdown = pt.Step, pt.Breakdown
	out.Decodes, out.Prefills = m.dec, m.pre
	out.PrefillTokens = int(m.preTok)
	out.Tokens = m.dec*s.queries + int(m.preTok)
	return nil
}

// evalMix evaluates every block over the mix and fills pt's Step and
// Breakdown.
func (s *Sim) evalMix(m *mix, pt *Point, memo *OpMemo) {
	var passes [numPasses]pass
	for k := passKind(0); k < numPasses; k++ {
		if s.usedPasses&(1<<k) != 0 {
			passes[k] = s.pass(m, k)
		}
	}
	g := s.graphModeOf(m, &passes[passTarget])
	for k := range passes {
		passes[k].graph = g
	}
	md := modeOf(m)
	var a accum
	var cache [maxShared]cost.Estimate
	for bi := range s.blocks {
		blk := &s.blocks[bi]
		s.evalBlock(blk, md, &passes[blk.pass], &cache, &a, nil, memo)
	}
	if s.cfg.LaunchAhead {
		a.ahead()
	}
	a.finish(pt)
}

// graphMode is how the engine launches a step's kernels.
type graphMode uint8

const (
	graphFull      graphMode = iota // one CUDA graph replay: no host launch per kernel
	graphPiecewise                  // CUDA graph pieces with attention launched eagerly between them
	graphNone                       // every kernel launched from the host
)

// CaptureTokens is the largest step (tokens per rank) vLLM captures CUDA
// graphs for: max_cudagraph_capture_size = min(2·max_num_seqs, 512)
// (vllm/config/vllm.py set_cudagraph_sizes), 512 at the default
// max_num_seqs of 1024 on a GPU of at least 70 GiB. Config.CaptureSize
// replaces it when set.
const CaptureTokens = 512

// graphModeOf follows vLLM V1's cudagraph dispatch (FULL_AND_PIECEWISE,
// docs/design/cuda_graphs.md): uniform decode steps (every query 1 or
// 1+K) replay full graphs up to Config.CaptureSize tokens per rank (no
// limit when 0) and run eagerly above it; mixed and prefill steps run
// piecewise graphs with attention eager up to the capture size
// (CaptureTokens when 0), and eager above it; with Config.EagerPrefill
// (SGLang; vLLM's FULL_DECODE_ONLY) every step with a prefill chunk is
// eager, and with Config.DecodePiecewise (vLLM's PIECEWISE) decode steps
// run piecewise graphs as mixed steps do. Without runtime.cuda_graphs
// every step is eager. Eager kernels pay kernels.Costs.LaunchCost: the
// host launch time beyond the op's own.
func (s *Sim) graphModeOf(m *mix, target *pass) graphMode {
	capture := s.cfg.CaptureSize
	switch {
	case !s.cfg.Graphs:
		return graphNone
	case m.pre == 0:
		if capture > 0 && target.attn > capture {
			return graphNone
		}
		if s.cfg.DecodePiecewise {
			return graphPiecewise
		}
		return graphFull
	case s.cfg.EagerPrefill:
		return graphNone
	case capture == 0:
		capture = CaptureTokens
	}
	if target.attn <= capture {
		return graphPiecewise
	}
	return graphNone
}

// padDecode pads a decode-only pass's sequences per rank to the smallest
// captured batch size at least as large (Config.CaptureBatches), as
// SGLang's CudaGraphRunner.replay_prepare does (sgl-project/sglang
// `python/sglang/srt/model_executor/cuda_graph_runner.py` @ 0021673:
// `bs = capture_bs[bisect_left(capture_bs, raw_bs)]`, the padding rows'
// seq_lens set to the attention backend's seq_len_fill_value, 0 or 1):
// every op runs at the padded size and the padding rows attend one key
// each, so the mean contexts take them at 1. Above the largest captured
// size nothing is padded (the step runs eagerly: graphModeOf).
func (s *Sim) padDecode(p *pass) {
	list := s.cfg.CaptureBatches
	i := sort.SearchInts(list, p.seq)
	if p.seq < 1 || i == len(list) || list[i] == p.seq {
		return
	}
	n, extra := int64(p.seq), int64(list[i]-p.seq)
	p.ctx = ceilMean(int64(p.ctx)*n+extra, int(n+extra))
	p.idxCtx = ceilMean(int64(p.idxCtx)*n+extra, int(n+extra))
	p.winCtx = ceilMean(int64(p.winCtx)*n+extra, int(n+extra))
	p.seq = list[i]
}

// linkMode selects the duplicate links that hold for a mix: the domain
// identities of decode-only steps (sameTokens) do not all hold once
// prefill chunks are in the step.
type linkMode uint8

const (
	modeDecode linkMode = iota // decodes only
	modeMixed                  // at least one prefill chunk
	numModes
)

func modeOf(m *mix) linkMode {
	if m.pre > 0 {
		return modeMixed
	}
	return modeDecode
}

// prefillPart is the prefill chunks one attention group runs in a pass.
type prefillPart struct {
	chunks, tokens, prefix    int
	meanChunk                 int
	keys, winKeys, idxKeys    int
	pairs, winPairs, idxPairs float64
}

// ceilMean is ceil(sum/n) for n >= 1.
func ceilMean(sum int64, n int) int {
	if n <= 0 {
		return 0
	}
	q := sum / int64(n)
	if sum%int64(n) != 0 {
		q++
	}
	return int(q)
}

// share is ceil(x·f) for the busiest group's share f of a sum x.
func share(x int64, f float64) int {
	if f == 1 {
		return int(x)
	}
	return int(math.Ceil(float64(x) * f))
}

// pass builds the token counts of a pass of kind k over mix m. The
// sequences spread evenly over the G attention groups and the step costs
// the busiest: ceil(n/G) decodes at the decodes' mean context (KV read is
// linear in the contexts summed), and ceil(chunks/G) prefill chunks with
// that share of the chunks' tokens, keys and pairs. With G = 1 this is
// the batch itself.
func (s *Sim) pass(m *mix, kind passKind) pass {
	var p pass
	s.passTo(m, kind, nil, &p)
	return p
}

// loadCache is the routing load (routing.at) of the last expert-domain
// token count of each pass kind (Sim.KeyMemo).
type loadCache struct {
	ok     [numPasses]bool
	domain [numPasses]int
	l      [numPasses]load
}

// passTo is pass into *out, taking the routing load from lc (when not
// nil) if its domain tokens are the last ones of this pass kind.
func (s *Sim) passTo(m *mix, kind passKind, lc *loadCache, out *pass) {
	sh := &s.sh
	p := out
	*p = pass{queries: s.passQueries(kind)}
	if kind == passDraftRest {
		// One token per sequence, every sequence as a decode.
		n := m.dec + m.pre
		p.seq = ceilDiv(n, sh.groups)
		p.ctx, p.idxCtx, p.winCtx = ceilMean(m.allCtx, n), ceilMean(m.allIdx, n), ceilMean(m.allWin, n)
	} else {
		p.seq = ceilDiv(m.dec, sh.groups)
		p.ctx, p.idxCtx, p.winCtx = ceilMean(m.decCtx, m.dec), ceilMean(m.decIdx, m.dec), ceilMean(m.decWin, m.dec)
		if m.pre > 0 {
			c := ceilDiv(m.pre, sh.groups)
			f := float64(c) / float64(m.pre)
			p.pre = prefillPart{chunks: c, tokens: share(m.preTok, f), prefix: share(m.prefix, f),
				meanChunk: ceilMean(m.preTok, m.pre),
				keys:      share(m.keys, f), winKeys: share(m.winKeys, f), idxKeys: share(m.idxKeys, f),
				pairs: m.pairs * f, winPairs: m.winPairs * f, idxPairs: m.idxPairs * f}
		}
	}
	if m.pre == 0 && s.cfg.Graphs {
		s.padDecode(p)
	}
	p.dec = p.seq * p.queries
	p.attn = p.dec + p.pre.tokens
	p.mlp = p.attn * sh.gather
	// Logits: every verified position of a decode in the target pass, the
	// last position of a sequence otherwise (drafts, prefill chunks).
	switch kind {
	case passTarget:
		p.logits = (p.dec + p.pre.chunks) * sh.gather
	default:
		p.logits = (p.seq + p.pre.chunks) * sh.gather
	}
	p.send = ceilDiv(p.mlp, sh.tp)
	p.domain = p.mlp * sh.dp
	switch {
	case lc == nil:
		p.load = s.route.at(float64(p.domain))
	case lc.ok[kind] && lc.domain[kind] == p.domain:
		p.load = lc.l[kind]
	default:
		p.load = s.route.at(float64(p.domain))
		lc.ok[kind], lc.domain[kind], lc.l[kind] = true, p.domain, p.load
	}
}
