package view

import (
	"fmt"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

// DeploymentOf is scenario sc's deployment as the corpus's accuracy
// summary keys it (validate.Deployment): the GPU preset (validate.CustomGPU
// for a GPU of the scenario's own), the engine, the model's architecture,
// the weight format of its routed experts (MoE) or dense MLP, and the mode.
func DeploymentOf(sc *scenarios.Scenario) validate.Deployment {
	m := sc.Config.Model
	d := validate.Deployment{GPU: sc.Config.GPU.Name, Engine: sc.Serving.Engine.String(), Arch: m.Architecture, Mode: "agg"}
	if d.GPU == "" {
		d.GPU = validate.CustomGPU
	}
	if m.MoE.Experts > 0 {
		d.Weights = m.Quant.RoutedExperts.Name
	} else {
		d.Weights = m.Quant.DenseMLP.Name
	}
	if sc.Disagg != nil {
		d.Mode = "disagg"
	}
	return d
}

// Accuracy is what moecast's corpus says of its own error on deployments
// like the scenario's: the group that stands for it (validate.AccuracyTable
// Find) and the scenario's own deployment. Nil: not looked up.
type Accuracy struct {
	Deployment validate.Deployment
	Group      validate.AccuracyGroup
	Found      bool
}

// levelWords says what a level's group holds, for the text line.
var levelWords = map[string]string{
	validate.LevelDeployment: "this GPU, engine, architecture and weights",
	validate.LevelModel:      "this GPU, engine and architecture (other weights)",
	validate.LevelGPU:        "this GPU and engine (other models)",
	validate.LevelEngine:     "this engine (other GPUs and models)",
}

// Line is the "accuracy" header line of simulate's text report.
func (a *Accuracy) Line() string {
	if !a.Found {
		return fmt.Sprintf("accuracy  no measured rows like %s in the shipped corpus: no measured error to quote (docs/ACCURACY.md)", a.Deployment)
	}
	g := a.Group
	pct := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", *v)
	}
	bias := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", *v)
	}
	return fmt.Sprintf("accuracy  %d measured rows of %s (%s): TPOT MAPE %s (bias %s), TTFT MAPE %s (bias %s); bias < 0: predicted faster (docs/ACCURACY.md)",
		g.N, levelWords[g.Level], g.Key, pct(g.TPOTMAPE), bias(g.TPOTBias), pct(g.TTFTMAPE), bias(g.TTFTBias))
}

// accuracyJSON is the "accuracy" object of simulate's JSON report.
type accuracyJSON struct {
	Deployment validate.Deployment     `json:"deployment"`
	Group      *validate.AccuracyGroup `json:"corpus_group"`
	Source     string                  `json:"source"`
}

func (a *Accuracy) json() *accuracyJSON {
	if a == nil {
		return nil
	}
	j := &accuracyJSON{Deployment: a.Deployment, Source: "the shipped corpus's scorecard (docs/ACCURACY.md, validate/corpus/accuracy.json)"}
	if a.Found {
		g := a.Group
		j.Group = &g
	}
	return j
}
