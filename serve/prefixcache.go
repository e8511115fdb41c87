package serve

// Prefix caching: vLLM V1's block pool with hashed, shared,
// reference-counted blocks and an LRU free queue (vllm-project/vllm
// `vllm/v1/core/block_pool.py` and `vllm/v1/core/kv_cache_manager.py` @
// 002f349):
//
//   - a full block gets a hash chained on its parent block's hash and its
//     content, and is entered in a hash -> block map when the step that
//     computes it is scheduled (cache_full_blocks; only the first block
//     of a hash is kept in the map here, vLLM keeps duplicates);
//   - on admission the request's leading full blocks are looked up until
//     the first miss, capped at its known tokens - 1 (vLLM always computes
//     at least one token); hit blocks are shared (ref_cnt + 1) and removed
//     from the free queue if they were unreferenced (touch);
//   - a freed request's blocks are appended to the free queue in reverse
//     order (its tail evicted first) and stay cached until the block is
//     taken from the queue's head for a new allocation (LRU eviction);
//   - allocation fails when the new blocks plus the unreferenced hit blocks
//     exceed the free queue.
//
// SGLang's radix tree (sgl-project/sglang
// `python/sglang/srt/mem_cache/radix_cache.py` @ 95769b2) matches token by
// token and evicts least-recently-used leaves; here SGLang runs the same
// pool at its page size (page_size 1: token-granular matching), with LRU
// over freed pages instead of over leaves.
//
// What a request's tokens are is described by Request.Prefix: segments of
// content shared by ID. Tokens past the last segment are the request's own
// and never hashed: a preempted request recomputes them (vLLM would find
// its own blocks cached unless evicted) unless its load describes them as
// a segment of their own, as the built-in prefix workloads do.

// Segment is a run of tokens whose content is named by ID: two requests'
// tokens at the same offset of segments with the same ID are the same.
type Segment struct {
	ID     uint64
	Tokens int
}

// chain is a request's position in its block-hash chain: the hash of
// block n-1, the segment holding token n x bs and where it starts.
type chain struct {
	h    uint64
	n    int32
	si   int32
	base int32
	end  bool // past the described content: no further block is hashed
}

// prefixPool is a kvCache with prefix caching.
type prefixPool struct {
	reqs  []request
	bs    int
	seq   int // Memory.SeqBlocks: held beside the token blocks by every request holding any, never cached
	total int
	nfree int
	top   int

	hash       []uint64 // per block; 0 = not cached
	ref        []int32
	prev, next []int32 // free queue, a doubly linked list through block ids; sentinel 0
	made       int     // blocks made so far (ids 1..made)
	byHash     map[uint64]int32

	// st is the state of the requests this instance looked up or holds
	// (a map: a cluster's instances each see a few of the run's
	// requests); spare recycles freed states.
	st    map[int32]*reqState
	spare []*reqState

	queries, hits int // prompt tokens looked up on admission, and found
}

func newPrefixPool(m Memory, reqs []request) *prefixPool {
	total := m.blocksPerGroup() * m.Groups
	// Blocks are made as they are first used: vLLM's free queue starts
	// with every block in id order and frees append behind them, so the
	// never-used blocks are always taken first. Slot 0 is the queue's
	// sentinel; block b lives at index b+1.
	return &prefixPool{reqs: reqs, bs: m.BlockSize, seq: m.SeqBlocks, total: total, nfree: total,
		hash: []uint64{0}, ref: []int32{0}, prev: []int32{0}, next: []int32{0},
		byHash: make(map[uint64]int32),
		st:     make(map[int32]*reqState)}
}

// take removes the block at the free queue's head and returns it.
func (p *prefixPool) take() int32 {
	if p.made < p.total {
		p.made++
		p.hash = append(p.hash, 0)
		p.ref = append(p.ref, 0)
		p.prev = append(p.prev, 0)
		p.next = append(p.next, 0)
		return int32(p.made)
	}
	b := p.next[0]
	p.unlink(b)
	return b
}

func (p *prefixPool) unlink(b int32) {
	p.next[p.prev[b]] = p.next[b]
	p.prev[p.next[b]] = p.prev[b]
}

func (p *prefixPool) pushBack(b int32) {
	l := p.prev[0]
	p.next[l], p.prev[b], p.next[b], p.prev[0] = b, l, 0, b
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// blockHash returns the hash of the block after c (chained on c.h) for a
// request whose content is segs, without advancing c; 0 when the block
// is not wholly described.
func (p *prefixPool) blockHash(segs []Segment, c *chain) (uint64, int32, int32) {
	if c.end {
		return 0, c.si, c.base
	}
	s := int(c.n) * p.bs
	e := s + p.bs
	si, base := int(c.si), int(c.base)
	for si < len(segs) && base+segs[si].Tokens <= s {
		base += segs[si].Tokens
		si++
	}
	x := c.h ^ 0x9e3779b97f4a7c15
	k, kb := si, base
	for {
		if k >= len(segs) {
			return 0, int32(si), int32(base)
		}
		lo, hi := max(s, kb)-kb, min(e, kb+segs[k].Tokens)-kb
		x = mix(x ^ mix(segs[k].ID+uint64(lo)<<40+uint64(hi)))
		if kb+segs[k].Tokens >= e {
			break
		}
		kb += segs[k].Tokens
		k++
	}
	if x == 0 {
		x = 1
	}
	return x, int32(si), int32(base)
}

// advance moves c past one block of hash h (0: the end of the content).
func (c *chain) advance(h uint64, si, base int32) {
	c.n++
	c.si, c.base = si, base
	if h == 0 {
		c.end = true
	}
	c.h = h
}

// reqState is a request's blocks in one pool (the first pend only looked
// up, not yet taken) and its hash chain.
type reqState struct {
	tab  []int32
	pend int32
	ch   chain
}

// state returns r's state, made on first use.
func (p *prefixPool) state(r int32) *reqState {
	if s, ok := p.st[r]; ok {
		return s
	}
	var s *reqState
	if n := len(p.spare); n > 0 {
		s, p.spare = p.spare[n-1], p.spare[:n-1]
	} else {
		s = &reqState{}
	}
	p.st[r] = s
	return s
}

func (p *prefixPool) lookup(r int32) int {
	q := &p.reqs[r]
	if q.prefix == nil {
		if s, ok := p.st[r]; ok {
			s.tab, s.pend, s.ch = s.tab[:0], 0, chain{}
		}
		return 0
	}
	st := p.state(r)
	st.tab, st.pend, st.ch = st.tab[:0], 0, chain{}
	c := &st.ch
	limit := int32((int(q.in+q.gen) - 1) / p.bs)
	for c.n < limit {
		h, si, base := p.blockHash(q.prefix, c)
		if h == 0 {
			break
		}
		b, ok := p.byHash[h]
		if !ok {
			break
		}
		st.tab = append(st.tab, b)
		c.advance(h, si, base)
	}
	st.pend = int32(len(st.tab))
	return len(st.tab) * p.bs
}

func (p *prefixPool) unheld(r int32) int {
	st, ok := p.st[r]
	if !ok {
		return 0
	}
	n := 0
	for _, b := range st.tab[:st.pend] {
		if p.ref[b] == 0 {
			n++
		}
	}
	return n * p.bs
}

// fits is grow's check alone: after a lookup of r, the blocks its hits
// do not cover plus the hits in unheld (evictable) blocks must be free.
func (p *prefixPool) fits(r int32, slots int) bool {
	q := &p.reqs[r]
	want := (slots + p.bs - 1) / p.bs
	pend, have, evictable := 0, 0, 0
	if st, ok := p.st[r]; ok {
		pend, have = int(st.pend), len(st.tab)
		if q.held == 0 && pend == 0 {
			have = 0
		}
		for _, b := range st.tab[:pend] {
			if p.ref[b] == 0 {
				evictable++ // a cached hit no request holds leaves the free blocks when taken
			}
		}
	}
	need := want - have
	if need <= 0 && pend == 0 {
		return true
	}
	seq := 0
	if q.held == 0 {
		seq = p.seq
	}
	return max(need, 0)+evictable+seq <= p.nfree
}

// preempt is free: the cache keeps what the request's content describes.
func (p *prefixPool) preempt(r int32) { p.free(r) }

func (p *prefixPool) grow(r int32, slots int) bool {
	q := &p.reqs[r]
	want := (slots + p.bs - 1) / p.bs
	st := p.state(r)
	pend := int(st.pend)
	have := len(st.tab)
	if q.held == 0 && pend == 0 {
		have = 0
		st.tab, st.ch = st.tab[:0], chain{}
	}
	need := want - have
	if need <= 0 && pend == 0 {
		return true
	}
	evictable := 0
	for _, b := range st.tab[:pend] {
		if p.ref[b] == 0 {
			evictable++
		}
	}
	seq := 0
	if q.held == 0 {
		seq = p.seq // the fixed state (window KV, recurrent state), not cached
	}
	if max(need, 0)+evictable+seq > p.nfree {
		return false
	}
	if q.held == 0 {
		p.queries += int(q.in + q.gen)
		p.hits += pend * p.bs
		p.nfree -= seq
	}
	for _, b := range st.tab[:pend] {
		if p.ref[b] == 0 {
			p.unlink(b)
			p.nfree--
		}
		p.ref[b]++
	}
	st.pend = 0
	for ; need > 0; need-- {
		b := p.take()
		p.nfree--
		if h := p.hash[b]; h != 0 {
			if p.byHash[h] == b {
				delete(p.byHash, h)
			}
			p.hash[b] = 0
		}
		p.ref[b] = 1
		st.tab = append(st.tab, b)
	}
	q.held = int32(max(want, len(st.tab)) * p.bs)
	if used := p.total - p.nfree; used > p.top {
		p.top = used
	}
	p.register(r, st, min(slots, int(q.in+q.gen)))
	return true
}

// register hashes r's full blocks among its first tokens.
func (p *prefixPool) register(r int32, st *reqState, tokens int) {
	q := &p.reqs[r]
	if q.prefix == nil {
		return
	}
	c := &st.ch
	full := int32(tokens / p.bs)
	for c.n < full && !c.end {
		h, si, base := p.blockHash(q.prefix, c)
		if h != 0 {
			b := st.tab[c.n]
			if p.hash[b] == 0 {
				p.hash[b] = h
				if _, ok := p.byHash[h]; !ok {
					p.byHash[h] = b
				}
			}
		}
		c.advance(h, si, base)
	}
}

func (p *prefixPool) free(r int32) {
	q := &p.reqs[r]
	st, ok := p.st[r]
	if !ok {
		q.held = 0
		return
	}
	blocks := st.tab
	if q.held > 0 {
		// The blocks the last steps filled are cached before they are
		// freed (vLLM caches them when it schedules their step).
		p.register(r, st, int(q.computed))
		for i := len(blocks) - 1; i >= 0; i-- {
			b := blocks[i]
			p.ref[b]--
			if p.ref[b] == 0 {
				p.pushBack(b)
				p.nfree++
			}
		}
		p.nfree += p.seq
	}
	st.tab, st.pend, st.ch = blocks[:0], 0, chain{}
	delete(p.st, r)
	p.spare = append(p.spare, st)
	q.held = 0
}

// forget drops the state a lookup left for r, which holds nothing here
// (a router's look at an instance it did not choose).
func (p *prefixPool) forget(r int32) {
	if st, ok := p.st[r]; ok && p.reqs[r].held == 0 {
		st.tab, st.pend, st.ch = st.tab[:0], 0, chain{}
		delete(p.st, r)
		p.spare = append(p.spare, st)
	}
}

func (p *prefixPool) usage() kvUsage {
	return kvUsage{Used: p.total - p.nfree, Peak: p.top, Total: p.total, BlockSize: p.bs,
		Prefix: true, Queries: p.queries, Hits: p.hits}
}
