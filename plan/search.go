package plan

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/sim"
)

// SLO is the service-level objectives a point must meet; a zero field is
// not checked.
type SLO struct {
	TTFTP99 unit.Seconds
	TPOTP99 unit.Seconds
	// MinPerUser is the least tokens/s per user.
	MinPerUser float64
}

// Target is a load the deployment must carry; at most one field is set.
type Target struct {
	OutputTokensPerSecond float64
	RequestRate           float64 // requests/s; needs RequestRate x Workload.Output output tokens/s
}

// Options configures Search.
type Options struct {
	// Concurrency is the grid of requests in flight per replica, each in
	// [1, sim.MaxBatchSize]; empty: defaultConcurrency. Sorted and
	// deduplicated by Search.
	Concurrency []int
	SLO         SLO
	Target      Target
	// Priced, when set, counts the points priced so far (screen and
	// refine), for a caller's progress display; the search only adds.
	Priced *atomic.Int64
	// Workers evaluating points in parallel; 0: GOMAXPROCS. The result
	// does not depend on it.
	Workers int
	// Evaluator prices points; nil: Screen.
	Evaluator Evaluator
	// Refine, when set, re-prices the points the Evaluator puts near the
	// front: those meeting the SLOs there that no front point beats by a
	// factor 1+Near on both axes. Verdicts, front and best are then those
	// of the refined points alone; the others become Screened, keeping the
	// Evaluator's figures.
	Refine Evaluator
	// Near is the margin of Refine (0: DefaultNear).
	Near float64
}

// DefaultNear is the margin Options.Refine uses when Options.Near is 0: a
// point is refined unless a screen-front point has 25% more tokens/s per
// GPU and 25% more tokens/s per user.
const DefaultNear = 0.25

// defaultConcurrency is 1, 2, 4, ..., 512.
func defaultConcurrency() []int {
	var c []int
	for n := 1; n <= 512; n *= 2 {
		c = append(c, n)
	}
	return c
}

// Verdict is how a point or a deployment fared.
type Verdict uint8

const (
	OnFront   Verdict = iota
	Dominated         // by the point DominatedBy names
	FailsSLO          // the objectives in Fails
	NoMemory          // the concurrency does not fit (not priced)
	// Screened: with Options.Refine, not refined because the screen-front
	// point DominatedBy beat it by the margin on both axes (at the
	// Evaluator's figures, which the point keeps).
	Screened
)

var verdictNames = [...]string{"front", "dominated", "slo", "memory", "screened"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// SLOFail is a set of objectives missed.
type SLOFail uint8

const (
	FailTTFT SLOFail = 1 << iota
	FailTPOT
	FailPerUser
)

func (f SLOFail) String() string {
	var s []string
	for _, n := range []struct {
		f    SLOFail
		name string
	}{{FailTTFT, "ttft-p99"}, {FailTPOT, "tpot-p99"}, {FailPerUser, "min-tokens-per-s-per-user"}} {
		if f&n.f != 0 {
			s = append(s, n.name)
		}
	}
	return strings.Join(s, ",")
}

// Point is one candidate at one concurrency.
type Point struct {
	Candidate   int // index into Result.Candidates
	Concurrency int
	Metrics     Metrics // zero for NoMemory
	PerGPU      float64 // output tokens/s per GPU
	Verdict     Verdict
	Fails       SLOFail // with FailsSLO
	DominatedBy int     // index into Result.Points with Dominated, else -1
	// Refined: Metrics are Options.Refine's (the serving simulation), not
	// the Evaluator's screen figures. Charts and tables that mix the two
	// pricings tell them apart by it.
	Refined bool
}

// Deployment is one candidate's outcome: its best point that meets the
// SLOs (highest tokens/s per GPU) and why it lost if it did.
type Deployment struct {
	Candidate int
	Points    []int // its points, concurrency ascending
	Best      int   // -1 when no point meets the SLOs
	// Verdict: OnFront when one of its points is on the front; Dominated
	// when its best point is (DominatedBy, a front point); Screened when
	// none was refined but one met the SLOs at the screen (DominatedBy:
	// the screen-front point that beat its best); FailsSLO when no priced
	// point meets the SLOs (Fails: the objectives missed at its
	// highest-tokens/s-per-user point); NoMemory when no concurrency fits.
	Verdict     Verdict
	Fails       SLOFail
	DominatedBy int
	// Fastest is its priced point of the highest tokens/s per user (-1
	// when none is priced).
	Fastest int
}

// Best is the recommended point and what a target needs of it.
type Best struct {
	Point int // index into Result.Points
	// Replicas and GPUs needed for Options.Target (1 replica without one).
	Replicas, GPUs int
	// TooMany: the target needs MaxReplicas replicas or more (Replicas is
	// MaxReplicas then, not the count).
	TooMany bool
	// TargetOutputTokensPerSecond is the output rate the target asks for
	// (0 without one).
	TargetOutputTokensPerSecond float64
	// WithinMaxGPUs is false when the target needs more than
	// Space.MaxGPUs GPUs even at this, the point needing fewest.
	WithinMaxGPUs bool
}

// Result is a plan search.
type Result struct {
	Candidates  []Candidate
	Rejected    []Rejection
	Points      []Point
	Deployments []Deployment // one per candidate, in its order
	Front       []int        // indices into Points, tokens/s per GPU descending
	Best        *Best        // nil when no point meets the SLOs
	// Nearest holds, when no point meets the SLOs, up to NearestCount
	// priced points closest to meeting them (smallest worst ratio of
	// achieved to required), closest first.
	Nearest   []int
	Evaluator string
	Warnings  []string
}

// NearestCount is how many nearest points Result.Nearest holds.
const NearestCount = 3

// MaxReplicas bounds the replicas a target may need: counts are computed
// in int (64 bits) and never capped below this; at or above it Best.TooMany
// is set and the count is not printed as if it were one (2^53: beyond it a
// float64 ratio no longer holds whole numbers).
const MaxReplicas = 1 << 53

func (o *Options) validate() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"ttft-p99", float64(o.SLO.TTFTP99)}, {"tpot-p99", float64(o.SLO.TPOTP99)},
		{"min-tokens-per-s-per-user", o.SLO.MinPerUser}, {"target-output-tokens-per-s", o.Target.OutputTokensPerSecond},
		{"target-request-rate", o.Target.RequestRate}} {
		if !(v.v >= 0) || math.IsInf(v.v, 0) {
			return fmt.Errorf("plan: %s must be a finite value >= 0, got %g", v.name, v.v)
		}
	}
	if o.Target.OutputTokensPerSecond > 0 && o.Target.RequestRate > 0 {
		return errors.New("plan: give a target output rate or a target request rate, not both")
	}
	if !(o.Near >= 0) || math.IsInf(o.Near, 0) {
		return fmt.Errorf("plan: near must be a finite value >= 0, got %g", o.Near)
	}
	if o.Workers < 0 {
		return fmt.Errorf("plan: workers must be >= 0, got %d", o.Workers)
	}
	for _, c := range o.Concurrency {
		if c < 1 || c > sim.MaxBatchSize {
			return fmt.Errorf("plan: concurrency %d outside [1, %d]", c, sim.MaxBatchSize)
		}
	}
	return nil
}

// Search enumerates s, prices every candidate at every concurrency of the
// grid that fits in memory, applies the SLOs and builds the front.
func Search(s *Space, opt Options) (_ *Result, err error) {
	defer asInput(&err)
	if err := opt.validate(); err != nil {
		return nil, err
	}
	grid := slices.Clone(opt.Concurrency)
	if len(grid) == 0 {
		grid = defaultConcurrency()
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	ev := opt.Evaluator
	if ev == nil {
		ev = Screen{}
	}
	cands, rej, err := enumerate(s, opt.Workers)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("plan: empty search space: every layout was refused (%s)", firstReasons(rej))
	}
	r := &Result{Candidates: cands, Rejected: rej, Evaluator: ev.Name()}
	r.Deployments = make([]Deployment, len(cands))
	for ci := range cands {
		d := &r.Deployments[ci]
		d.Candidate, d.Best, d.DominatedBy = ci, -1, -1
		for _, c := range grid {
			d.Points = append(d.Points, len(r.Points))
			p := Point{Candidate: ci, Concurrency: c, DominatedBy: -1}
			if c > cands[ci].MaxConcurrency {
				p.Verdict = NoMemory
			}
			r.Points = append(r.Points, p)
		}
	}
	var jobs []int
	for i := range r.Points {
		if r.Points[i].Verdict != NoMemory {
			jobs = append(jobs, i)
		}
	}
	if err := r.price(s, ev, opt.Workers, jobs, opt.Priced); err != nil {
		return nil, err
	}
	r.judge(jobs, opt.SLO)
	if opt.Refine != nil {
		if jobs, err = r.refine(s, &opt, jobs); err != nil {
			return nil, err
		}
	}
	r.deployments()
	r.best(s, opt.Target)
	r.warn(opt.SLO, jobs)
	return r, nil
}

// price evaluates the points jobs with ev on opt.Workers goroutines.
func (r *Result) price(s *Space, ev Evaluator, workers int, jobs []int, priced *atomic.Int64) error {
	return forEach(len(jobs), workers, func(j int) error {
		if priced != nil {
			defer priced.Add(1)
		}
		p := &r.Points[jobs[j]]
		c := &r.Candidates[p.Candidate]
		m, err := ev.Evaluate(c, p.Concurrency, s.Workload)
		if err != nil {
			return fmt.Errorf("plan: %s at concurrency %d: %w", c.Label(), p.Concurrency, err)
		}
		if !m.finite() {
			return fmt.Errorf("plan: %s at concurrency %d: %s gave a negative or non-finite figure", c.Label(), p.Concurrency, ev.Name())
		}
		p.Metrics = m
		p.PerGPU = m.OutputTokensPerSecond / float64(c.GPUs())
		return nil
	})
}

// refine re-prices the screened points near the front with opt.Refine and
// judges them alone; it returns the refined points.
func (r *Result) refine(s *Space, opt *Options, priced []int) ([]int, error) {
	if len(r.Front) == 0 {
		return priced, nil // nothing meets the SLOs at the screen: keep its nearest points
	}
	near := opt.Near
	if near == 0 {
		near = DefaultNear
	}
	k := 1 + near
	// With a target, a point the front screens out can still be the best
	// (fewest GPUs in total: whole replicas): keep every point whose
	// screen figures need at most k times the fewest GPUs the screen finds.
	want := opt.Target.OutputTokensPerSecond
	if opt.Target.RequestRate > 0 {
		want = opt.Target.RequestRate * float64(s.Workload.Output)
	}
	gpusFor := func(p *Point) float64 {
		return math.Ceil(want/p.Metrics.OutputTokensPerSecond) * float64(r.Candidates[p.Candidate].GPUs())
	}
	fewest := math.Inf(1)
	if want > 0 {
		for _, i := range priced {
			if p := &r.Points[i]; (p.Verdict == OnFront || p.Verdict == Dominated) && p.Metrics.OutputTokensPerSecond > 0 {
				fewest = min(fewest, gpusFor(p))
			}
		}
	}
	var jobs []int
	for _, i := range priced {
		p := &r.Points[i]
		if p.Verdict != OnFront && p.Verdict != Dominated {
			continue
		}
		if want > 0 && p.Metrics.OutputTokensPerSecond > 0 && gpusFor(p) <= math.Ceil(k*fewest) {
			jobs = append(jobs, i)
			continue
		}
		by := -1
		for _, f := range r.Front {
			q := &r.Points[f]
			if q.PerGPU >= k*p.PerGPU && q.Metrics.PerUser >= k*p.Metrics.PerUser &&
				Dominates(q.PerGPU, q.Metrics.PerUser, p.PerGPU, p.Metrics.PerUser) {
				by = f
				break
			}
		}
		if by >= 0 {
			p.Verdict, p.DominatedBy = Screened, by
			continue
		}
		jobs = append(jobs, i)
	}
	if err := r.price(s, opt.Refine, opt.Workers, jobs, opt.Priced); err != nil {
		return nil, err
	}
	for _, i := range jobs {
		r.Points[i].Refined = true
	}
	for _, i := range jobs {
		p := &r.Points[i]
		p.Verdict, p.Fails, p.DominatedBy = OnFront, 0, -1
	}
	r.Front, r.Nearest = nil, nil
	r.judge(jobs, opt.SLO)
	r.Evaluator = fmt.Sprintf("%s, on the points within %g%% of the front of %s", opt.Refine.Name(), 100*near, r.Evaluator)
	return jobs, nil
}

func firstReasons(rej []Rejection) string {
	rc := RejectionReasons(rej)
	var s []string
	for i, c := range rc {
		if i == 3 {
			s = append(s, fmt.Sprintf("and %d more reasons", len(rc)-3))
			break
		}
		s = append(s, fmt.Sprintf("%dx %s", c.Count, c.Reason))
	}
	return strings.Join(s, "; ")
}

// fails is the set of objectives m misses.
func (slo *SLO) fails(m *Metrics) SLOFail {
	var f SLOFail
	if slo.TTFTP99 > 0 && m.HasTTFT && m.TTFTP99 > slo.TTFTP99 {
		f |= FailTTFT
	}
	if slo.TPOTP99 > 0 && m.TPOTP99 > slo.TPOTP99 {
		f |= FailTPOT
	}
	if slo.MinPerUser > 0 && m.PerUser < slo.MinPerUser {
		f |= FailPerUser
	}
	return f
}

// shortfall is the worst ratio of achieved to required over the objectives
// m misses (1 = just meets them).
func (slo *SLO) shortfall(m *Metrics) float64 {
	worst := 1.0
	if slo.TTFTP99 > 0 && m.HasTTFT {
		worst = max(worst, float64(m.TTFTP99/slo.TTFTP99))
	}
	if slo.TPOTP99 > 0 {
		worst = max(worst, float64(m.TPOTP99/slo.TPOTP99))
	}
	if slo.MinPerUser > 0 {
		if m.PerUser > 0 {
			worst = max(worst, slo.MinPerUser/m.PerUser)
		} else {
			worst = math.MaxFloat64
		}
	}
	return worst
}

// judge sets each priced point's verdict and builds the front of those
// meeting the SLOs.
func (r *Result) judge(priced []int, slo SLO) {
	var ok []int
	for _, i := range priced {
		p := &r.Points[i]
		if p.Fails = slo.fails(&p.Metrics); p.Fails != 0 {
			p.Verdict = FailsSLO
			continue
		}
		ok = append(ok, i)
	}
	xs := make([]float64, len(r.Points))
	ys := make([]float64, len(r.Points))
	for _, i := range ok {
		xs[i], ys[i] = r.Points[i].PerGPU, r.Points[i].Metrics.PerUser
	}
	front, by := Front(xs, ys, ok)
	r.Front = front
	for _, i := range front {
		r.Points[i].Verdict = OnFront
	}
	for i, b := range by {
		r.Points[i].Verdict, r.Points[i].DominatedBy = Dominated, b
	}
	if len(ok) == 0 {
		priced = slices.Clone(priced)
		slices.SortStableFunc(priced, func(a, b int) int {
			pa, pb := &r.Points[a], &r.Points[b]
			if c := cmp.Compare(slo.shortfall(&pa.Metrics), slo.shortfall(&pb.Metrics)); c != 0 {
				return c
			}
			return cmp.Compare(pb.PerGPU, pa.PerGPU)
		})
		r.Nearest = slices.Clone(priced[:min(NearestCount, len(priced))])
	}
}

func (r *Result) deployments() {
	for di := range r.Deployments {
		d := &r.Deployments[di]
		d.Verdict = NoMemory
		fastest, screened := -1, -1
		for _, i := range d.Points {
			p := &r.Points[i]
			switch p.Verdict {
			case NoMemory:
				continue
			case OnFront, Dominated:
				if d.Best < 0 || p.PerGPU > r.Points[d.Best].PerGPU {
					d.Best = i
				}
			case Screened:
				if screened < 0 || p.PerGPU > r.Points[screened].PerGPU {
					screened = i
				}
			}
			if fastest < 0 || p.Metrics.PerUser > r.Points[fastest].Metrics.PerUser {
				fastest = i
			}
		}
		d.Fastest = fastest
		switch {
		case d.Best >= 0:
			d.Verdict, d.DominatedBy = r.Points[d.Best].Verdict, r.Points[d.Best].DominatedBy
			for _, i := range d.Points {
				if r.Points[i].Verdict == OnFront {
					d.Verdict, d.DominatedBy = OnFront, -1
					break
				}
			}
		case screened >= 0:
			d.Verdict, d.DominatedBy = Screened, r.Points[screened].DominatedBy
		case fastest >= 0:
			d.Verdict, d.Fails = FailsSLO, r.Points[fastest].Fails
		}
	}
}

// best picks the recommended point (see the package doc): without a target
// the front's first (highest tokens/s per GPU); with one, among all points
// meeting the SLOs, the one needing the fewest GPUs in total (ties: higher
// tokens/s per GPU, then per user, then the earlier point), since whole
// replicas can make a smaller, dominated deployment the cheaper one.
func (r *Result) best(s *Space, t Target) {
	if len(r.Front) == 0 {
		return
	}
	want := t.OutputTokensPerSecond
	if t.RequestRate > 0 {
		want = t.RequestRate * float64(s.Workload.Output)
	}
	need := func(i int) Best {
		p := &r.Points[i]
		b := Best{Point: i, Replicas: 1, TargetOutputTokensPerSecond: want}
		if want > 0 {
			// Counts in int (64 bits), never capped: a target that needs
			// more than MaxReplicas is refused by the caller's target check.
			b.Replicas = int(min(math.Ceil(want/p.Metrics.OutputTokensPerSecond), MaxReplicas))
		}
		b.GPUs = b.Replicas * r.Candidates[p.Candidate].GPUs()
		b.TooMany = b.Replicas >= MaxReplicas
		b.WithinMaxGPUs = s.MaxGPUs <= 0 || b.GPUs <= s.MaxGPUs
		return b
	}
	best := need(r.Front[0])
	if want > 0 {
		for i := range r.Points {
			p := &r.Points[i]
			if p.Verdict != OnFront && p.Verdict != Dominated {
				continue
			}
			b, q := need(i), &r.Points[best.Point]
			if c := cmp.Or(cmp.Compare(b.GPUs, best.GPUs), cmp.Compare(q.PerGPU, p.PerGPU),
				cmp.Compare(q.Metrics.PerUser, p.Metrics.PerUser)); c < 0 {
				best = b
			}
		}
	}
	r.Best = &best
}

func (r *Result) warn(slo SLO, priced []int) {
	if slo.TTFTP99 > 0 {
		n := 0
		for _, i := range priced {
			if !r.Points[i].Metrics.HasTTFT {
				n++
			}
		}
		if n > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("ttft-p99 not checked at %d of %d priced points: %s", n, len(priced), r.Evaluator))
		}
	}
	if len(r.Front) == 0 {
		r.Warnings = append(r.Warnings, "no deployment meets the SLOs; the nearest points are listed")
	}
}

// Reason says in one line why point i got its verdict: "front",
// "dominated by <label> at concurrency c (x tok/s/GPU, y tok/s/user)",
// "slo: tpot-p99 62.1ms > 50ms, ..." or "memory: ...".
func (r *Result) Reason(i int, slo SLO) string {
	p := &r.Points[i]
	switch p.Verdict {
	case OnFront:
		return "front"
	case Dominated:
		q := &r.Points[p.DominatedBy]
		return fmt.Sprintf("dominated by %s at concurrency %d (%.1f tok/s/GPU, %.1f tok/s/user)",
			r.Candidates[q.Candidate].Label(), q.Concurrency, q.PerGPU, q.Metrics.PerUser)
	case FailsSLO:
		var s []string
		m := &p.Metrics
		if p.Fails&FailTTFT != 0 {
			s = append(s, fmt.Sprintf("ttft-p99 %v > %v", m.TTFTP99, slo.TTFTP99))
		}
		if p.Fails&FailTPOT != 0 {
			s = append(s, fmt.Sprintf("tpot-p99 %v > %v", m.TPOTP99, slo.TPOTP99))
		}
		if p.Fails&FailPerUser != 0 {
			s = append(s, fmt.Sprintf("%.1f tok/s/user < %g", m.PerUser, slo.MinPerUser))
		}
		return "slo: " + strings.Join(s, ", ")
	case Screened:
		q := &r.Points[p.DominatedBy]
		return fmt.Sprintf("screened out: %s at concurrency %d beat it on both axes by the refine margin at the screen",
			r.Candidates[q.Candidate].Label(), q.Concurrency)
	case NoMemory:
		c := &r.Candidates[p.Candidate]
		mem := &c.Memory
		if mem.Usable <= 0 && mem.Reserve == 0 {
			// SGLang: the reserve lives outside its mem_fraction_static
			return fmt.Sprintf("memory: weights %v per GPU leave no room for a KV cache in the engine's share of memory", mem.Weights)
		}
		if mem.Usable <= 0 {
			return fmt.Sprintf("memory: weights %v + reserve %v per GPU leave no room for a KV cache", mem.Weights, mem.Reserve)
		}
		return fmt.Sprintf("memory: at most %d sequences fit (room for KV cache %v per GPU, %v per token)",
			c.MaxConcurrency, mem.Usable, mem.KVPerToken)
	}
	return p.Verdict.String()
}

// DeploymentReason says in one line how deployment di fared: "front", or
// why its best point lost (Reason), or why its fastest point misses the
// SLOs, or why its lowest concurrency does not fit.
func (r *Result) DeploymentReason(di int, slo SLO) string {
	d := &r.Deployments[di]
	switch d.Verdict {
	case OnFront:
		return "front"
	case Dominated:
		return r.Reason(d.Best, slo)
	case Screened:
		best := -1
		for _, i := range d.Points {
			if p := &r.Points[i]; p.Verdict == Screened && (best < 0 || p.PerGPU > r.Points[best].PerGPU) {
				best = i
			}
		}
		return r.Reason(best, slo)
	case FailsSLO:
		return r.Reason(d.Fastest, slo) + fmt.Sprintf(" at its fastest (concurrency %d)", r.Points[d.Fastest].Concurrency)
	}
	return r.Reason(d.Points[0], slo)
}

// Meets says whether m meets the objectives.
func (slo *SLO) Meets(m *Metrics) bool { return slo.fails(m) == 0 }
