package ncclrun

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/unit"
)

func TestDefaultPlan(t *testing.T) {
	full := DefaultPlan(false)
	require.NoError(t, full.Check())
	assert.Len(t, full.Sizes, 14+28)
	assert.Equal(t, Size{Bytes: 8}, full.Sizes[0])
	assert.Equal(t, Size{Bytes: 1 << 30}, full.Sizes[len(full.Sizes)-1])
	assert.Contains(t, full.Sizes, Size{Bytes: 14336, Tokens: 1})
	assert.Contains(t, full.Sizes, Size{Bytes: 14336 * 8192, Tokens: 8192})
	for i := 1; i < len(full.Sizes); i++ {
		assert.Less(t, full.Sizes[i-1].Bytes, full.Sizes[i].Bytes)
	}
	quick := DefaultPlan(true)
	require.NoError(t, quick.Check())
	assert.Len(t, quick.Sizes, 5+7)
	assert.Equal(t, int64(128<<20), quick.Sizes[len(quick.Sizes)-1].Bytes)
	assert.Equal(t, []Mode{Eager, Graph}, full.Modes)

	bad := []struct {
		p    Plan
		want string
	}{
		{Plan{}, "empty plan"},
		{Plan{Collectives: []Collective{"bcast"}, Modes: Modes, Sizes: full.Sizes, Repeats: 1, Timeout: 1}, `collective "bcast"`},
		{Plan{Collectives: Collectives, Modes: []Mode{"lazy"}, Sizes: full.Sizes, Repeats: 1, Timeout: 1}, `mode "lazy"`},
		{Plan{Collectives: Collectives, Modes: Modes, Sizes: full.Sizes, Repeats: 0, Timeout: 1}, "want at least 1 repeat"},
		{Plan{Collectives: Collectives, Modes: Modes, Sizes: []Size{{Bytes: 1}}, Repeats: 1, Timeout: 1}, "size 1 B"},
		{Plan{Collectives: Collectives, Modes: Modes, Sizes: full.Sizes, Repeats: 1}, "timeout 0s"},
	}
	for _, tt := range bad {
		assert.ErrorContains(t, tt.p.Check(), tt.want)
	}
}

func TestShape(t *testing.T) {
	cases := []struct {
		c          Collective
		bytes      int64
		ranks      int
		eff, count int64
		inN, outN  int64
		name       string
	}{
		{AllReduce, 14336, 8, 14336, 7168, 7168, 7168, "all-reduce: the whole buffer"},
		{AllReduce, 8, 3, 8, 4, 4, 4, "all-reduce is not rounded"},
		{AllGather, 14336, 8, 14336, 7168, 896, 7168, "all-gather: the whole gathered array"},
		{AllGather, 14336, 3, 14334, 7167, 2389, 7167, "rounded to a multiple of 2 x ranks"},
		{ReduceScatter, 1 << 20, 8, 1 << 20, 1 << 19, 1 << 19, 1 << 16, "reduce-scatter: the whole input"},
		{AllToAll, 8, 8, 0, 0, 0, 0, "too small for 8 ranks"},
		{AllToAll, 16, 8, 16, 8, 8, 8, "all-to-all: what one rank sends"},
	}
	for _, tt := range cases {
		eff, count := Shape(tt.c, tt.bytes, tt.ranks)
		assert.Equal(t, [2]int64{tt.eff, tt.count}, [2]int64{eff, count}, tt.name)
		if count > 0 {
			assert.Equal(t, tt.inN, InputCount(tt.c, count, tt.ranks), tt.name)
			assert.Equal(t, tt.outN, OutputCount(tt.c, count, tt.ranks), tt.name)
		}
	}
	pts := DefaultPlan(false).Points(8)
	assert.Len(t, pts, 42+3*41, "8 B gives 8 ranks no element of all-gather, reduce-scatter, all-to-all")
	for _, p := range pts {
		assert.Equal(t, p.Bytes, 2*p.Count)
		assert.Equal(t, Iters(p.Bytes), p.Iters)
	}
}

func TestBusFactor(t *testing.T) {
	// nccl-tests doc/PERFORMANCE.md
	assert.Equal(t, 1.75, BusFactor(AllReduce, 8))
	assert.Equal(t, 0.875, BusFactor(AllGather, 8))
	assert.Equal(t, 0.5, BusFactor(ReduceScatter, 2))
	assert.Equal(t, 0.75, BusFactor(AllToAll, 4))
	assert.Equal(t, 0.0, BusFactor(AllReduce, 1))
	r := Result{Collective: AllReduce, Ranks: 8, Bytes: 1 << 30}
	assert.InDelta(t, 1073741824/500e-6, r.AlgBW(500e-6), 1)
	assert.InDelta(t, 1.75*1073741824/500e-6, r.BusBW(500e-6), 1)
}

// simulate computes on the host what NCCL leaves in every rank's output
// for the inputs the patterns give, the way the collective is defined.
func simulate(p *patterns, c Collective, count int64) [][]uint16 {
	n := p.n
	in := make([][]float32, n)
	for r := 0; r < n; r++ {
		h := make([]uint16, InputCount(c, count, n))
		p.input(c, r, h)
		in[r] = make([]float32, len(h))
		for i, v := range h {
			in[r][i] = fromBF16(v)
		}
	}
	b := count / int64(n)
	out := make([][]uint16, n)
	for r := 0; r < n; r++ {
		o := make([]float32, OutputCount(c, count, n))
		switch c {
		case AllReduce:
			for q := 0; q < n; q++ {
				for i := range o {
					o[i] += in[q][i]
				}
			}
		case ReduceScatter:
			for q := 0; q < n; q++ {
				for j := range o {
					o[j] += in[q][int64(r)*b+int64(j)]
				}
			}
		case AllGather:
			for q := 0; q < n; q++ {
				copy(o[int64(q)*b:], in[q])
			}
		case AllToAll:
			for q := 0; q < n; q++ {
				copy(o[int64(q)*b:int64(q+1)*b], in[q][int64(r)*b:])
			}
		}
		out[r] = make([]uint16, len(o))
		for i, v := range o {
			out[r][i] = toBF16(v)
		}
	}
	return out
}

func fromBF16(v uint16) float32 { return math.Float32frombits(uint32(v) << 16) }
func toBF16(f float32) uint16   { return uint16(math.Float32bits(f) >> 16) }

// TestCheck: the expected outputs are what the collectives compute from
// the inputs (exactly, in bf16, up to MaxRanks), and a misplaced block, a
// missed rank or one changed element is counted.
func TestCheck(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, MaxRanks} {
		p := newPatterns(n)
		for _, c := range Collectives {
			count := int64(n) * (Period + 1234) // crosses the period
			if n == MaxRanks {
				count = int64(n) * 300
			}
			outs := simulate(p, c, count)
			for r := 0; r < n; r += max(1, n/4) {
				want := make([]uint16, len(outs[r]))
				p.expect(c, r, count, want)
				require.Zero(t, wrong(outs[r], want), "%s n=%d rank %d", c, n, r)
				bad := append([]uint16(nil), outs[r]...)
				bad[len(bad)/2] ^= 0x0080 // one element off by a bit
				assert.Equal(t, int64(1), wrong(bad, want), "%s n=%d", c, n)
			}
			if n > 1 {
				// rank 1's output in rank 0's place: most elements differ
				want := make([]uint16, len(outs[0]))
				p.expect(c, 0, count, want)
				if c == AllReduce || c == AllGather {
					continue // the same on every rank
				}
				assert.Greater(t, wrong(outs[1], want), int64(len(want)/2), "%s n=%d", c, n)
			}
		}
		if n > 1 {
			// an all-reduce that missed the last rank
			count := int64(5000)
			partial := newPatterns(n - 1)
			outs := simulate(partial, AllReduce, count)
			want := make([]uint16, count)
			p.expect(AllReduce, 0, count, want)
			assert.Equal(t, count, wrong(outs[0], want), "n=%d", n)
		}
	}
	var tbl table = makeTable(func(k int) int { return k % 256 })
	dst := make([]uint16, 3*Period+17)
	tbl.fill(dst, 5)
	for j := range dst {
		if dst[j] != tbl[(5+j)%Period] {
			t.Fatalf("fill[%d] = %d", j, dst[j])
		}
	}
}

func TestCombineAndReport(t *testing.T) {
	var ms []Measurement
	for r := 0; r < 2; r++ {
		for _, b := range []int64{1 << 20, 2 << 20} {
			us := unit.Seconds(10e-6 + float64(b)/100e9 + float64(r)*1e-6)
			ip := Timing{Median: us * 1.1, Min: us, Max: us * 1.2}
			ms = append(ms, Measurement{Rank: r, Collective: AllReduce, Mode: Graph, Bytes: b, Count: b / 2, Iters: 10,
				Time: Timing{Median: us, Min: us * 0.9, Max: us * 1.3}, InPlace: &ip})
		}
	}
	res, err := Combine(2, ms)
	require.NoError(t, err)
	require.Len(t, res, 2)
	want := 10e-6 + float64(1<<20)/100e9 + 0.5e-6
	assert.InDelta(t, want, float64(res[0].Time.Median), 1e-15, "mean of the ranks' medians")
	assert.InDelta(t, (10e-6+float64(1<<20)/100e9)*0.9, float64(res[0].Time.Min), 1e-15)
	assert.InDelta(t, (11e-6+float64(1<<20)/100e9)*1.3, float64(res[0].Time.Max), 1e-15)
	assert.True(t, res[0].OK())

	_, err = Combine(3, ms)
	assert.ErrorContains(t, err, "no measurement from rank 2")
	_, err = Combine(2, append(ms, ms[0]))
	assert.ErrorContains(t, err, "rank 0 measured twice")

	b, err := json.Marshal(ms)
	require.NoError(t, err)
	var back []Measurement
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, ms, back, "what Gather carries")

	// The report reads back through moecast's nccl-tests importer: same
	// sizes and times, algbw consistent with them.
	var buf bytes.Buffer
	devs := []DeviceInfo{{Rank: 0, Host: "box", Ord: 0, Name: "NVIDIA H200", UUID: "GPU-a"}, {Rank: 1, Host: "box", Ord: 1, Name: "NVIDIA H200", UUID: "GPU-b"}}
	require.NoError(t, Report(&buf, res, devs, 22809))
	text := buf.String()
	assert.Contains(t, text, "# Collective test starting: all_reduce_perf")
	assert.Contains(t, text, "bfloat16    sum     -1")
	path := filepath.Join(t.TempDir(), "all_reduce_perf.txt")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	f, err := calib.ImportNCCLTests([]string{path}, calib.NCCLTestsOptions{GPU: "h200-sxm", Fabric: "nvlink4", Date: "2026-12-01", Command: "test"})
	require.NoError(t, err, text)
	require.Len(t, f.Tables, 1)
	tb := f.Tables[0]
	assert.Equal(t, "allreduce", tb.Op)
	assert.Equal(t, "cuda-graph", tb.Provenance.Launch)
	require.Len(t, tb.Rows, 2)
	assert.Equal(t, 2.0, tb.Rows[0][0])
	assert.Equal(t, float64(1<<20), tb.Rows[0][1])
	assert.InDelta(t, res[0].Time.Median.Us(), tb.Rows[0][2], 0.005)
	assert.InDelta(t, res[0].InPlace.Median.Us(), tb.Rows[0][3], 0.005)
	assert.False(t, strings.Contains(text, "FAILED"))

	res[1].Wrong = 3
	buf.Reset()
	require.NoError(t, Report(&buf, res[1:], devs, 22809))
	assert.Contains(t, buf.String(), "# Out of bounds values : 3 FAILED")
}

// TestSetupTimeoutMessage: a setup call that times out (bounded) has no
// communicator to abort, and its error does not claim one was aborted.
func TestSetupTimeoutMessage(t *testing.T) {
	err := error(&TimeoutError{What: "ncclCommInitAll", Timeout: time.Second, Setup: true})
	assert.Equal(t, "ncclrun: ncclCommInitAll: not done after 1s (a rank did not join?); no communicator to abort: the call is left blocked", err.Error())
	err = &TimeoutError{What: "allreduce 8 B (eager, 2 ranks)", Timeout: time.Second}
	assert.Contains(t, err.Error(), "communicators aborted (ncclCommAbort)")
}
