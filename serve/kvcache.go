package serve

import (
	"math"
	"math/bits"

	"github.com/moecast/moecast/internal/unit"
)

// kvCache is an instance's KV-cache manager as a scheduler sees it: token
// slots are reserved per request, in whatever unit the cache allocates
// (blocks, pages). The cache writes the slots a request holds into its
// request.held, so a scheduler only calls grow when a step needs more
// (the fast path stays a field compare).
//
// blockPool, vLLM's and SGLang's allocator without prefix caching, is the
// one implementation. A prefix cache (vLLM's hashed, shared,
// reference-counted blocks; SGLang's radix tree) is a second one: lookup
// returns the prompt tokens of r already cached, which the scheduler
// counts as computed on admission; grow shares those blocks; free drops
// references and keeps unreferenced blocks for reuse until evicted.
type kvCache interface {
	// lookup returns how many leading tokens of r's prompt are already in
	// the cache, to be skipped by its prefill (0 without prefix caching).
	lookup(r int32) int
	// grow makes r hold at least slots token slots; it reports false and
	// changes nothing when too few are free.
	grow(r int32, slots int) bool
	// unheld returns how many of the tokens the last lookup of r found
	// are in blocks no request holds (cached, evictable): a grow of r
	// takes them out of the free blocks (SGLang's radix cache moves them
	// from evictable to protected). 0 without prefix caching.
	unheld(r int32) int
	// fits reports whether grow(r, slots) would succeed now, changing
	// nothing (vLLM's full_sequence_must_fit check, which counts the
	// blocks a grow to slots takes out of the free ones).
	fits(r int32, slots int) bool
	// free releases every slot r holds.
	free(r int32)
	// preempt is free for a preempted request: with vLLM's prefix cache
	// its blocks stay cached in the free queue for its re-admission.
	preempt(r int32)
	// usage is the blocks in use, their peak and the total.
	usage() kvUsage
}

// kvUsage counts an instance's KV blocks (pages) of BlockSize token slots
// over all its attention groups.
type kvUsage struct {
	Used, Peak, Total int
	BlockSize         int
	// Prefix is set for a cache with prefix caching; Queries and Hits are
	// the prompt tokens it looked up on admissions and found cached.
	Prefix        bool
	Queries, Hits int
}

// blockPool counts paged blocks of Memory.BlockSize tokens pooled over the
// attention groups (vLLM KVCacheManager.allocate_slots without prefix
// caching; SGLang's token pool with page_size slots a page).
type blockPool struct {
	reqs              []request // held = the request's blocks x bs
	bs                int
	seq               int // Memory.SeqBlocks: blocks a request holds beside its token blocks once it holds any
	shift             int // log2(bs) when bs is a power of two, else -1
	free0, total, top int // free blocks, all blocks, peak blocks used

	// With recovery (vLLM's prefix cache over a request's own blocks,
	// Config.RecoverPreempted) the free queue is followed by position:
	// blocks are taken at its head (head counts the blocks taken) and
	// freed blocks join at its tail (tail counts the blocks ever queued,
	// the initial ones first). A preempted request's blocks join in
	// reverse order, so its last block is evicted first; its first s
	// blocks survive while they are behind the head: s = clamp(top - head,
	// 0, k) for the run of k blocks that ends at position top.
	recover    bool
	head, tail int64
	runs       map[int32]cachedRun
	hitReq     int32 // the request of the last lookup that found blocks
	hitBlocks  int   // and how many
}

// cachedRun is a preempted request's blocks in the free queue.
type cachedRun struct {
	top int64 // the queue position after its first block
	k   int   // its blocks
}

func newBlockPool(m Memory, reqs []request) *blockPool {
	total := m.blocksPerGroup() * m.Groups
	p := &blockPool{reqs: reqs, bs: m.BlockSize, seq: m.SeqBlocks, shift: -1, free0: total, total: total,
		tail: int64(total), hitReq: -1}
	if bs := m.BlockSize; bs&(bs-1) == 0 {
		p.shift = bits.TrailingZeros(uint(bs))
	}
	return p
}

// recovering turns recovery of preempted requests' blocks on (on) and
// returns p.
func (p *blockPool) recovering(on bool) *blockPool {
	p.recover = on
	if on && p.runs == nil {
		p.runs = make(map[int32]cachedRun)
	}
	return p
}

// lookup returns the tokens of r's blocks still cached since its
// preemption (0 without recovery): at most its tokens less one, which
// vLLM recomputes for the logits (KVCacheManager.get_computed_blocks,
// max_cache_hit_length = num_tokens - 1).
func (p *blockPool) lookup(r int32) int {
	p.hitReq, p.hitBlocks = -1, 0
	c, ok := p.runs[r]
	if !ok {
		return 0
	}
	s := int(min(max(c.top-p.head, 0), int64(c.k)))
	if s == 0 {
		delete(p.runs, r)
		return 0
	}
	q := &p.reqs[r]
	s = min(s, int(q.in+q.gen-1)/p.bs)
	p.hitReq, p.hitBlocks = r, s
	return s * p.bs
}

// unheld: the blocks a lookup found are in the free queue, held by no
// request.
func (p *blockPool) unheld(r int32) int {
	if r == p.hitReq {
		return p.hitBlocks * p.bs
	}
	return 0
}

// blocks is the number of blocks that hold n slots (n a multiple of bs:
// exact).
func (p *blockPool) blocks(n int) int {
	if p.shift >= 0 {
		return n >> p.shift
	}
	return n / p.bs
}

func (p *blockPool) grow(r int32, slots int) bool {
	q := &p.reqs[r]
	want := p.blocks(slots + p.bs - 1)
	need := want - p.blocks(int(q.held))
	if need <= 0 {
		return true
	}
	if q.held == 0 {
		need += p.seq // the fixed state (window KV, recurrent state) with the first blocks
	}
	if need > p.free0 {
		return false
	}
	p.free0 -= need
	if p.recover {
		fresh := need
		if q.held == 0 {
			if r == p.hitReq {
				fresh -= p.hitBlocks // taken out of the queue where they sit
				p.hitReq, p.hitBlocks = -1, 0
			}
			delete(p.runs, r)
		}
		p.head += int64(max(fresh, 0))
	}
	q.held = int32(want * p.bs)
	if used := p.total - p.free0; used > p.top {
		p.top = used
	}
	return true
}

func (p *blockPool) fits(r int32, slots int) bool {
	q := &p.reqs[r]
	need := p.blocks(slots+p.bs-1) - p.blocks(int(q.held))
	if need <= 0 {
		return true
	}
	if q.held == 0 {
		need += p.seq
	}
	return need <= p.free0
}

func (p *blockPool) free(r int32) {
	q := &p.reqs[r]
	if q.held > 0 {
		n := p.blocks(int(q.held)) + p.seq
		p.free0 += n
		p.tail += int64(n)
	}
	q.held = 0
}

func (p *blockPool) preempt(r int32) {
	if k := p.blocks(int(p.reqs[r].held)); p.recover && k > 0 {
		p.runs[r] = cachedRun{top: p.tail + int64(k), k: k}
	}
	p.free(r)
}

func (p *blockPool) usage() kvUsage {
	return kvUsage{Used: p.total - p.free0, Peak: p.top, Total: p.total, BlockSize: p.bs}
}

// blocksPerGroup is the number of whole blocks one group's cache holds.
func (m Memory) blocksPerGroup() int {
	b := math.Floor(float64(m.KVCapacity) / (float64(m.BlockSize) * float64(m.KVBytesPerToken)))
	return int(math.Min(b, math.MaxInt32))
}

// fits returns an *UnservableError when a request holding peak tokens does
// not fit in one group's cache (a request's KV lives in one group).
func (m Memory) fits(peak int) error {
	if need := ceilDiv(peak, m.BlockSize) + m.SeqBlocks; need > m.blocksPerGroup() {
		return &UnservableError{Tokens: peak, Capacity: m.KVCapacity,
			Need: unit.Bytes(float64(need*m.BlockSize) * float64(m.KVBytesPerToken))}
	}
	return nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
