package serve

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/moecast/moecast/internal/unit"
)

// Disaggregated prefill/decode (NVIDIA Dynamo, llm-d, SGLang PD, vLLM's
// disaggregated connectors): prefill instances run each request's prompt
// and sample its first token as a request of one output token (vLLM's
// prefill node runs it with max_tokens = 1); its KV cache then crosses
// the transfer fabric to a decode instance, which admits it with every
// prompt token but the last already computed (vLLM's KV connector reports
// the prompt less one as external computed tokens, so the decode instance
// computes the last prompt token itself) and streams the output; SGLang's
// decode server admits it without a prefill step, into the decode batch
// (sched_sglang.go, admitPrebuilt). TTFT = queueing + prefill + transfer
// + the decode instance's first step (with Disagg.Pull, vLLM's
// NixlConnector, the read starts at the decode instance's next step and
// the request runs at the step after it completes). The prefill instance
// holds the request's KV until its transfer ends.
//
// Each instance has its own clock: the loop advances to the earliest
// event (a busy instance's step end, a transfer's arrival, a client send)
// and starts a step on every idle instance that has work. A router picks
// the prefill instance of each sent request and the decode instance of
// each arrived transfer.

// Disagg is a disaggregated deployment: its two pools, the KV transfer
// and the router.
type Disagg struct {
	Prefill, Decode Pool
	// KVBytesPerToken is the KV cache of one token of a request, over
	// the whole model: what crosses from prefill to decode.
	KVBytesPerToken unit.Bytes
	// TransferBandwidth (bytes/s) and TransferLatency price one
	// request's transfer: latency + bytes / bandwidth.
	TransferBandwidth float64
	TransferLatency   unit.Seconds
	Router            Router
	// Pull: the decode instance pulls the KV (vLLM's NixlConnector):
	// the proxy hands the request to a decode instance when its prefill
	// ends; the instance's scheduler first sees it at its next step,
	// which starts the read (WAITING_FOR_REMOTE_KVS), and admits it at
	// the step after the one during which the read completed
	// (finished_recving reported with that step's output; an idle
	// instance polls at once). False: the prefill instance pushes the KV
	// when its prefill ends (SGLang's KV sender) and the decode instance
	// admits it at its next step.
	Pull bool
}

// Pool is one side of a disaggregated deployment: Workers instances of
// GPUs GPUs each, with their KV cache and step price.
type Pool struct {
	Workers int
	GPUs    int // per instance (for reports)
	Memory  Memory
	Coster  StepCoster
	// MaxNumSeqs is the pool's own limit on running requests per
	// scheduler (vLLM's --max-num-seqs, SGLang's
	// --max-running-requests): the pools are separate engine instances,
	// each started with its own flags. 0: Config.MaxNumSeqs.
	MaxNumSeqs int
	// SchedulerRecvInterval is the pool's own SGLang
	// --scheduler-recv-interval (Config.SchedulerRecvInterval): each
	// instance's scheduler takes new requests from its input queue only
	// when its SchedulerRecvSkipper's count reaches it. SGLang refuses it
	// with DP attention, so it must be at most 1 when Memory.Groups > 1.
	// 0: Config.SchedulerRecvInterval.
	SchedulerRecvInterval int
	// MaxNumBatchedTokens and MaxPrefillTokens are the pool's own token
	// budget of a step (vLLM's --max-num-batched-tokens, SGLang's
	// --chunked-prefill-size) and SGLang's --max-prefill-tokens; 0: the
	// Config's.
	MaxNumBatchedTokens, MaxPrefillTokens int
}

// poolRanks is the schedulers of one instance of a disaggregated pool
// whose scheduler config is sc (the pool's Memory): SGLang's DP-attention
// ranks, each a scheduler of its own (dpranks.go); 1 otherwise (vLLM's
// pools pool their ranks).
func poolRanks(sc *Config) int {
	if sc.Engine == SGLang && sc.perRankDP() {
		return sc.Memory.Groups
	}
	return 1
}

// Router spreads requests over a pool's instances.
type Router uint8

const (
	RoundRobin  Router = iota // instances in turn
	LeastLoaded               // the instance holding the fewest requests (running and waiting); ties: the first
	// PrefixAware is the cache_aware policy of SGLang's model gateway and
	// vllm-router with their defaults (cacheThreshold, balanceAbs,
	// balanceRel) on the prefill instances, its "longest prefix" read
	// from each instance's own prefix cache; decode as LeastLoaded.
	PrefixAware
)

// The cache_aware defaults (--cache-threshold 0.3,
// --balance-abs-threshold 64, --balance-rel-threshold 1.5, as documented
// for sglang-gateway v0.3.1 and vLLM router v0.1.15 by GPUStack's routing
// page and lightseekorg/smg docs/concepts/routing).
const (
	cacheThreshold = 0.3
	balanceAbs     = 64
	balanceRel     = 1.5
)

// DisaggResult is what a disaggregated run adds to Result.
type DisaggResult struct {
	PrefillGPUs, DecodeGPUs int
	KVTransferMean          unit.Seconds // per request
	// Utilisation is each pool's busy time (steps running) over the
	// run's duration and its instances.
	PrefillUtilisation, DecodeUtilisation float64
}

// validate checks the pools and the transfer; k is the config's draft
// tokens per step (Spec.DraftTokens).
func (d *Disagg) validate(k int) error {
	for _, p := range []struct {
		name string
		p    Pool
	}{{"Disagg.Prefill", d.Prefill}, {"Disagg.Decode", d.Decode}} {
		if p.p.Workers < 1 || p.p.Workers > 1<<16 {
			return fieldErrorf(p.name+".Workers", "must be in [1, 65536], got %d", p.p.Workers)
		}
		if p.p.GPUs < 1 {
			return fieldErrorf(p.name+".GPUs", "must be >= 1, got %d", p.p.GPUs)
		}
		if p.p.Coster == nil {
			return fieldErrorf(p.name+".Coster", "is nil")
		}
		if p.p.MaxNumSeqs < 0 {
			return fieldErrorf(p.name+".MaxNumSeqs", "must be 0 (the config's) or positive, got %d", p.p.MaxNumSeqs)
		}
		if err := validatePoolBudget(p.name, p.p.MaxNumBatchedTokens, k); err != nil {
			return err
		}
		if p.p.MaxPrefillTokens < 0 || p.p.MaxPrefillTokens > maxTokens {
			return fieldErrorf(p.name+".MaxPrefillTokens", "must be in [0, %d] tokens, got %d", maxTokens, p.p.MaxPrefillTokens)
		}
		if n := p.p.SchedulerRecvInterval; n < 0 || n > maxInterval {
			return fieldErrorf(p.name+".SchedulerRecvInterval", "must be in [0, %d] iterations, got %d", maxInterval, n)
		}
		if n := p.p.SchedulerRecvInterval; n > 1 && p.p.Memory.Groups > 1 {
			return fieldErrorf(p.name+".SchedulerRecvInterval", "%d needs DP attention off (SGLang's SchedulerRecvSkipper asserts not enable_dp_attention), got %d DP ranks", n, p.p.Memory.Groups)
		}
		c := Config{Memory: p.p.Memory}
		if err := c.validateMemory(); err != nil {
			err.Field = p.name + "." + err.Field
			return err
		}
	}
	switch {
	case !(d.KVBytesPerToken > 0) || math.IsInf(float64(d.KVBytesPerToken), 0):
		return fieldErrorf("Disagg.KVBytesPerToken", "must be finite and > 0, got %g", float64(d.KVBytesPerToken))
	case !(d.TransferBandwidth > 0):
		return fieldErrorf("Disagg.TransferBandwidth", "must be > 0 (+Inf: free), got %g", d.TransferBandwidth)
	case !finiteNonNeg(float64(d.TransferLatency)):
		return fieldErrorf("Disagg.TransferLatency", "must be finite and >= 0, got %g", float64(d.TransferLatency))
	case d.Router > PrefixAware:
		return fieldErrorf("Disagg.Router", "unknown router %d", d.Router)
	}
	return nil
}

// validatePoolBudget checks pool's own token budget n (Pool.
// MaxNumBatchedTokens, 0: the config's) with k draft tokens per step.
func validatePoolBudget(pool string, n, k int) error {
	if n < 0 || n > maxTokens {
		return fieldErrorf(pool+".MaxNumBatchedTokens", "must be in [0, %d] tokens, got %d", maxTokens, n)
	}
	if n > 0 && n < 1+k {
		// As Config.MaxNumBatchedTokens: a step holds at least one
		// sequence's decode of 1 + K tokens.
		return fieldErrorf(pool+".MaxNumBatchedTokens", "%d tokens cannot hold one sequence's decode of 1 + %d draft tokens (want at least %d)", n, k, 1+k)
	}
	return nil
}

// node is one instance of a disaggregated run with its clock: one
// engine instance (in), or, with SGLang's DP-attention ranks as
// schedulers of their own, the ranks stepping together (dp; in is its
// first rank).
type node struct {
	in       *instance
	ranks    []*instance // in, or dp's ranks
	dp       *dpRanks
	coster   StepCoster
	busy     bool
	end      float64 // the running step's end
	busyTime float64
}

func (nd *node) idle() bool {
	if nd.dp != nil {
		return nd.dp.idle()
	}
	return nd.in.idle()
}

// load is the requests the node holds and has waiting, over its ranks.
func (nd *node) load() int {
	l := 0
	for _, in := range nd.ranks {
		l += in.queued() + in.sched.holding()
	}
	return l
}

// enqueue hands r to the node (to the rank its controller picks).
func (nd *node) enqueue(r int32) {
	if nd.dp != nil {
		nd.dp.enqueue(r)
		return
	}
	nd.in.enqueue(r)
}

// free releases r's KV on the rank that holds it.
func (nd *node) free(r int32) {
	if nd.dp != nil && nd.dp.of != nil {
		nd.dp.in[nd.dp.of[r]].kv.free(r)
		return
	}
	nd.in.kv.free(r)
}

// lookup is r's longest cached prefix on any of the node's ranks (a
// router's view; forgotten again, as admission looks up itself).
func (nd *node) lookup(r int32) int {
	h := 0
	for _, in := range nd.ranks {
		h = max(h, in.kv.lookup(r))
		if f, ok := in.kv.(interface{ forget(int32) }); ok {
			f.forget(r)
		}
	}
	return h
}

// cluster is the state of a disaggregated run.
type cluster struct {
	d               *Disagg
	prefill, decode []*node
	preqs           []request // the prefill instances' request table (one output token)
	from            []int32   // the prefill instance of each request
	handoff         []int32
	xfer            timedHeap
	rr              [2]int
	xferSum         float64
	xferN           int
	// Pull (Disagg.Pull), per decode instance: the requests handed to it
	// whose read starts at its next step (with their transfer time), and
	// those being read (at: when the read completes).
	pending [][]timed
	loading [][]timed
	// sending is, per prefill instance, the requests whose KV it holds
	// until their transfer ends.
	sending []int
	// arrive holds the requests in the disaggregated deployment's front
	// end (Config.FrontEnd, disaggFrontEnd): at is when each is tokenised
	// and handed to the prefill pool's router.
	arrive timedHeap
}

// transferred is a decode instance's cache: a request arriving by
// transfer has its prompt less the last token computed.
type transferred struct {
	kvCache
	reqs []request
}

func (c transferred) lookup(r int32) int {
	if q := &c.reqs[r]; q.gen == 0 {
		return int(q.in) - 1
	}
	return c.kvCache.lookup(r)
}

func (e *run) newCluster(shared bool) (*cluster, error) {
	d := e.cfg.Disagg
	cl := &cluster{d: d, preqs: make([]request, len(e.reqs)), from: make([]int32, len(e.reqs)), sending: make([]int, d.Prefill.Workers)}
	maxIn := 0
	for i, q := range e.reqs {
		p := q
		p.out = 1
		cl.preqs[i] = p
		maxIn = max(maxIn, int(q.in))
	}
	if err := d.Prefill.Memory.fits(maxIn); err != nil {
		return nil, err
	}
	// The prefill pool admits its requests (prompt and one token) as the
	// engine does: SGLang's by the new-token ratio, which can refuse a
	// prompt the pool holds as blocks (sglangAdmissible). The decode
	// pool's requests are checked as the aggregated engine's (Run).
	pc := *e.cfg
	pc.Memory = d.Prefill.Memory
	if err := sglangAdmissible(&pc, cl.preqs); err != nil {
		return nil, err
	}
	mk := func(p Pool, reqs []request, decode bool) *node {
		// The pool's scheduler: its own memory (SGLang's attention DP
		// ranks, one scheduler each, are the pool's Memory.Groups, and
		// each splits chunked_prefill_size by them) and flags.
		sc := *e.cfg
		sc.Memory = p.Memory
		if p.MaxNumSeqs > 0 {
			sc.MaxNumSeqs = p.MaxNumSeqs
		}
		if p.SchedulerRecvInterval > 0 {
			sc.SchedulerRecvInterval = p.SchedulerRecvInterval
		}
		if p.MaxNumBatchedTokens > 0 {
			sc.MaxNumBatchedTokens = p.MaxNumBatchedTokens
		}
		if p.MaxPrefillTokens > 0 {
			sc.MaxPrefillTokens = p.MaxPrefillTokens
		}
		// SGLang's DP-attention ranks are schedulers of their own on
		// either side (dpranks.go), each with one rank's KV pool.
		ranks, km := poolRanks(&sc), p.Memory
		if ranks > 1 {
			km.Groups = 1
		}
		nd := &node{coster: p.Coster}
		for range ranks {
			var kv kvCache = newBlockPool(km, reqs).recovering(e.cfg.ownBlocks())
			if shared && !e.cfg.NoPrefixCache && !decode {
				kv = newPrefixPool(km, reqs)
			}
			if decode {
				kv = transferred{kv, reqs}
			}
			in := &instance{reqs: reqs, kv: kv, sched: engines[e.cfg.Engine].scheduler(&sc), fullISL: e.cfg.fullISL(),
				k: e.cfg.Spec.DraftTokens, lookahead: e.cfg.Spec.Lookahead}
			if o, ok := in.sched.(oneRanker); ok && ranks > 1 {
				o.oneRank(ranks)
			}
			if !decode {
				in.handoff = &cl.handoff
			} else if pb, ok := in.sched.(prebuilder); ok && !e.cfg.DecodeRecompute {
				pb.setPrebuilt()
			}
			nd.ranks = append(nd.ranks, in)
		}
		nd.in = nd.ranks[0]
		if ranks > 1 {
			// A PD prefill server's controller routes by the request's
			// bootstrap room, a decode server's round robin
			// (sglangBootstrapBalance, sglangBalance).
			nd.dp = &dpRanks{in: nd.ranks, pick: sglangBalance}
			if !decode {
				nd.dp.pick, nd.dp.of = sglangBootstrapBalance(e.cfg.Seed), make([]int32, len(reqs))
			}
		}
		return nd
	}
	for range d.Prefill.Workers {
		cl.prefill = append(cl.prefill, mk(d.Prefill, cl.preqs, false))
	}
	for range d.Decode.Workers {
		cl.decode = append(cl.decode, mk(d.Decode, e.reqs, true))
	}
	if d.Pull {
		cl.pending = make([][]timed, d.Decode.Workers)
		cl.loading = make([][]timed, d.Decode.Workers)
	}
	return cl, nil
}

// route picks an instance of pool (0 prefill, 1 decode) for r.
func (cl *cluster) route(pool int, r int32) int {
	nodes := cl.prefill
	if pool == 1 {
		nodes = cl.decode
	}
	if cl.d.Router == PrefixAware && pool == 0 && cl.preqs[r].prefix != nil {
		// cache_aware of SGLang's gateway and vllm-router: when the
		// busiest instance holds more than balanceAbs requests over the
		// idlest and more than balanceRel times as many, the least
		// loaded; else the instance with the longest cached prefix if it
		// covers cacheThreshold of the prompt, else the least loaded.
		minL, maxL, least := math.MaxInt, 0, 0
		best, hit := 0, -1
		for i, nd := range nodes {
			l := nd.load()
			if l < minL {
				minL, least = l, i
			}
			maxL = max(maxL, l)
			h := nd.lookup(r) // admission looks up again
			if h > hit || (h == hit && l < nodes[best].load()) {
				best, hit = i, h
			}
		}
		if maxL-minL > balanceAbs && float64(maxL) > balanceRel*float64(minL) {
			return least
		}
		if float64(hit) >= cacheThreshold*float64(cl.preqs[r].in) {
			return best
		}
		return least
	}
	if cl.d.Router != RoundRobin {
		best, load := 0, math.MaxInt
		for i, nd := range nodes {
			if l := nd.load(); l < load {
				best, load = i, l
			}
		}
		return best
	}
	i := cl.rr[pool] % len(nodes)
	cl.rr[pool]++
	return i
}

// transferTime prices r's KV transfer.
func (cl *cluster) transferTime(in int32) float64 {
	return float64(cl.d.TransferLatency) + float64(in)*float64(cl.d.KVBytesPerToken)/cl.d.TransferBandwidth
}

// loopDisagg runs a disaggregated deployment until every request has
// finished.
func (e *run) loopDisagg() error {
	cl := e.cl
	c := e.client
	n := len(e.reqs)
	nodes := append(append([]*node(nil), cl.prefill...), cl.decode...)
	t := 0.0
	for e.completed < n {
		for i, nd := range nodes {
			if cl.d.Pull && i >= len(cl.prefill) && !nd.busy {
				cl.startPulls(i-len(cl.prefill), t) // an idle vLLM engine core polls at once
			}
			if nd.busy || nd.idle() {
				continue
			}
			in := nd.in
			some := false
			if nd.dp != nil {
				some = nd.dp.schedule()
			} else {
				in.sched.schedule(in)
				some = len(in.step.seqs) > 0
			}
			if !some {
				if i < len(cl.prefill) && cl.sending[i] > 0 {
					// Its KV cache is held by prefilled requests in
					// transfer: the instance idles until one ends.
					continue
				}
				return fmt.Errorf("serve: internal error: a step scheduled nothing (%d held, %d waiting)", nd.load()-in.queued(), in.queued())
			}
			var d float64
			var err error
			if nd.dp != nil {
				d, err = e.priceDP(nd.coster, nd.dp)
			} else {
				d, err = e.priceWith(nd.coster, &in.step)
			}
			if err != nil {
				return err
			}
			nd.busy, nd.end = true, t+d
			nd.busyTime += d
		}
		next := math.Inf(1)
		for _, nd := range nodes {
			if nd.busy {
				next = math.Min(next, nd.end)
			}
		}
		if len(cl.xfer) > 0 {
			next = math.Min(next, cl.xfer[0].at)
		}
		if len(cl.arrive) > 0 {
			next = math.Min(next, cl.arrive[0].at)
		}
		for j, l := range cl.loading {
			if !cl.decode[j].busy {
				for _, x := range l {
					next = math.Min(next, x.at)
				}
			}
		}
		if c.inflight < c.limit {
			if _, at, _, ok := c.peek(); ok {
				next = math.Min(next, math.Max(at, t))
			}
		}
		if math.IsInf(next, 1) {
			return fmt.Errorf("serve: internal error: %d requests unfinished with nothing to run", n-e.completed)
		}
		t = next
		for i, nd := range nodes {
			if !nd.busy || nd.end > t {
				continue
			}
			nd.busy = false
			if nd.dp != nil {
				c.inflight -= e.finishDP(nd.dp, t)
			} else {
				c.inflight -= e.finishStep(nd.in, t)
			}
			for _, r := range cl.handoff {
				cl.from[r] = int32(i)
				cl.sending[i]++
				d := cl.transferTime(e.reqs[r].in)
				cl.xferSum += d
				cl.xferN++
				if cl.d.Pull {
					j := cl.route(1, r)
					cl.pending[j] = append(cl.pending[j], timed{at: d, r: r})
					continue
				}
				heap.Push(&cl.xfer, timed{at: t + d, r: r})
			}
			cl.handoff = cl.handoff[:0]
		}
		for j := range cl.loading {
			if !cl.decode[j].busy {
				cl.admitPulled(j, t)
			}
		}
		for len(cl.xfer) > 0 && cl.xfer[0].at <= t {
			x := heap.Pop(&cl.xfer).(timed)
			cl.prefill[cl.from[x.r]].free(x.r)
			cl.sending[cl.from[x.r]]--
			cl.decode[cl.route(1, x.r)].enqueue(x.r)
		}
		for c.inflight < c.limit {
			r, at, h, ok := c.peek()
			if !ok || at > t {
				break
			}
			c.take(h)
			e.reqs[r].send, cl.preqs[r].send = t, t
			if d := disaggFrontEnd(e.cfg.FrontEnd, e.reqs[r].in); d > 0 {
				heap.Push(&cl.arrive, timed{at: t + d, r: r})
			} else {
				cl.prefill[cl.route(0, r)].enqueue(r)
			}
			c.inflight++
		}
		for len(cl.arrive) > 0 && cl.arrive[0].at <= t {
			x := heap.Pop(&cl.arrive).(timed)
			cl.prefill[cl.route(0, x.r)].enqueue(x.r)
		}
	}
	return nil
}

// disaggFrontEnd is how long a request of in prompt tokens spends in a
// disaggregated deployment's front end before the prefill pool's router
// takes it: FrontEnd.PerRequest plus PerInputToken per prompt token, each
// request on its own, none waiting for another. The disaggregated
// deployments moecast models are fronted by Dynamo's frontend (the
// aiconfigurator and InferenceX disaggregated runs: its vllm-runtime and
// dynamo-sglang images), whose OpenAI preprocessor tokenises the prompt
// in Rust before routing and hands the workers token ids
// (ai-dynamo/dynamo lib/llm/src/preprocessor.rs, OpenAIPreprocessor: the
// HuggingFace tokenizer of the model card), one async task per request on
// the frontend's multi-threaded runtime, so concurrent requests are
// tokenised in parallel, where an aggregated engine's API server
// tokenises them one at a time (frontEnd). The Rust tokenizer costs what
// the API servers' transformers wrapper costs (TokenizeTime; bench/
// RESULTS-tokenize.md: the bare tokenizers encode and the wrapper differ
// by under 10%). SGLang's own PD router, which lets each prefill server's
// TokenizerManager tokenise, is not modelled apart.
func disaggFrontEnd(f FrontEnd, in int32) float64 {
	return float64(f.PerRequest) + float64(f.PerInputToken)*float64(in)
}

// startPulls starts the reads of the requests handed to decode instance
// j (Disagg.Pull): its scheduler sees them at the step starting at t.
func (cl *cluster) startPulls(j int, t float64) {
	for _, x := range cl.pending[j] {
		cl.loading[j] = append(cl.loading[j], timed{at: t + x.at, r: x.r})
	}
	cl.pending[j] = cl.pending[j][:0]
}

// admitPulled, at the end of decode instance j's step (or while it is
// idle) at t, frees the prefill side of every read complete by t and
// hands the request to the instance's scheduler.
func (cl *cluster) admitPulled(j int, t float64) {
	l := cl.loading[j][:0]
	for _, x := range cl.loading[j] {
		if x.at > t {
			l = append(l, x)
			continue
		}
		cl.prefill[cl.from[x.r]].free(x.r)
		cl.sending[cl.from[x.r]]--
		cl.decode[j].enqueue(x.r)
	}
	cl.loading[j] = l
}

// fill adds the disaggregated figures to r.
func (cl *cluster) fill(r *Result) {
	pre := 0
	for _, nd := range append(append([]*node(nil), cl.prefill...), cl.decode...) {
		for _, in := range nd.ranks {
			pre += in.preemptions
		}
	}
	// The fullest decode cache per GPU: a pooled instance's peak is
	// spread over its Groups, a rank's is one GPU's.
	m := cl.d.Decode.Memory
	var kvPeak unit.Bytes
	for _, nd := range cl.decode {
		g := m.Groups
		if nd.dp != nil {
			g = 1
		}
		for _, in := range nd.ranks {
			x := in.kv.usage()
			kvPeak = max(kvPeak, unit.Bytes(float64(x.Peak*x.BlockSize)*float64(m.KVBytesPerToken)/float64(g)))
		}
	}
	r.Preemptions = pre
	// Prefix caching is the prefill instances' (decode instances receive
	// every prompt by transfer).
	r.PrefixCache, r.PrefixHitRate = false, 0
	q, h := 0, 0
	for _, nd := range cl.prefill {
		for _, in := range nd.ranks {
			if x := in.kv.usage(); x.Prefix {
				r.PrefixCache = true
				q, h = q+x.Queries, h+x.Hits
			}
		}
	}
	if q > 0 {
		r.PrefixHitRate = float64(h) / float64(q)
	}
	r.KVPeakPerGPU = kvPeak
	busy := func(nodes []*node) float64 {
		s := 0.0
		for _, nd := range nodes {
			s += nd.busyTime
		}
		if d := float64(r.Duration); d > 0 {
			return s / (d * float64(len(nodes)))
		}
		return 0
	}
	dr := &DisaggResult{PrefillGPUs: cl.d.Prefill.Workers * cl.d.Prefill.GPUs, DecodeGPUs: cl.d.Decode.Workers * cl.d.Decode.GPUs,
		PrefillUtilisation: busy(cl.prefill), DecodeUtilisation: busy(cl.decode)}
	if cl.xferN > 0 {
		dr.KVTransferMean = unit.Seconds(cl.xferSum / float64(cl.xferN))
	}
	r.Disagg = dr
}
