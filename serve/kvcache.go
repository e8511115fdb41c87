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
}

func newBlockPool(m Memory, reqs []request) *blockPool {
	total := m.blocksPerGroup() * m.Groups
	p := &blockPool{reqs: reqs, bs: m.BlockSize, seq: m.SeqBlocks, shift: -1, free0: total, total: total}
	if bs := m.BlockSize; bs&(bs-1) == 0 {
		p.shift = bits.TrailingZeros(uint(bs))
	}
	return p
}

func (p *blockPool) lookup(int32) int { return 0 }
func (p *blockPool) unheld(int32) int { return 0 }

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
		p.free0 += p.blocks(int(q.held)) + p.seq
	}
	q.held = 0
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
