package validate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Deployment names what a corpus row's deployment has in common with a
// user's scenario, as moecast reads both: the GPU preset, the engine, the
// model's architecture (config.json "architectures"), the checkpoint's
// weight format (the routed experts' for an MoE model, else the dense
// MLP's, as moecast names it: "fp8-b128", "nvfp4", "int4-g32", "bf16", ...)
// and the mode ("agg" or "disagg").
type Deployment struct {
	GPU, Engine, Arch, Weights, Mode string
}

// String is the deployment as "b200-sxm / vllm / MiniMaxM2ForCausalLM /
// fp8-b128 / agg", the fields a level does not key by left out.
func (d Deployment) String() string {
	var parts []string
	for _, s := range []string{d.GPU, d.Engine, d.Arch, d.Weights, d.Mode} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " / ")
}

// Accuracy levels, most specific first: a user's scenario is matched to
// the first level with at least AccuracyMinRows scored rows.
const (
	LevelDeployment = "deployment" // GPU, engine, architecture, weights, mode
	LevelModel      = "model"      // GPU, engine, architecture, mode
	LevelGPU        = "gpu"        // GPU, engine, mode
	LevelEngine     = "engine"     // engine, mode
)

var accuracyLevels = []string{LevelDeployment, LevelModel, LevelGPU, LevelEngine}

// CustomGPU is the GPU of a deployment on a custom GPU (no preset): such
// rows and scenarios are matched at the engine level only, since two
// custom GPUs need not have anything in common.
const CustomGPU = "custom"

// keyed says level keys deployments on d's GPU: every level but the
// engine's, unless the GPU is custom.
func keyed(level string, d Deployment) bool {
	return level == LevelEngine || d.GPU != CustomGPU
}

// AccuracyMinRows is the fewest scored rows a level needs to stand for a
// scenario: below it a MAPE is one or two rows' errors, and the next,
// broader level answers.
const AccuracyMinRows = 5

// AccuracyGroup is moecast's measured error over the scored rows of one
// deployment key at one level: counts, MAPE and mean signed error (bias:
// > 0 predicts slower than measured) of TPOT and TTFT, in percent.
type AccuracyGroup struct {
	Level string     `json:"level"`
	Key   Deployment `json:"key"`
	N     int        `json:"n"`
	NTPOT int        `json:"n_tpot"`
	NTTFT int        `json:"n_ttft"`
	// The errors are nil where no row holds the metric.
	TPOTMAPE *float64 `json:"tpot_mape"`
	TPOTBias *float64 `json:"tpot_bias"`
	TTFTMAPE *float64 `json:"ttft_mape"`
	TTFTBias *float64 `json:"ttft_bias"`
}

// MarshalJSON writes Deployment's fields in lower case.
func (d Deployment) MarshalJSON() ([]byte, error) {
	return json.Marshal(deploymentJSON(d))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Deployment) UnmarshalJSON(b []byte) error {
	var j deploymentJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = Deployment(j)
	return nil
}

type deploymentJSON struct {
	GPU     string `json:"gpu,omitempty"`
	Engine  string `json:"engine,omitempty"`
	Arch    string `json:"architecture,omitempty"`
	Weights string `json:"weights,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

// AccuracyTable is the accuracy summary of a scored corpus that simulate
// quotes for a scenario: every group of every level with a scored row.
type AccuracyTable struct {
	// Corpus says which corpus and how it was scored.
	Corpus string          `json:"corpus"`
	Rows   int             `json:"rows_scored"`
	Groups []AccuracyGroup `json:"groups"`
}

// levelKey is d as level keys it.
func levelKey(level string, d Deployment) Deployment {
	switch level {
	case LevelModel:
		d.Weights = ""
	case LevelGPU:
		d.Arch, d.Weights = "", ""
	case LevelEngine:
		d.GPU, d.Arch, d.Weights = "", "", ""
	}
	return d
}

// Accuracy groups the scored rows that name their deployment (Deployment
// set) at every level, sorted by level and key.
func Accuracy(corpus string, rows []CorpusRow) *AccuracyTable {
	t := &AccuracyTable{Corpus: corpus, Groups: []AccuracyGroup{}}
	groups := map[string]map[Deployment][]*CorpusRow{}
	for _, l := range accuracyLevels {
		groups[l] = map[Deployment][]*CorpusRow{}
	}
	for i := range rows {
		r := &rows[i]
		if !r.Scored() || r.Deployment == (Deployment{}) {
			continue
		}
		t.Rows++
		for _, l := range accuracyLevels {
			if !keyed(l, r.Deployment) {
				continue
			}
			k := levelKey(l, r.Deployment)
			groups[l][k] = append(groups[l][k], r)
		}
	}
	for _, l := range accuracyLevels {
		for k, rs := range groups[l] {
			p := partition("", rs)
			t.Groups = append(t.Groups, AccuracyGroup{Level: l, Key: k, N: p.N, NTPOT: p.NTPOT, NTTFT: p.NTTFT,
				TPOTMAPE: finite(p.TPOTMAPE), TPOTBias: finite(p.TPOTBias), TTFTMAPE: finite(p.TTFTMAPE), TTFTBias: finite(p.TTFTBias)})
		}
	}
	slices.SortFunc(t.Groups, func(a, b AccuracyGroup) int {
		return cmp.Or(slices.Index(accuracyLevels, a.Level)-slices.Index(accuracyLevels, b.Level),
			strings.Compare(a.Key.String(), b.Key.String()))
	})
	return t
}

// finite is a pointer to v rounded to 0.01, or nil when v is NaN.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*100) / 100
	return &v
}

// JSON is the table as JSON, one group a line (a readable diff when the
// scorecard moves), with a final newline.
func (t *AccuracyTable) JSON() ([]byte, error) {
	head, err := json.Marshal(struct {
		Corpus string `json:"corpus"`
		Rows   int    `json:"rows_scored"`
	}{t.Corpus, t.Rows})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	b.WriteString(`,"groups":[`)
	for i, g := range t.Groups {
		line, err := json.Marshal(g)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}

// ReadAccuracy reads a table JSON wrote; name labels errors.
func ReadAccuracy(name string, b []byte) (*AccuracyTable, error) {
	var t AccuracyTable
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	for i, g := range t.Groups {
		if !slices.Contains(accuracyLevels, g.Level) {
			return nil, fmt.Errorf("%s: groups[%d].level: %q is not one of %s", name, i, g.Level, strings.Join(accuracyLevels, ", "))
		}
		if g.N < 1 || g.NTPOT < 0 || g.NTTFT < 0 || g.NTPOT > g.N || g.NTTFT > g.N {
			return nil, fmt.Errorf("%s: groups[%d]: row counts n=%d n_tpot=%d n_ttft=%d are not 0 <= n_metric <= n, n >= 1", name, i, g.N, g.NTPOT, g.NTTFT)
		}
	}
	return &t, nil
}

// Find is the group that stands for deployment d: the most specific level
// whose group of d has at least AccuracyMinRows rows, else the largest
// group of d at any level; ok is false when no level has a row of d.
func (t *AccuracyTable) Find(d Deployment) (g AccuracyGroup, ok bool) {
	for _, l := range accuracyLevels {
		if !keyed(l, d) {
			continue
		}
		k := levelKey(l, d)
		for _, c := range t.Groups {
			if c.Level != l || c.Key != k {
				continue
			}
			if c.N >= AccuracyMinRows {
				return c, true
			}
			if !ok || c.N > g.N {
				g, ok = c, true
			}
		}
	}
	return g, ok
}
