package view

import (
	"fmt"

	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
)

// pointRows is a table of the points idx: the text view (full=false) or
// every field (full=true, for CSV and JSON).
func (pl *Planned) pointRows(idx []int, full bool) *report.Table {
	r := pl.Result
	if !full {
		t := &report.Table{Columns: []report.Column{{Name: "deployment"}, {Name: "engine"}, {Name: "conc"},
			{Name: "tok/s/GPU", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}, {Name: "TPOT p99 ms", Text: "%.2f"},
			{Name: "tok/s/replica", Text: "%.1f"}, {Name: "verdict", Left: true}}}
		for _, i := range idx {
			p := &r.Points[i]
			c := &r.Candidates[p.Candidate]
			v := p.Verdict.String()
			if r.Best != nil && r.Best.Point == i && pl.DisaggBest() == nil {
				v += " (best)"
			}
			if p.Verdict != plan.OnFront {
				v = r.Reason(i, pl.SLO)
			}
			t.Add(c.Label(), c.Engine.String(), p.Concurrency, p.PerGPU, p.Metrics.PerUser, p.Metrics.TPOTP99.Ms(),
				p.Metrics.OutputTokensPerSecond, v)
		}
		if len(idx) > 0 && len(r.Front) > 0 && &idx[0] == &r.Front[0] { // the front table: disagg's front points too
			pl.disaggFrontRows(t)
		}
		return t
	}
	t := &report.Table{Columns: []report.Column{{Name: "deployment"}, {Name: "gpu"}, {Name: "gpus"}, {Name: "tp"}, {Name: "dp"},
		{Name: "ep"}, {Name: "dp_attention"}, {Name: "kv_cache"}, {Name: "spec"}, {Name: "engine"},
		{Name: "concurrency"}, {Name: "max_concurrency"}, {Name: "output_tokens_per_s"}, {Name: "tokens_per_s_per_gpu"},
		{Name: "tokens_per_s_per_user"}, {Name: "tpot_p99_ms"}, {Name: "ttft_p99_ms"}, {Name: "verdict"},
		{Name: "best"}, {Name: "reason"}, {Name: "priced_by"}}}
	for _, i := range idx {
		p := &r.Points[i]
		c := &r.Candidates[p.Candidate]
		l := c.Config.Layout
		var ttft any
		if p.Metrics.HasTTFT {
			ttft = Round6(p.Metrics.TTFTP99.Ms())
		}
		var tput, perGPU, perUser, tpot any
		if p.Verdict != plan.NoMemory {
			tput, perGPU = Round6(p.Metrics.OutputTokensPerSecond), Round6(p.PerGPU)
			perUser, tpot = Round6(p.Metrics.PerUser), Round6(p.Metrics.TPOTP99.Ms())
		}
		t.Add(c.Label(), c.Config.GPU.Name, c.GPUs(), l.TP, l.DP, l.EP, l.DPAttention, c.Config.KVCache.String(),
			specLabel(c), c.Engine.String(), p.Concurrency, c.MaxConcurrency, tput, perGPU, perUser, tpot, ttft,
			p.Verdict.String(), r.Best != nil && r.Best.Point == i, r.Reason(i, pl.SLO), pricedBy(p))
	}
	return t
}

// pricedBy names the pricing of a point's figures.
func pricedBy(p *plan.Point) string {
	if p.Refined {
		return "serving simulation"
	}
	return "screen"
}

func specLabel(c *plan.Candidate) string {
	if !c.Config.Spec.Active() {
		return "none"
	}
	return specName(c.Config.Spec.Method)
}

// PointsTable is every point of the search (the CSV output).
func (pl *Planned) PointsTable() *report.Table {
	idx := make([]int, len(pl.Result.Points))
	for i := range idx {
		idx[i] = i
	}
	return pl.pointRows(idx, true)
}

// CSVTable is the CSV output: every point, then the xPyD points when
// disaggregation was priced.
func (pl *Planned) CSVTable() *report.Table {
	t := pl.PointsTable()
	if pl.Plan.Disagg {
		pl.disaggCSVRows(t)
	}
	return t
}

// deploymentsTable has one row per candidate: its best point under the
// SLOs and how it fared; the text view (full=false) leaves out those that
// do not fit in memory at all (memoryLine counts them).
func (pl *Planned) deploymentsTable(full bool) *report.Table {
	r := pl.Result
	t := &report.Table{Columns: []report.Column{{Name: "deployment"}, {Name: "engine"}, {Name: "max conc"}, {Name: "best conc"},
		{Name: "tok/s/GPU", Text: "%.1f"}, {Name: "tok/s/user", Text: "%.1f"}, {Name: "verdict", Left: true}, {Name: "why", Left: true}}}
	if full {
		t.Columns = []report.Column{{Name: "deployment"}, {Name: "engine"}, {Name: "max_concurrency"}, {Name: "best_concurrency"},
			{Name: "tokens_per_s_per_gpu"}, {Name: "tokens_per_s_per_user"}, {Name: "verdict"}, {Name: "reason"}}
	}
	for di := range r.Deployments {
		d := &r.Deployments[di]
		c := &r.Candidates[d.Candidate]
		if !full && d.Verdict == plan.NoMemory {
			continue // counted in the line under the text table
		}
		var conc, perGPU, perUser any
		if d.Best >= 0 {
			p := &r.Points[d.Best]
			conc, perGPU, perUser = p.Concurrency, p.PerGPU, p.Metrics.PerUser
			if full {
				perGPU, perUser = Round6(p.PerGPU), Round6(p.Metrics.PerUser)
			}
		}
		t.Add(c.Label(), c.Engine.String(), c.MaxConcurrency, conc, perGPU, perUser, d.Verdict.String(), r.DeploymentReason(di, pl.SLO))
	}
	return t
}

// planPointJSON is one point in `plan --format json`.
type planPointJSON struct {
	Deployment        string   `json:"deployment"`
	GPU               string   `json:"gpu"`
	GPUs              int      `json:"gpus"`
	TP                int      `json:"tp"`
	DP                int      `json:"dp"`
	EP                int      `json:"ep"`
	DPAttention       bool     `json:"dp_attention"`
	KVCache           string   `json:"kv_cache"`
	Spec              string   `json:"spec"`
	Engine            string   `json:"engine"`
	Concurrency       int      `json:"concurrency"`
	OutputTokensPerS  float64  `json:"output_tokens_per_s"`
	TokensPerSPerGPU  float64  `json:"tokens_per_s_per_gpu"`
	TokensPerSPerUser float64  `json:"tokens_per_s_per_user"`
	TPOTP99Ms         float64  `json:"tpot_p99_ms"`
	TTFTP99Ms         *float64 `json:"ttft_p99_ms"` // null when the evaluator has no TTFT
	Verdict           string   `json:"verdict"`
	Reason            string   `json:"reason"`
	// PricedBy is "screen" or "serving simulation": the figures of a
	// search that refines come from either.
	PricedBy string `json:"priced_by"`
}

type planBestJSON struct {
	planPointJSON
	Replicas int `json:"replicas"`
	// TotalGPUs is replicas x GPUs per replica.
	TotalGPUs              int     `json:"total_gpus"`
	TargetOutputTokensPerS float64 `json:"target_output_tokens_per_s"`
	WithinMaxGPUs          bool    `json:"within_max_gpus"`
}

type planDeploymentJSON struct {
	Deployment     string         `json:"deployment"`
	Engine         string         `json:"engine"`
	MaxConcurrency int            `json:"max_concurrency"`
	Best           *planPointJSON `json:"best"` // null when no point meets the SLOs
	Verdict        string         `json:"verdict"`
	Reason         string         `json:"reason"`
}

type PlanJSON struct {
	Scenario     string               `json:"scenario"`
	Calibration  []string             `json:"calibration"`
	InputTokens  int                  `json:"input_tokens"`
	OutputTokens int                  `json:"output_tokens"`
	GPUs         []string             `json:"gpus"`
	MaxGPUs      int                  `json:"max_gpus"` // 0: the node size, no cap on the total
	SLO          PlanSLOJSON          `json:"slo"`
	Evaluator    string               `json:"evaluator"`
	Front        []planPointJSON      `json:"front"`
	Best         *planBestJSON        `json:"best"` // null when no point meets the SLOs
	Nearest      []planPointJSON      `json:"nearest"`
	Deployments  []planDeploymentJSON `json:"deployments"`
	Rejected     []reasonJSON         `json:"rejected"`
	Warnings     []string             `json:"warnings"`
	// Disagg is the disaggregated points and verdict; only with
	// [plan] disagg = true.
	Disagg *planDisaggSectionJSON `json:"disagg,omitempty"`
	// BestDisagg is the xPyD point when it, not Best, is the best
	// deployment over agg and disagg (view.Planned.DisaggBest); absent
	// otherwise.
	BestDisagg *planDisaggJSON `json:"best_disagg,omitempty"`
}

type PlanSLOJSON struct {
	TTFTP99Ms              float64 `json:"ttft_p99_ms"` // 0: not checked
	TPOTP99Ms              float64 `json:"tpot_p99_ms"`
	MinTokensPerSPerUser   float64 `json:"min_tokens_per_s_per_user"`
	TargetOutputTokensPerS float64 `json:"target_output_tokens_per_s"`
	TargetRequestRate      float64 `json:"target_request_rate"`
}

type reasonJSON struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

func (pl *Planned) pointJSON(i int) planPointJSON {
	r := pl.Result
	p := &r.Points[i]
	c := &r.Candidates[p.Candidate]
	l := c.Config.Layout
	out := planPointJSON{Deployment: c.Label(), GPU: c.Config.GPU.Name, GPUs: c.GPUs(), TP: l.TP, DP: l.DP, EP: l.EP,
		DPAttention: l.DPAttention, KVCache: c.Config.KVCache.String(), Spec: specLabel(c), Engine: c.Engine.String(),
		Concurrency: p.Concurrency, OutputTokensPerS: Round6(p.Metrics.OutputTokensPerSecond), TokensPerSPerGPU: Round6(p.PerGPU),
		TokensPerSPerUser: Round6(p.Metrics.PerUser), TPOTP99Ms: Round6(p.Metrics.TPOTP99.Ms()),
		Verdict: p.Verdict.String(), Reason: r.Reason(i, pl.SLO), PricedBy: pricedBy(p)}
	if p.Metrics.HasTTFT {
		v := Round6(p.Metrics.TTFTP99.Ms())
		out.TTFTP99Ms = &v
	}
	return out
}

func (pl *Planned) JSON() PlanJSON {
	r := pl.Result
	p := &pl.Plan
	out := PlanJSON{Scenario: pl.Scenario.Name, Calibration: []string{}, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens,
		GPUs: pl.gpuNames(), MaxGPUs: p.MaxGPUs, Evaluator: r.Evaluator,
		SLO: PlanSLOJSON{TTFTP99Ms: Round6(p.TTFTP99.Ms()), TPOTP99Ms: Round6(p.TPOTP99.Ms()), MinTokensPerSPerUser: p.MinTokensPerSPerUser,
			TargetOutputTokensPerS: p.TargetOutputTokensPerS, TargetRequestRate: p.TargetRequestRate},
		Front: []planPointJSON{}, Nearest: []planPointJSON{}, Deployments: []planDeploymentJSON{},
		Rejected: []reasonJSON{}, Warnings: append([]string{}, pl.Warnings...)}
	for _, u := range pl.Scenario.CalibrationUses {
		out.Calibration = append(out.Calibration, u.Name)
	}
	for _, i := range r.Front {
		out.Front = append(out.Front, pl.pointJSON(i))
	}
	for _, i := range r.Nearest {
		out.Nearest = append(out.Nearest, pl.pointJSON(i))
	}
	if b := r.Best; b != nil {
		out.Best = &planBestJSON{planPointJSON: pl.pointJSON(b.Point), Replicas: b.Replicas, TotalGPUs: b.GPUs,
			TargetOutputTokensPerS: b.TargetOutputTokensPerSecond, WithinMaxGPUs: b.WithinMaxGPUs}
	}
	for di := range r.Deployments {
		d := &r.Deployments[di]
		c := &r.Candidates[d.Candidate]
		dj := planDeploymentJSON{Deployment: c.Label(), Engine: c.Engine.String(), MaxConcurrency: c.MaxConcurrency,
			Verdict: d.Verdict.String(), Reason: r.DeploymentReason(di, pl.SLO)}
		if d.Best >= 0 {
			b := pl.pointJSON(d.Best)
			dj.Best = &b
		}
		out.Deployments = append(out.Deployments, dj)
	}
	for _, rc := range plan.RejectionReasons(r.Rejected) {
		out.Rejected = append(out.Rejected, reasonJSON{Reason: rc.Reason, Count: rc.Count})
	}
	if pl.Plan.Disagg {
		out.Disagg = pl.disaggJSON()
		if d := pl.DisaggBest(); d != nil {
			j := pl.disaggPointJSON(d)
			out.BestDisagg = &j
		}
	}
	return out
}

// memoryLine counts the deployments that fit no sequence, or "".
func (pl *Planned) memoryLine() string {
	r := pl.Result
	n, first := 0, -1
	for di := range r.Deployments {
		if r.Deployments[di].Verdict == plan.NoMemory {
			if first < 0 {
				first = di
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d more deployments hold no sequence of %d tokens in memory (e.g. %s: %s)", n,
		pl.Plan.InputTokens+pl.Plan.OutputTokens, r.Candidates[r.Deployments[first].Candidate].Label(), r.DeploymentReason(first, pl.SLO))
}
