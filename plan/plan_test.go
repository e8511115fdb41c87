package plan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
	"github.com/moecast/moecast/serve"
	"github.com/moecast/moecast/sim"
)

var eagle3 = sim.Spec{Method: sim.SpecEAGLE3, DraftTokens: 3, Acceptance: []float64{0.8, 0.6, 0.45}}

// space is Kimi-K2.5 (INT4 experts) on the named GPU presets in 8-GPU
// nodes of their usual fabric, 1k/1k requests, bf16 and fp8 KV, with and
// without EAGLE-3. Roofline costs (no calibration tables).
func space(tb testing.TB, gpus ...string) *Space {
	tb.Helper()
	m, err := model.Preset("kimi-k2.5")
	require.NoError(tb, err)
	s := &Space{Model: m, KVCaches: []dtype.KVCache{dtype.KVBF16, dtype.KVFP8},
		Specs:    []sim.Spec{{Method: sim.SpecNone}, eagle3},
		Base:     sim.Config{Graphs: true, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9},
		Workload: Workload{Input: 1024, Output: 1024}}
	for _, name := range gpus {
		g, ok := kernels.LookupGPU(name)
		require.True(tb, ok, name)
		f, ok := comm.LookupFabric(g.Fabric)
		require.True(tb, ok, g.Fabric)
		s.GPUs = append(s.GPUs, GPUOption{GPU: g, Fabric: f})
	}
	return s
}

// TestEnumerateOnlyWhatSimAccepts: every candidate's config is one sim.New
// accepts, every rejection one it refuses with the same reason, no layout
// comes twice, and each replica stays within a node and MaxGPUs.
func TestEnumerateOnlyWhatSimAccepts(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h200-sxm")
	s.MaxGPUs = 6
	cands, rej, err := Enumerate(s)
	require.NoError(t, err)
	require.NotEmpty(t, cands)
	seen := map[string]bool{}
	for i := range cands {
		c := &cands[i]
		_, err := sim.New(c.Config)
		assert.NoError(t, err, c.Label())
		assert.False(t, seen[c.Label()], "duplicate %s", c.Label())
		seen[c.Label()] = true
		assert.LessOrEqual(t, c.GPUs(), 6, c.Label())
		assert.Equal(t, c.GPUs(), c.Config.Layout.TP*c.Config.Layout.DP, c.Label())
	}
	for i := range rej {
		r := &rej[i]
		_, err := sim.New(r.Config)
		if assert.Error(t, err, r.Label()) {
			assert.Equal(t, err.Error(), r.Reason)
		}
		assert.False(t, seen[r.Label()], "%s both emitted and rejected", r.Label())
	}
	// Per replica size n: TP | n splits, EP in {1, n} (one value at n = 1),
	// and DP attention for DP = 1, TP > 1; times 2 KV dtypes x 2 specs.
	want := 0
	for n := 1; n <= 6; n++ {
		for tp := 1; tp <= n; tp++ {
			if n%tp != 0 {
				continue
			}
			eps := 2
			if n == 1 {
				eps = 1
			}
			want += eps
			if tp == n && tp > 1 {
				want += eps
			}
		}
	}
	assert.Equal(t, 2*want*4, len(cands)+len(rej), "every layout is emitted or rejected")
	for _, l := range []string{"h200-sxm x4 TP4 EP4 kv bf16", "h200-sxm x4 TP1 DP4 EP4 kv fp8 eagle3 K3",
		"h200-sxm x4 TP4 DPA EP4 kv bf16", "rtx-pro-6000-server x6 TP2 DP3 EP6 kv bf16", "h200-sxm x1 TP1 kv bf16"} {
		assert.True(t, seen[l], "missing %s", l)
	}
	reasons := RejectionReasons(rej)
	require.NotEmpty(t, reasons)
	total := 0
	for _, r := range reasons {
		total += r.Count
	}
	assert.Equal(t, len(rej), total)
	// TP3 does not divide Kimi-K2.5's 64 heads.
	assert.True(t, slices.ContainsFunc(rej, func(r Rejection) bool { return r.Config.Layout.TP == 3 }))
}

// TestMaxConcurrencyIsSimsFit: the concurrency range is exactly what sim's
// memory model fits at the workload's final context.
func TestMaxConcurrencyIsSimsFit(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h100-sxm")
	s.Specs = nil
	cands, _, err := Enumerate(s)
	require.NoError(t, err)
	ctx := s.Workload.FitContext()
	zero := 0
	for i := range cands {
		c := &cands[i]
		if c.MaxConcurrency == 0 {
			zero++
			p, err := c.Sim.Step(1, ctx)
			require.NoError(t, err)
			assert.False(t, p.Fits, c.Label())
			continue
		}
		p, err := c.Sim.Step(c.MaxConcurrency, ctx)
		require.NoError(t, err)
		assert.True(t, p.Fits, "%s at %d", c.Label(), c.MaxConcurrency)
		if c.MaxConcurrency < sim.MaxBatchSize {
			p, err = c.Sim.Step(c.MaxConcurrency+1, ctx)
			require.NoError(t, err)
			assert.False(t, p.Fits, "%s at %d", c.Label(), c.MaxConcurrency+1)
		}
	}
	// Kimi-K2.5's ~590 GB of weights do not fit on one 80 GiB H100.
	assert.Positive(t, zero)
}

// bruteFront is the O(n^2) definition of the non-dominated set.
func bruteFront(xs, ys []float64, idx []int) map[int]bool {
	out := map[int]bool{}
	for _, p := range idx {
		dom := false
		for _, q := range idx {
			if Dominates(xs[q], ys[q], xs[p], ys[p]) {
				dom = true
				break
			}
		}
		if !dom {
			out[p] = true
		}
	}
	return out
}

func TestFrontMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for trial := range 200 {
		n := rng.IntN(60)
		xs, ys := make([]float64, n), make([]float64, n)
		var idx []int
		for i := range n {
			xs[i], ys[i] = float64(rng.IntN(8)), float64(rng.IntN(8)) // many ties
			if rng.IntN(4) > 0 {
				idx = append(idx, i)
			}
		}
		front, by := Front(xs, ys, idx)
		want := bruteFront(xs, ys, idx)
		got := map[int]bool{}
		for _, p := range front {
			got[p] = true
		}
		require.Equal(t, want, got, "trial %d: xs %v ys %v idx %v", trial, xs, ys, idx)
		assert.Equal(t, len(idx), len(front)+len(by), "trial %d: every index on the front or dominated", trial)
		for p, q := range by {
			assert.True(t, got[q], "trial %d: dominator %d of %d is on the front", trial, q, p)
			assert.True(t, Dominates(xs[q], ys[q], xs[p], ys[p]), "trial %d: %d dominates %d", trial, q, p)
		}
		for i := 1; i < len(front); i++ {
			assert.GreaterOrEqual(t, xs[front[i-1]], xs[front[i]], "trial %d: x descending", trial)
		}
	}
}

func searchOpts() Options {
	return Options{Concurrency: []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, SLO: SLO{MinPerUser: 20}}
}

// TestSearchInvariants: the front is non-dominated among the points that
// meet the SLOs, every other point lost for a stated and true reason, and
// the best point is the front's highest tokens/s per GPU.
func TestSearchInvariants(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h200-sxm")
	r, err := Search(s, searchOpts())
	require.NoError(t, err)
	require.NotEmpty(t, r.Front)
	counts := map[Verdict]int{}
	for i := range r.Points {
		p := &r.Points[i]
		c := &r.Candidates[p.Candidate]
		counts[p.Verdict]++
		if p.Verdict == NoMemory {
			assert.Greater(t, p.Concurrency, c.MaxConcurrency, c.Label())
			continue
		}
		assert.LessOrEqual(t, p.Concurrency, c.MaxConcurrency, c.Label())
		assert.Positive(t, p.Metrics.OutputTokensPerSecond)
		assert.False(t, p.Metrics.HasTTFT, "the screen has no TTFT")
		assert.InEpsilon(t, p.Metrics.OutputTokensPerSecond/float64(c.GPUs()), p.PerGPU, 1e-12)
		meets := p.Metrics.PerUser >= 20
		switch p.Verdict {
		case FailsSLO:
			assert.False(t, meets, "%s at %d", c.Label(), p.Concurrency)
			assert.Equal(t, FailPerUser, p.Fails)
		case OnFront:
			assert.True(t, meets)
			for j := range r.Points {
				q := &r.Points[j]
				if q.Verdict == OnFront || q.Verdict == Dominated {
					assert.False(t, Dominates(q.PerGPU, q.Metrics.PerUser, p.PerGPU, p.Metrics.PerUser),
						"front point %d dominated by %d", i, j)
				}
			}
		case Dominated:
			assert.True(t, meets)
			q := &r.Points[p.DominatedBy]
			assert.Equal(t, OnFront, q.Verdict)
			assert.True(t, Dominates(q.PerGPU, q.Metrics.PerUser, p.PerGPU, p.Metrics.PerUser))
		}
	}
	for _, v := range []Verdict{OnFront, Dominated, FailsSLO, NoMemory} {
		assert.Positive(t, counts[v], "some point is %s", v)
	}
	assert.Equal(t, counts[OnFront], len(r.Front))
	require.NotNil(t, r.Best)
	for i := range r.Points {
		if v := r.Points[i].Verdict; v == OnFront || v == Dominated {
			assert.LessOrEqual(t, r.Points[i].PerGPU, r.Points[r.Best.Point].PerGPU)
		}
	}
	assert.Equal(t, 1, r.Best.Replicas)
	for di, d := range r.Deployments {
		assert.Equal(t, di, d.Candidate)
		if d.Best >= 0 {
			assert.Contains(t, []Verdict{OnFront, Dominated}, d.Verdict)
		}
		if d.Verdict == NoMemory {
			assert.Zero(t, r.Candidates[di].MaxConcurrency)
		}
	}
	t.Logf("%d candidates, %d rejected, %d points: %v; best %s at %d: %.0f tok/s/GPU, %.1f tok/s/user",
		len(r.Candidates), len(r.Rejected), len(r.Points), counts, r.Candidates[r.Points[r.Best.Point].Candidate].Label(),
		r.Points[r.Best.Point].Concurrency, r.Points[r.Best.Point].PerGPU, r.Points[r.Best.Point].Metrics.PerUser)
}

func TestSearchSameForAnyWorkers(t *testing.T) {
	s := space(t, "b200-sxm")
	var prev *Result
	for _, w := range []int{1, 3} {
		o := searchOpts()
		o.Workers = w
		o.Target = Target{OutputTokensPerSecond: 5000}
		r, err := Search(s, o)
		require.NoError(t, err)
		if prev != nil {
			require.Equal(t, len(prev.Candidates), len(r.Candidates))
			for i := range r.Candidates {
				assert.Equal(t, prev.Candidates[i].Label(), r.Candidates[i].Label())
				assert.Equal(t, prev.Candidates[i].MaxConcurrency, r.Candidates[i].MaxConcurrency)
			}
			assert.Equal(t, prev.Rejected, r.Rejected)
			assert.Equal(t, prev.Points, r.Points, "workers %d", w)
			assert.Equal(t, prev.Front, r.Front)
			assert.Equal(t, prev.Deployments, r.Deployments)
			assert.Equal(t, prev.Best, r.Best)
		}
		prev = r
	}
}

// TestTargetNeedsFewestGPUs: with a target, Best needs ceil(target/replica
// rate) replicas, and no point meeting the SLOs needs fewer GPUs.
func TestTargetNeedsFewestGPUs(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h200-sxm")
	s.MaxGPUs = 64
	s.KVCaches = nil
	for _, tg := range []Target{{OutputTokensPerSecond: 1000}, {OutputTokensPerSecond: 50000}, {RequestRate: 4}} {
		o := searchOpts()
		o.Target = tg
		r, err := Search(s, o)
		require.NoError(t, err)
		require.NotNil(t, r.Best)
		want := tg.OutputTokensPerSecond + tg.RequestRate*float64(s.Workload.Output)
		b := r.Best
		p := &r.Points[b.Point]
		assert.Equal(t, want, b.TargetOutputTokensPerSecond)
		assert.Equal(t, int(math.Ceil(want/p.Metrics.OutputTokensPerSecond)), b.Replicas, "%+v", tg)
		assert.Equal(t, b.Replicas*r.Candidates[p.Candidate].GPUs(), b.GPUs)
		assert.Equal(t, b.GPUs <= 64, b.WithinMaxGPUs)
		for i := range r.Points {
			q := &r.Points[i]
			if q.Verdict != OnFront && q.Verdict != Dominated {
				continue
			}
			need := int(math.Ceil(want/q.Metrics.OutputTokensPerSecond)) * r.Candidates[q.Candidate].GPUs()
			assert.GreaterOrEqual(t, need, b.GPUs, "%+v: point %d", tg, i)
		}
		t.Logf("target %+v: %s at %d x %d replicas = %d GPUs", tg, r.Candidates[p.Candidate].Label(), p.Concurrency, b.Replicas, b.GPUs)
	}
}

// TestTTFTNotInvented: the screen has no TTFT, so a TTFT objective fails no
// point and a warning says it was not checked.
func TestTTFTNotInvented(t *testing.T) {
	s := space(t, "h200-sxm")
	o := searchOpts()
	o.SLO.TTFTP99 = 1 * unit.Nanosecond
	r, err := Search(s, o)
	require.NoError(t, err)
	for _, p := range r.Points {
		assert.Zero(t, p.Fails&FailTTFT)
	}
	require.NotEmpty(t, r.Warnings)
	assert.Contains(t, r.Warnings[0], "ttft-p99 not checked")
}

func TestNothingMeetsSLOs(t *testing.T) {
	s := space(t, "h200-sxm")
	o := searchOpts()
	o.SLO = SLO{MinPerUser: 1e6, TPOTP99: 1 * unit.Microsecond}
	r, err := Search(s, o)
	require.NoError(t, err)
	assert.Nil(t, r.Best)
	assert.Empty(t, r.Front)
	require.Len(t, r.Nearest, NearestCount)
	assert.Contains(t, r.Warnings, "no deployment meets the SLOs; the nearest points are listed")
	// Nearest first: the highest tokens/s per user of all priced points.
	top := 0.0
	for _, p := range r.Points {
		top = max(top, p.Metrics.PerUser)
	}
	assert.Equal(t, top, r.Points[r.Nearest[0]].Metrics.PerUser)
	for _, d := range r.Deployments {
		if d.Verdict != NoMemory {
			assert.Equal(t, FailsSLO, d.Verdict)
			assert.Equal(t, FailTPOT|FailPerUser, d.Fails)
		}
	}
	// With a refine stage nothing is refined, and the nearest points stay.
	ev := &derated{}
	o.Refine = ev
	rr, err := Search(s, o)
	require.NoError(t, err)
	assert.Zero(t, ev.calls.Load())
	assert.Equal(t, r.Nearest, rr.Nearest)
}

func TestSearchErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(*Space, *Options)
		want string
	}{
		{"max gpus", func(s *Space, _ *Options) { s.MaxGPUs = -1 }, "max GPUs must be > 0"},
		{"no gpus", func(s *Space, _ *Options) { s.GPUs = nil }, "no GPU types"},
		{"no model", func(s *Space, _ *Options) { s.Model = nil }, "no model"},
		{"two targets", func(_ *Space, o *Options) { o.Target = Target{OutputTokensPerSecond: 1, RequestRate: 1} }, "not both"},
		{"concurrency", func(_ *Space, o *Options) { o.Concurrency = []int{0} }, "concurrency 0 outside"},
		{"near", func(_ *Space, o *Options) { o.Near = -0.1 }, "near must be a finite value >= 0"},
		{"nan slo", func(_ *Space, o *Options) { o.SLO.MinPerUser = math.NaN() }, "min-tokens-per-s-per-user must be"},
		{"output", func(s *Space, _ *Options) { s.Workload.Output = 0 }, "want input >= 0 and output >= 1"},
		{"empty space", func(s *Space, _ *Options) {
			s.Specs = []sim.Spec{{Method: sim.SpecMTP, DraftTokens: 1, Acceptance: []float64{0.8}}}
		}, "empty search space: every layout was refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := space(t, "h200-sxm")
			s.MaxGPUs = 2
			o := searchOpts()
			tt.edit(s, &o)
			_, err := Search(s, o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestForEachLowestError(t *testing.T) {
	for _, w := range []int{1, 2, 7} {
		err := forEach(10000, w, func(i int) error {
			if i%997 == 500 {
				return fmt.Errorf("item %d", i)
			}
			return nil
		})
		assert.EqualError(t, err, "item 500", "workers %d", w)
	}
}

// TestForEachSmallSpreads: a few items (the refine stage's serving
// simulations: tens of points) still go to every worker, each item once,
// and the lowest-index error wins. Item 0 waits until another worker has
// taken an item: with one chunk for all it would never see one.
func TestForEachSmallSpreads(t *testing.T) {
	const n = 20
	var seen [n]atomic.Int32
	other := make(chan struct{})
	var once sync.Once
	err := forEach(n, 2, func(i int) error {
		seen[i].Add(1)
		if i == 0 {
			select {
			case <-other:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("no other worker took an item")
			}
			return nil
		}
		once.Do(func() { close(other) })
		if i == 13 || i == 17 {
			return fmt.Errorf("item %d", i)
		}
		return nil
	})
	assert.EqualError(t, err, "item 13")
	for i := range 14 {
		assert.Equal(t, int32(1), seen[i].Load(), "item %d", i)
	}
}

// TestForEachChunksShrink: take hands out [0, n) once, in order, in chunks
// that never grow and end at single items (so that the workers of the
// refine stage finish together), and starts with many items at a time
// when there are many.
func TestForEachChunksShrink(t *testing.T) {
	for _, c := range []struct{ n, workers int }{{260, 2}, {1570, 2}, {20, 2}, {7, 4}, {100000, 16}} {
		var next atomic.Int64
		var sizes []int
		at := 0
		for {
			lo, hi := take(&next, c.n, c.workers)
			if lo >= c.n {
				break
			}
			require.Equal(t, at, lo, "n %d workers %d: chunk starts where the last ended", c.n, c.workers)
			require.Greater(t, hi, lo)
			sizes = append(sizes, hi-lo)
			at = hi
		}
		assert.Equal(t, c.n, at, "n %d workers %d: every item handed out", c.n, c.workers)
		for i := 1; i < len(sizes); i++ {
			assert.LessOrEqual(t, sizes[i], sizes[i-1], "n %d workers %d: chunk %d grows", c.n, c.workers, i)
		}
		assert.Equal(t, 1, sizes[len(sizes)-1], "n %d workers %d: the last chunk is one item", c.n, c.workers)
		assert.LessOrEqual(t, sizes[0], maxChunk)
		if c.n >= 1000 {
			assert.Greater(t, sizes[0], 16, "n %d workers %d: cheap items go out many at a time", c.n, c.workers)
		}
	}
}

// TestEnumerateEveryPreset: for every model preset (MLA and GQA, with and
// without MTP) the enumeration on an 8-GPU H200 node yields
// candidates only sim.New accepts, and refuses MTP where sim does.
func TestEnumerateEveryPreset(t *testing.T) {
	mtp := sim.Spec{Method: sim.SpecMTP, DraftTokens: 1, Acceptance: []float64{0.85}}
	for _, name := range model.PresetNames() {
		t.Run(name, func(t *testing.T) {
			s := space(t, "h200-sxm")
			m, err := model.Preset(name)
			require.NoError(t, err)
			s.Model, s.KVCaches, s.Specs = m, nil, []sim.Spec{{}, mtp}
			cands, rej, err := Enumerate(s)
			require.NoError(t, err)
			require.NotEmpty(t, cands)
			for i := range cands {
				c := &cands[i]
				_, err := sim.New(c.Config)
				require.NoError(t, err, c.Label())
				if m.MTPLayers == 0 {
					assert.False(t, c.Config.Spec.Active(), "%s: MTP on a model without MTP layers", c.Label())
				}
				if m.Attn.Kind == model.GQA && c.Config.Layout.AttentionTP() > 1 {
					tp, kv := c.Config.Layout.TP, m.Attn.KVHeads
					assert.True(t, tp%kv == 0 || kv%tp == 0, "%s: TP %d vs %d kv heads", c.Label(), tp, kv)
				}
			}
			for i := range rej {
				_, err := sim.New(rej[i].Config)
				require.Error(t, err, rej[i].Label())
			}
		})
	}
}

func TestReasons(t *testing.T) {
	s := space(t, "rtx-pro-6000-server")
	s.KVCaches = nil
	o := searchOpts()
	o.SLO.TPOTP99 = 60 * unit.Millisecond
	r, err := Search(s, o)
	require.NoError(t, err)
	seen := map[Verdict]string{}
	for i := range r.Points {
		why := r.Reason(i, o.SLO)
		assert.NotContains(t, why, "NaN")
		assert.NotContains(t, why, "Inf")
		seen[r.Points[i].Verdict] = why
	}
	assert.Equal(t, "front", seen[OnFront])
	assert.Contains(t, seen[Dominated], "dominated by ")
	assert.Contains(t, seen[FailsSLO], "slo: ")
	assert.Contains(t, seen[NoMemory], "memory: ")
	for v, why := range seen {
		t.Logf("%s: %s", v, why)
	}
	dseen := map[Verdict]string{}
	for di := range r.Deployments {
		d := &r.Deployments[di]
		dseen[d.Verdict] = r.DeploymentReason(di, o.SLO)
		if d.Verdict == FailsSLO {
			for _, i := range d.Points {
				if r.Points[i].Verdict != NoMemory {
					assert.LessOrEqual(t, r.Points[i].Metrics.PerUser, r.Points[d.Fastest].Metrics.PerUser)
				}
			}
		}
	}
	assert.Equal(t, "front", dseen[OnFront])
	assert.Contains(t, dseen[NoMemory], "memory: ")
	for v, why := range dseen {
		t.Logf("deployment %s: %s", v, why)
	}
}

// derated is a stand-in for a serving simulation: the screen's figures
// scaled down by a factor that depends on the layout, and a TTFT.
type derated struct{ calls atomic.Int64 }

func (*derated) Name() string { return "test: derated screen" }

func (d *derated) Evaluate(c *Candidate, n int, w Workload) (Metrics, error) {
	d.calls.Add(1)
	m, err := Screen{}.Evaluate(c, n, w)
	f := 0.5 + 0.1*float64(c.Config.Layout.TP%4) + 0.05*float64(c.Config.Layout.DP%3)
	m.OutputTokensPerSecond *= f
	m.PerUser *= f
	m.TPOTP99 = unit.Seconds(float64(m.TPOTP99) / f)
	m.HasTTFT, m.TTFTP99 = true, unit.Seconds(float64(n)*1e-3)
	return m, err
}

// TestRefine: the points the screen puts near the front are re-priced by
// Options.Refine (and only those); the others are Screened by a front point
// that beat them by the margin at the screen; the refined front holds the
// front invariants on the refined figures.
func TestRefine(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h200-sxm")
	s.KVCaches = nil
	o := searchOpts()
	o.SLO.TTFTP99 = 200 * unit.Millisecond
	screen, err := Search(s, o)
	require.NoError(t, err)
	ev := &derated{}
	o.Refine = ev
	r, err := Search(s, o)
	require.NoError(t, err)
	k := 1 + DefaultNear
	refined, screened := 0, 0
	for i := range r.Points {
		p, sp := &r.Points[i], &screen.Points[i]
		switch {
		case sp.Verdict != OnFront && sp.Verdict != Dominated:
			assert.Equal(t, sp.Verdict, p.Verdict, "point %d lost at the screen already", i)
		case p.Verdict == Screened:
			screened++
			assert.Equal(t, sp.Metrics, p.Metrics, "a screened point keeps the screen's figures")
			q := &screen.Points[p.DominatedBy]
			assert.Equal(t, OnFront, q.Verdict)
			assert.True(t, q.PerGPU >= k*p.PerGPU && q.Metrics.PerUser >= k*p.Metrics.PerUser)
		default:
			refined++
			assert.True(t, p.Metrics.HasTTFT, "point %d refined", i)
			if p.Verdict == Dominated {
				q := &r.Points[p.DominatedBy]
				assert.Equal(t, OnFront, q.Verdict)
				assert.True(t, Dominates(q.PerGPU, q.Metrics.PerUser, p.PerGPU, p.Metrics.PerUser))
			}
			if p.Verdict == OnFront {
				for j := range r.Points {
					if q := &r.Points[j]; q.Verdict == OnFront || q.Verdict == Dominated {
						assert.False(t, Dominates(q.PerGPU, q.Metrics.PerUser, p.PerGPU, p.Metrics.PerUser))
					}
				}
			}
		}
	}
	assert.Equal(t, int64(refined), ev.calls.Load(), "Refine prices the refined points only")
	assert.Positive(t, screened)
	assert.Positive(t, refined)
	require.NotNil(t, r.Best)
	assert.True(t, r.Points[r.Best.Point].Metrics.HasTTFT)
	assert.Empty(t, r.Warnings, "the refined points all have a TTFT")
	assert.Contains(t, r.Evaluator, "test: derated screen, on the points within 25% of the front of screen")
	ds := 0
	for di := range r.Deployments {
		if r.Deployments[di].Verdict == Screened {
			ds++
			assert.Contains(t, r.DeploymentReason(di, o.SLO), "screened out: ")
		}
	}
	assert.Positive(t, ds, "some deployment lost at the screen")
	t.Logf("%d refined, %d screened out; front %d", refined, screened, len(r.Front))
}

// TestEnumerateAcrossNodes: with a NIC and MaxGPUs above the node, replicas
// of whole nodes are emitted too, each with its experts over all its GPUs
// and TP inside a node unless attention is data-parallel, priced across
// nodes on the NIC; without a NIC a replica stays within a node.
func TestEnumerateAcrossNodes(t *testing.T) {
	s := space(t, "h200-sxm")
	s.Specs, s.KVCaches = nil, nil
	s.MaxGPUs = 24
	cands, _, err := Enumerate(s)
	require.NoError(t, err)
	for i := range cands {
		assert.LessOrEqual(t, cands[i].GPUs(), 8, "no NIC: %s", cands[i].Label())
	}

	nic, ok := comm.LookupNIC("ib-400")
	require.True(t, ok)
	s.GPUs[0].NIC = nic
	cands, rej, err := Enumerate(s)
	require.NoError(t, err)
	sizes := map[int]bool{}
	seen := map[string]bool{}
	for _, layouts := range [][]sim.Config{func() (c []sim.Config) {
		for i := range cands {
			c = append(c, cands[i].Config)
		}
		for i := range rej {
			c = append(c, rej[i].Config)
		}
		return
	}()} {
		for _, c := range layouts {
			if c.GPUs <= 8 {
				assert.Zero(t, c.NIC.BW, "within a node: no NIC")
				continue
			}
			sizes[c.GPUs] = true
			l := c.Layout
			assert.Equal(t, c.GPUs, l.EP, "wide EP: %s", label(&c))
			assert.True(t, l.TP <= 8 || l.DPAttention, "TP inside a node: %s", label(&c))
			assert.Equal(t, nic, c.NIC)
			assert.Equal(t, 8, c.Fabric.NodeGPUs)
			seen[label(&c)] = true
		}
	}
	assert.Equal(t, map[int]bool{16: true, 24: true}, sizes, "whole nodes up to MaxGPUs")
	for _, l := range []string{"h200-sxm x16 TP8 DP2 EP16 2 nodes ib-400 kv bf16", "h200-sxm x16 TP16 DPA EP16 2 nodes ib-400 kv bf16",
		"h200-sxm x24 TP1 DP24 EP24 3 nodes ib-400 kv bf16"} {
		assert.True(t, seen[l], "missing %s", l)
	}
	assert.False(t, seen["h200-sxm x16 TP16 EP16 2 nodes ib-400 kv bf16"], "TP across nodes")
	// a wide-EP replica across nodes prices its dispatch on the NIC
	for i := range cands {
		c := &cands[i]
		if c.GPUs() == 16 && c.Config.Layout.DP == 16 {
			ops, err := c.Sim.Explain(64, 2048)
			require.NoError(t, err)
			found := false
			for _, o := range ops {
				if o.Name == "moe dispatch alltoall" {
					found = true
					assert.Contains(t, o.Estimate.Source.Describe(), "NIC ib-400")
				}
			}
			assert.True(t, found)
		}
	}
}

// TestEnumerateNVL72: on an NVL72 rack (the fabric joins 72 GPUs) replicas
// of whole 8-GPU nodes need no NIC: NVLink carries them, nothing is priced
// across nodes.
func TestEnumerateNVL72(t *testing.T) {
	s := space(t, "gb200")
	s.Specs, s.KVCaches = nil, nil
	s.MaxGPUs = 16
	cands, _, err := Enumerate(s)
	require.NoError(t, err)
	n16 := 0
	for i := range cands {
		c := &cands[i]
		if c.GPUs() == 16 {
			n16++
			assert.Zero(t, c.Config.NIC.BW, c.Label())
			assert.Equal(t, 72, c.Config.Fabric.NodeGPUs, c.Label())
			assert.NotContains(t, c.Label(), "nodes")
		}
	}
	assert.Positive(t, n16, "16-GPU replicas in the rack")
}

// TestEnumerateEngineVersion: with no fraction given, each candidate's
// share of GPU memory is its engine's default at the space's engine
// version (SGLang's mem_fraction_static before 0.5.3 differs from the
// newest's).
func TestEnumerateEngineVersion(t *testing.T) {
	frac := func(version string) float64 {
		s := space(t, "h200-sxm")
		s.MaxGPUs = 8
		s.Specs = s.Specs[:1]
		s.Base.GPUMemoryUtilization = 0
		s.Engine = serve.SGLang
		s.EngineVersion = version
		cands, _, err := Enumerate(s)
		require.NoError(t, err)
		for _, c := range cands {
			if c.Engine.Pick(s.Engine) == serve.SGLang && c.Config.GPUs == 8 && !c.Config.Layout.DPAttention {
				return c.Config.GPUMemoryUtilization
			}
		}
		t.Fatal("no SGLang candidate on 8 GPUs")
		return 0
	}
	newest, old := frac(""), frac("0.5.1")
	assert.NotEqual(t, newest, old)
	// 0.5.1 on an H200 at TP8: (12 + 8/2) GiB reserved of 143766 MiB,
	// 0.886, x 0.95 for Kimi-K2.5's vision tower
	assert.InDelta(t, 0.886*0.95, old, 0.0005)
}

// TestEnumerateSameForAnyWorkers: the candidates (configs, memory, max
// concurrency) and rejections do not depend on the number of workers nor
// on the order the jobs run in (each GPU option's first jobs run apart,
// first).
func TestEnumerateSameForAnyWorkers(t *testing.T) {
	s := space(t, "rtx-pro-6000-server", "h200-sxm", "b200-sxm")
	s.MaxGPUs = 8
	want, wantRej, err := enumerate(s, 1)
	require.NoError(t, err)
	for _, w := range []int{2, 3, 7} {
		got, rej, err := enumerate(s, w)
		require.NoError(t, err)
		require.Len(t, got, len(want), "workers %d", w)
		for i := range want {
			g, x := &got[i], &want[i]
			assert.Equal(t, x.Label(), g.Label(), "workers %d, candidate %d", w, i)
			assert.Equal(t, x.Config, g.Config, "workers %d, candidate %d", w, i)
			assert.Equal(t, x.Memory, g.Memory, "workers %d, %s", w, x.Label())
			assert.Equal(t, x.MaxConcurrency, g.MaxConcurrency, "workers %d, %s", w, x.Label())
		}
		assert.Equal(t, wantRej, rej, "workers %d", w)
	}
}
