package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// synthPrefix heads the id of each synthetic H200 row of the gen part.
const synthPrefix = "synthH200from_"

// genSweep runs the path the held-out H200 rows take: the corpus
// generator (validate/corpus/gen) over a copy of the serving data whose
// aiconfigurator file also holds, for every vLLM and SGLang row of B200
// and H100, a copy on system h200_sxm (its figures scaled by 1.37 so that
// no duplicate rule ties it to its source row; they are placeholders),
// then `validate corpus` over what gen wrote. It lists the synthetic
// rows' outcomes by reason: what a real H200 row of the same deployment
// would meet before any accuracy is scored.
func genSweep(w io.Writer, bin, repo, work, serving, configs string) error {
	dir := filepath.Join(work, "serving")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	ents, err := os.ReadDir(serving)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == "aiconfigurator" {
			continue
		}
		abs, err := filepath.Abs(filepath.Join(serving, e.Name()))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.Symlink(abs, filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	src := filepath.Join(serving, "aiconfigurator", "silicon_sample_dev.csv")
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) < 2 {
		return fmt.Errorf("%s: want a header and rows (%v)", src, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, k := range []string{"id", "system", "backend", "silicon_ttft_ms", "silicon_tpot_ms"} {
		if _, ok := col[k]; !ok {
			return fmt.Errorf("%s: no column %q", src, k)
		}
	}
	out := append([][]string(nil), recs...)
	synth := 0
	for _, r := range recs[1:] {
		sys, be := r[col["system"]], r[col["backend"]]
		if (sys != "b200_sxm" && sys != "h100_sxm") || (be != "vllm" && be != "sglang") {
			continue
		}
		c := append([]string(nil), r...)
		c[col["id"]] = synthPrefix + sys + "_" + r[col["id"]]
		c[col["system"]] = "h200_sxm"
		for _, k := range []string{"silicon_ttft_ms", "silicon_tpot_ms"} {
			if x, err := strconv.ParseFloat(c[col[k]], 64); err == nil {
				c[col[k]] = strconv.FormatFloat(x*1.37+0.05, 'f', -1, 64)
			}
		}
		out = append(out, c)
		synth++
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	if err := cw.WriteAll(out); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "aiconfigurator", "silicon_sample_dev.csv"), b.Bytes()); err != nil {
		return err
	}
	gen := filepath.Join(work, "gen")
	if err := os.RemoveAll(gen); err != nil {
		return err
	}
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return err
	}
	absDir, _ := filepath.Abs(dir)
	absConfigs, _ := filepath.Abs(configs)
	absGen, _ := filepath.Abs(gen)
	cmd := exec.Command("go", "run", "./validate/corpus/gen", "-serving", absDir, "-configs", absConfigs, "-out", absGen)
	cmd.Dir = repo
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gen: %v: %s", err, msg)
	}
	var res, errb bytes.Buffer
	v := exec.Command(bin, "validate", "corpus", gen, "--format", "json")
	v.Stdout, v.Stderr = &res, &errb
	if err := v.Run(); err != nil {
		return fmt.Errorf("validate corpus %s: %v: %s", gen, err, errb.String())
	}
	var card struct {
		Rows []struct {
			corpusRow
			ID     string `json:"id"`
			Mode   string `json:"mode"`
			Engine string `json:"engine"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(res.Bytes(), &card); err != nil {
		return err
	}
	byReason := map[string][]string{}
	n := 0
	for _, r := range card.Rows {
		if !strings.HasPrefix(r.ID, synthPrefix) {
			continue
		}
		n++
		why := "simulated"
		if r.Skip != "" {
			why = reasonClass(r.Skip)
		}
		why = r.Mode + ": " + why
		byReason[why] = append(byReason[why], strings.TrimPrefix(r.Entry, "aiconfigurator/"))
	}
	fmt.Fprintf(w, "\n# gen path: %d synthetic h200_sxm rows (copies of B200 and H100 vLLM/SGLang rows) through validate/corpus/gen and validate corpus: %d rows out\n", synth, n)
	reasons := sortedKeys(byReason)
	sort.SliceStable(reasons, func(a, b int) bool { return len(byReason[reasons[a]]) > len(byReason[reasons[b]]) })
	for _, k := range reasons {
		ents := map[string]bool{}
		for _, e := range byReason[k] {
			ents[e] = true
		}
		names := sortedKeys(ents)
		fmt.Fprintf(w, "\n## %s: %d rows, %d entries\n", k, len(byReason[k]), len(names))
		for i, e := range names {
			if i == listRows && listRows > 0 {
				fmt.Fprintf(w, "  ... %d more\n", len(names)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	return nil
}
