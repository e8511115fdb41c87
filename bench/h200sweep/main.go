// Command h200sweep checks that moecast can express, serve and sanely
// price on H200 the deployments of the shipped corpus and the model
// configs of ../shared/data/model_configs, the way `validate corpus`
// runs them (bench/RESULTS-h200sweep.md).
//
// Corpus part: every shipped entry with a scenario (aiconfigurator/,
// inferencex/) is rewritten onto hardware.gpu = "h200-sxm" (GPUs and
// layout kept; an NVLink5 transfer becomes NVLink4; settings that exist
// only on Blackwell are dropped: runtime.mxfp4_activation "mxfp8",
// runtime.nsa_prefill_backend "trtllm") and onto "b200-sxm" as the
// reference (NVL72 transfer as NVLink5), each with synthetic
// aiconfigurator rows at 1k/1k and 8k/1k and C = 1, 4, 64, 256 (fixed
// lengths, 10 x C requests; measured figures are placeholders that no
// exclusion rule touches). Both corpora run through `moecast validate
// corpus DIR --format json`; each H200 row is then classed: skipped by
// reason (cannot express, cannot serve, ...), non-finite or zero
// prediction, TPOT below the B200 reference's, TTFT or TPOT above 4 x
// the reference's at C=4, TTFT at C=4 below its own single-prompt prefill
// step (priced in process), or a prediction below the row's physical
// lower bound (validate.LowerBound).
//
// Configs part: every config x {vllm, sglang} x {TP8, TP8 EP8, and for
// SGLang TP1 DP8 DP-attention EP8} on 8x h200-sxm, one row at 1k/1k C=64;
// the skip reasons are listed (a layout the model refuses, or one it
// does not fit, is counted apart from an error).
//
// Usage:
//
//	go build -o /tmp/moecast ./cmd/moecast
//	go run ./bench/h200sweep -bin /tmp/moecast -work /tmp/h200sweep \
//	    -configs ../shared/data/model_configs > /tmp/h200sweep.txt
package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
	"github.com/moecast/moecast/validate"
	"github.com/moecast/moecast/validate/corpus"
)

// variant is one GPU the corpus is rewritten onto.
type variant struct {
	name   string // directory and label
	gpu    string // hardware.gpu preset
	system string // the rows' aiconfigurator system column
	hopper bool   // drop the Blackwell-only settings
}

var (
	h200 = variant{name: "h200", gpu: "h200-sxm", system: "h200_sxm", hopper: true}
	b200 = variant{name: "b200", gpu: "b200-sxm", system: "b200_sxm"}
	h100 = variant{name: "h100", gpu: "h100-sxm", system: "h100_sxm", hopper: true}
)

// listRows is how many rows each class lists (-list).
var listRows = 12

// The sweep's request shapes and concurrencies.
var (
	isls  = []int{1024, 8192}
	osl   = 1024
	concs = []int{1, 4, 64, 256}
)

func main() {
	bin := flag.String("bin", "", "moecast binary (required)")
	work := flag.String("work", "", "work directory (default: a temporary one)")
	configs := flag.String("configs", "", "directory of model configs (*_config.json) for the configs part and the gen part; empty: skip them")
	serving := flag.String("serving", "", "serving data directory (../shared/data/serving) for the gen part (needs -configs); empty: skip it")
	repo := flag.String("repo", ".", "the moecast repository (the gen part runs go run ./validate/corpus/gen there)")
	skipCorpus := flag.Bool("no-corpus", false, "skip the corpus part")
	nvfp4 := flag.Bool("nvfp4", false, "also run the nvfp4 entries on H200 (vLLM and SGLang do not serve ModelOpt NVFP4 MoE checkpoints on Hopper the way they do on Blackwell; off: skipped with that reason)")
	only := flag.String("only", "", "regexp: only corpus entries whose name matches")
	flag.IntVar(&listRows, "list", 12, "rows listed per class (0: all)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "h200sweep: -bin: give the moecast binary")
		os.Exit(2)
	}
	if *work == "" {
		d, err := os.MkdirTemp("", "h200sweep")
		check(err)
		*work = d
	}
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintln(os.Stderr, "h200sweep: -only:", err)
		os.Exit(2)
	}
	if !*skipCorpus {
		check(corpusSweep(os.Stdout, *bin, *work, re, *nvfp4))
	}
	if *configs != "" {
		check(configSweep(os.Stdout, *bin, filepath.Join(*work, "configs"), *configs))
	}
	if *serving != "" && *configs != "" {
		check(genSweep(os.Stdout, *bin, *repo, *work, *serving, *configs))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "h200sweep:", err)
		os.Exit(1)
	}
}

// entryPlan is one corpus entry as swept: the rewritten scenario text
// per variant, or why it is not swept.
type entryPlan struct {
	e       scenarios.ManifestEntry
	skip    string
	dropped []string // H200: the settings dropped
	header  []string
	row     []string // the template row
}

func corpusSweep(w io.Writer, bin, work string, only *regexp.Regexp, nvfp4 bool) error {
	m, err := scenarios.ReadManifest(corpus.FS, corpus.Manifest)
	if err != nil {
		return err
	}
	var plans []*entryPlan
	for _, e := range m.Entries {
		if e.Scenario == "" || e.Source == "llmservingsim" || !only.MatchString(e.Name) {
			continue
		}
		p := &entryPlan{e: e}
		if e.Engine == "trtllm" {
			p.skip = "TRT-LLM: an engine moecast does not model (not swept)"
		} else if !nvfp4 && nvfp4Experts(m, e) {
			p.skip = "NVFP4 checkpoint: no FP4 tensor cores on Hopper (vLLM falls back to Marlin W4A16; moecast has no Hopper NVFP4 path and prices it with its generic fp4 figures; not swept)"
		}
		if p.header, p.row, err = templateRow(m, e); err != nil {
			return err
		}
		plans = append(plans, p)
	}
	res := map[string]map[rowKey]corpusRow{}
	for _, v := range []variant{h200, b200, h100} {
		dir := filepath.Join(work, v.name)
		if err := writeCorpus(dir, m, plans, v); err != nil {
			return err
		}
		rows, err := runCorpus(bin, dir)
		if err != nil {
			return err
		}
		res[v.name] = rows
	}
	return classify(w, filepath.Join(work, h200.name), plans, res[h200.name], res[b200.name], res[h100.name])
}

// nvfp4Experts reports whether the entry's model holds NVFP4 weights
// (its routed experts, or its dense MLP): a checkpoint named nvfp4 may be
// gpt-oss's own MXFP4, which Hopper serves.
func nvfp4Experts(m *scenarios.Manifest, e scenarios.ManifestEntry) bool {
	sc, err := m.Scenario(e)
	if err != nil || sc.Config.Model == nil {
		return strings.Contains(strings.ToLower(e.Checkpoint), "nvfp4")
	}
	q := sc.Config.Model.Quant
	return strings.Contains(q.RoutedExperts.Name, "nvfp4") || strings.Contains(q.DenseMLP.Name, "nvfp4")
}

// templateRow is the header and first row of the entry's aiconfigurator
// results, or one made from the scenario for another format.
func templateRow(m *scenarios.Manifest, e scenarios.ManifestEntry) ([]string, []string, error) {
	if e.Format == "aiconfigurator" {
		data, err := fs.ReadFile(m.FS, m.Path(e.Results[0]))
		if err != nil {
			return nil, nil, err
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(recs) < 2 {
			return nil, nil, fmt.Errorf("%s: want a header and a row (%v)", e.Results[0], err)
		}
		return recs[0], recs[1], nil
	}
	sc, err := m.Scenario(e)
	if err != nil {
		return nil, nil, err
	}
	l := sc.Config.Layout
	dp := 1
	if l.DPAttention {
		dp = l.DP
	}
	h := []string{"id", "silicon_data_source", "backend", "backend_version", "model_path", "system", "precision", "mode",
		"isl", "osl", "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"}
	r := []string{"", "", e.Engine, sc.Serving.EngineVersion, e.Model, "", e.Checkpoint, "agg",
		"", "", "", fmt.Sprint(l.TP), "1", fmt.Sprint(dp), "1", fmt.Sprint(max(l.EP, 1)), "", ""}
	return h, r, nil
}

// rewrite puts the scenario on v: hardware.gpu, the disaggregated
// transfer's fabric, and (Hopper) without the Blackwell-only settings.
func rewrite(text string, v variant) (string, []string) {
	var out, dropped []string
	for _, line := range strings.Split(text, "\n") {
		k, val, ok := strings.Cut(line, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		switch {
		case !ok || strings.HasPrefix(k, "#"):
		case k == "gpu":
			line = fmt.Sprintf("gpu = %q", v.gpu)
		case k == "transfer" && v.hopper:
			line = `transfer = "nvlink4"`
		case k == "transfer" && val == `"nvlink5-nvl72"`:
			line = `transfer = "nvlink5"`
		case v.hopper && k == "mxfp4_activation" && val == `"mxfp8"`,
			v.hopper && k == "nsa_prefill_backend" && val == `"trtllm"`:
			dropped = append(dropped, k+" = "+val)
			continue
		case k == "name":
			line = fmt.Sprintf("name = %q", strings.Trim(val, `"`)+" [h200sweep: "+v.gpu+"]")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), dropped
}

// rowKey is one swept point of an entry.
type rowKey struct {
	entry   string
	isl, cc int
}

// writeCorpus writes the variant's corpus: manifest, configs, scenarios
// and one results CSV per entry.
func writeCorpus(dir string, m *scenarios.Manifest, plans []*entryPlan, v variant) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	err := fs.WalkDir(corpus.FS, "configs", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(corpus.FS, p)
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dir, p), data)
	})
	if err != nil {
		return err
	}
	var man bytes.Buffer
	man.WriteString("[[source]]\nname = \"h200sweep\"\norigin = \"bench/h200sweep\"\nlicense = \"n/a\"\nmapping = \"synthetic rows\"\n")
	for k, p := range plans {
		if p.skip != "" {
			continue
		}
		data, err := fs.ReadFile(corpus.FS, m.Path(p.e.Scenario))
		if err != nil {
			return err
		}
		text, dropped := rewrite(string(data), v)
		if v.hopper {
			p.dropped = dropped
		}
		if err := writeFile(filepath.Join(dir, p.e.Scenario), []byte(text)); err != nil {
			return err
		}
		res := fmt.Sprintf("results/%d.csv", k)
		if err := writeFile(filepath.Join(dir, res), rowsCSV(p, v, k)); err != nil {
			return err
		}
		fmt.Fprintf(&man, "\n[[entry]]\nname = %q\nsource = \"h200sweep\"\nscenario = %q\nresults = [%q]\nformat = \"aiconfigurator\"\ngpu = %q\nmodel = %q\nengine = %q\ncheckpoint = %q\n",
			p.e.Name, p.e.Scenario, res, v.system, p.e.Model, p.e.Engine, p.e.Checkpoint)
	}
	return writeFile(filepath.Join(dir, "manifest.toml"), man.Bytes())
}

// rowsCSV is the entry's synthetic rows on v: the template with the
// sweep's shape, concurrency and system, and distinct placeholder
// figures far above any prediction (no duplicate, slip or bound rule
// fires on them).
func rowsCSV(p *entryPlan, v variant, k int) []byte {
	col := map[string]int{}
	for i, h := range p.header {
		col[h] = i
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	_ = cw.Write(p.header)
	n := k * len(isls) * len(concs) // distinct over the corpus: no duplicate rule fires
	for _, isl := range isls {
		for _, c := range concs {
			r := append([]string(nil), p.row...)
			set := func(k, v string) {
				if i, ok := col[k]; ok {
					r[i] = v
				}
			}
			dp := 1
			if i, ok := col["attention_dp_size"]; ok {
				fmt.Sscan(r[i], &dp)
			}
			src := fmt.Sprintf("silicon_concurrency=%d", c)
			if i, ok := col["silicon_data_source"]; ok {
				// keep a gap-analysis source: it sets vLLM's token budget
				for _, part := range strings.Split(r[i], ";") {
					if strings.Contains(part, "/aic-auto-gap-analysis/") {
						src = strings.TrimSpace(part) + "; " + src
					}
				}
			}
			set("id", fmt.Sprintf("h200sweep_%d_%s_%dx%d_c%d", k, v.name, isl, osl, c))
			set("silicon_data_source", src)
			set("system", v.system)
			set("isl", fmt.Sprint(isl))
			set("osl", fmt.Sprint(osl))
			set("batch_size", fmt.Sprint(max(1, c/max(dp, 1))))
			set("silicon_ttft_ms", fmt.Sprint(1e6+float64(n)))
			set("silicon_tpot_ms", fmt.Sprint(1e5+float64(n)))
			_ = cw.Write(r)
			n++
		}
	}
	cw.Flush()
	return b.Bytes()
}

func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// corpusRow is the part of a `validate corpus --format json` row read.
type corpusRow struct {
	Entry       string  `json:"entry"`
	Concurrency int     `json:"concurrency"`
	InputTokens float64 `json:"input_tokens"` // a mean for a request log
	Skip        string  `json:"skip"`
	Predicted   map[string]struct {
		Mean *float64 `json:"mean"`
	} `json:"predicted"`
}

func (r corpusRow) mean(m string) float64 {
	if p := r.Predicted[m].Mean; p != nil {
		return *p
	}
	return math.NaN()
}

func runCorpus(bin, dir string) (map[rowKey]corpusRow, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, "validate", "corpus", dir, "--format", "json")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("validate corpus %s: %v: %s", dir, err, errb.String())
	}
	var res struct {
		Rows []corpusRow `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, err
	}
	rows := map[rowKey]corpusRow{}
	for _, r := range res.Rows {
		rows[rowKey{r.Entry, int(r.InputTokens), r.Concurrency}] = r
	}
	return rows, nil
}

// finding is one flagged H200 row.
type finding struct {
	class, entry, detail string
}

// classify flags the H200 rows and writes the summary.
func classify(w io.Writer, dir string, plans []*entryPlan, hr, br, lr map[rowKey]corpusRow) error {
	hm, err := scenarios.ReadManifest(os.DirFS(dir), "manifest.toml")
	if err != nil {
		return err
	}
	byName := map[string]scenarios.ManifestEntry{}
	for _, e := range hm.Entries {
		byName[e.Name] = e
	}
	var fs []finding
	add := func(class, entry, format string, args ...any) {
		fs = append(fs, finding{class, entry, fmt.Sprintf(format, args...)})
	}
	rows, ok := 0, 0
	for _, p := range plans {
		name := p.e.Name
		if p.skip != "" {
			add("not swept: "+p.skip, name, "")
			continue
		}
		var floor *prefillFloor
		for _, isl := range isls {
			for _, c := range concs {
				rows++
				k := rowKey{name, isl, c}
				h, okH := hr[k]
				b := br[k]
				at := fmt.Sprintf("%d/%d C=%d", isl, osl, c)
				switch {
				case !okH:
					add("row missing from the output", name, "%s", at)
					continue
				case h.Skip != "":
					add("skipped: "+reasonClass(h.Skip), name, "%s: %s", at, h.Skip)
					continue
				}
				ttft, tpot := h.mean("ttft"), h.mean("tpot")
				bttft, btpot := b.mean("ttft"), b.mean("tpot")
				bad := false
				for _, x := range []float64{ttft, tpot} {
					if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
						add("non-finite or zero prediction", name, "%s: ttft %v tpot %v", at, ttft, tpot)
						bad = true
						break
					}
				}
				if bad {
					continue
				}
				if b.Skip == "" && btpot > 0 && tpot < btpot {
					add("H200 TPOT below B200's"+belowWhy(p, ttft, bttft), name, "%s: %.2f ms < %.2f ms (x%.2f); ttft %.0f vs %.0f ms", at, tpot, btpot, tpot/btpot, ttft, bttft)
					bad = true
				}
				if l, okL := lr[k]; okL && l.Skip == "" {
					lttft, ltpot := l.mean("ttft"), l.mean("tpot")
					// H100's smaller KV cache runs fewer sequences at once
					// (its TTFT far above): a lower TPOT there is not a
					// faster GPU
					kvBound := lttft > 2*ttft
					if (tpot > 1.02*ltpot && !kvBound) || (c == 1 && ttft > 1.02*lttft) {
						add("H200 slower than H100 (same sm_90, more bandwidth)", name, "%s: ttft %.1f vs %.1f ms, tpot %.2f vs %.2f ms", at, ttft, lttft, tpot, ltpot)
						bad = true
					}
				}
				if c == 4 && b.Skip == "" && btpot > 0 && (tpot > 4*btpot || ttft > 4*bttft) {
					add("H200 > 4x B200 at C=4", name, "%s: ttft %.1f vs %.1f ms, tpot %.2f vs %.2f ms", at, ttft, bttft, tpot, btpot)
					bad = true
				}
				if c == 4 {
					if floor == nil {
						floor = newPrefillFloor(hm, byName[name])
					}
					if f, err := floor.at(isl); err != nil {
						add("prefill floor not priced", name, "%s: %v", at, err)
						bad = true
					} else if ttft < 0.999*f {
						add("TTFT at C=4 below its own prefill step", name, "%s: ttft %.1f ms < prefill %.1f ms", at, ttft, f)
						bad = true
					}
				}
				if why := floor.belowBound(hm, byName[name], isl, c, ttft, tpot); why != "" {
					add("prediction below the physical bound", name, "%s: %s", at, why)
					bad = true
				}
				if !bad {
					ok++
				}
			}
		}
	}
	return report(w, plans, fs, rows, ok)
}

// belowWhy names the likely cause of an H200 TPOT below B200's: the
// H200 running fewer sequences at once (its TTFT far above B200's: the
// smaller KV cache queues requests), else the op costs (the checkpoint
// named: block-fp8 GEMMs are priced from the perf database's measured
// SM90 and SM100 kernels, kernels.QuantGEMMSM90/SM100).
func belowWhy(p *entryPlan, ttft, bttft float64) string {
	if ttft > 2*bttft {
		return " (H200 TTFT > 2x B200's: KV-capacity bound, fewer sequences decode at once)"
	}
	return " (op costs, checkpoint " + p.e.Checkpoint + ")"
}

// reasonClass is a skip reason without its figures: rows of one cause
// collapse into one class.
func reasonClass(s string) string {
	s = regexp.MustCompile(`[0-9][0-9.,]*`).ReplaceAllString(s, "N")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// prefillFloor prices one prompt's prefill alone on the entry's prefill
// simulator (the prefill pool's when disaggregated): one chunk of the
// whole prompt at an empty cache.
type prefillFloor struct {
	sc   *scenarios.Scenario
	psm  *sim.Sim
	err  error
	memo map[int]float64
}

func newPrefillFloor(m *scenarios.Manifest, e scenarios.ManifestEntry) *prefillFloor {
	f := &prefillFloor{memo: map[int]float64{}}
	if f.sc, f.err = m.Scenario(e); f.err != nil {
		return f
	}
	if f.sc.Disagg != nil {
		f.psm, _, f.err = f.sc.DisaggSims()
	} else {
		f.psm, f.err = f.sc.Sim()
	}
	return f
}

func (f *prefillFloor) at(isl int) (float64, error) {
	if f.err != nil {
		return 0, f.err
	}
	if v, ok := f.memo[isl]; ok {
		return v, nil
	}
	var r sim.BatchResult
	if err := f.psm.StepBatch([]sim.Seq{{Query: isl, Prefill: true}}, &r); err != nil {
		return 0, err
	}
	v := float64(r.Step.Time) * 1e3
	f.memo[isl] = v
	return v, nil
}

// belowBound is validate.BelowBound on the predicted figures (the corpus
// command's own rule, cli belowBound); "" when not below or not priced.
func (f *prefillFloor) belowBound(m *scenarios.Manifest, e scenarios.ManifestEntry, isl, c int, ttft, tpot float64) string {
	sc := (*scenarios.Scenario)(nil)
	if f != nil && f.sc != nil {
		sc = f.sc
	} else {
		var err error
		if sc, err = m.Scenario(e); err != nil {
			return ""
		}
	}
	in := validate.BoundInput{Decode: sc.Config, DecodeInstances: 1, PrefillGPUs: sc.Config.GPUs,
		ISL: float64(isl), OSL: float64(osl), TTFTms: ttft, TPOTms: tpot, Concurrency: c}
	if d := sc.Disagg; d != nil {
		in.Decode.Layout, in.Decode.GPUs, in.DecodeInstances = d.Decode.Layout, d.Decode.GPUs, d.Decode.Workers
		in.PrefillGPUs = d.Prefill.GPUs
	}
	return validate.BelowBound(in, validate.LowerBound(in))
}

func report(w io.Writer, plans []*entryPlan, fs []finding, rows, ok int) error {
	swept := 0
	dropped := map[string]int{}
	for _, p := range plans {
		if p.skip == "" {
			swept++
		}
		for _, d := range p.dropped {
			dropped[d]++
		}
	}
	fmt.Fprintf(w, "# corpus on h200-sxm: %d entries, %d swept, %d rows (%d ISLs x %d concurrencies), %d rows clean\n",
		len(plans), swept, rows, len(isls), len(concs), ok)
	for _, d := range sortedKeys(dropped) {
		fmt.Fprintf(w, "dropped on Hopper: %s in %d entries\n", d, dropped[d])
	}
	byClass := map[string][]finding{}
	for _, f := range fs {
		byClass[f.class] = append(byClass[f.class], f)
	}
	classes := sortedKeys(byClass)
	sort.SliceStable(classes, func(a, b int) bool { return len(byClass[classes[a]]) > len(byClass[classes[b]]) })
	for _, c := range classes {
		list := byClass[c]
		ents := map[string]bool{}
		for _, f := range list {
			ents[f.entry] = true
		}
		fmt.Fprintf(w, "\n## %s: %d rows, %d entries\n", c, len(list), len(ents))
		for i, f := range list {
			if i == listRows && listRows > 0 {
				fmt.Fprintf(w, "  ... %d more\n", len(list)-i)
				break
			}
			fmt.Fprintf(w, "  %s  %s\n", strings.TrimPrefix(f.entry, "aiconfigurator/"), f.detail)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
