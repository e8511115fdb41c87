package ncclrun

import (
	"bytes"
	"math"
	"unsafe"
)

// The data every rank sends and what each must receive, as bf16 bit
// patterns. Values are small integers, so bf16 holds them and their sums
// exactly (8 significant bits: every integer up to 256): a reduced element
// is 1..4 per rank (exact up to 64 ranks), a moved one 0..250. Each is a
// function of the rank and of the element's index modulo a prime period,
// so a misplaced block, a rank's data in another's place or a missed
// reduction shows, and host buffers are filled by copying one period.

// Period is the length of the repeating pattern (prime).
const Period = 65521

// MaxRanks is the most ranks the exact check supports (4 x 64 = 256).
const MaxRanks = 64

var base = func() []uint16 {
	t := make([]uint16, Period)
	for k := range t {
		t[k] = uint16((uint64(k)*2654435761 + 12345) >> 7 % 251)
	}
	return t
}()

// bf16 is the bf16 bit pattern of a small non-negative integer.
func bf16(v int) uint16 { return uint16(math.Float32bits(float32(v)) >> 16) }

// reduced is element k (mod Period) of rank r's input to a reduction.
func reduced(r, k int) int { return 1 + int(base[(k+17*r)%Period])%4 }

// moved is element k of rank r's input to a data movement.
func moved(r, k int) int { return int(base[(k+31*r)%Period]) }

// table is one period of a pattern as bf16.
type table []uint16

func makeTable(f func(k int) int) table {
	t := make(table, Period)
	for k := range t {
		t[k] = bf16(f(k))
	}
	return t
}

// fill sets dst[j] = t[(start+j) % Period].
func (t table) fill(dst []uint16, start int64) {
	if len(dst) == 0 {
		return
	}
	ph := int(start % Period)
	n := copy(dst, t[ph:])
	if n < len(dst) {
		n += copy(dst[n:], t[:ph])
	}
	for n < len(dst) { // the rest repeats the first Period elements
		n += copy(dst[n:], dst[:min(n, len(dst)-n)])
	}
}

// patterns are the tables of one job of n ranks.
type patterns struct {
	n             int
	reduced       []table // per rank
	moved         []table // per rank
	sum           table   // the reduction of every rank's reduced
	nan           uint16
	scratch, want []uint16
}

func newPatterns(n int) *patterns {
	p := &patterns{n: n, nan: 0x7fc0}
	for r := 0; r < n; r++ {
		p.reduced = append(p.reduced, makeTable(func(k int) int { return reduced(r, k) }))
		p.moved = append(p.moved, makeTable(func(k int) int { return moved(r, k) }))
	}
	p.sum = makeTable(func(k int) int {
		s := 0
		for r := 0; r < n; r++ {
			s += reduced(r, k)
		}
		return s
	})
	return p
}

// input fills dst with rank r's input to c: count elements.
func (p *patterns) input(c Collective, r int, dst []uint16) {
	switch c {
	case AllReduce, ReduceScatter:
		p.reduced[r].fill(dst, 0)
	default:
		p.moved[r].fill(dst, 0)
	}
}

// expect fills dst with what rank r must hold after c over count elements
// (dst: the output, count elements for all-reduce, all-gather and
// all-to-all, count/n for reduce-scatter).
func (p *patterns) expect(c Collective, r int, count int64, dst []uint16) {
	b := count / int64(p.n)
	switch c {
	case AllReduce:
		p.sum.fill(dst, 0)
	case ReduceScatter:
		p.sum.fill(dst, int64(r)*b)
	case AllGather: // block q is rank q's input
		for q := 0; q < p.n; q++ {
			p.moved[q].fill(dst[int64(q)*b:int64(q+1)*b], 0)
		}
	case AllToAll: // block q is block r of rank q's input
		for q := 0; q < p.n; q++ {
			p.moved[q].fill(dst[int64(q)*b:int64(q+1)*b], int64(r)*b)
		}
	}
}

// wrong counts the elements of got that differ from want.
func wrong(got, want []uint16) int64 {
	if bytes.Equal(asBytes(got), asBytes(want)) {
		return 0
	}
	var n int64
	for i := range got {
		if got[i] != want[i] {
			n++
		}
	}
	return n
}

func asBytes(s []uint16) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 2*len(s))
}

// OutputCount is the elements of rank's output buffer for c over count
// elements.
func OutputCount(c Collective, count int64, ranks int) int64 {
	if c == ReduceScatter {
		return count / int64(ranks)
	}
	return count
}

// InputCount is the elements of a rank's input buffer.
func InputCount(c Collective, count int64, ranks int) int64 {
	if c == AllGather {
		return count / int64(ranks)
	}
	return count
}
