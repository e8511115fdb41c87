package validate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// `vllm bench sweep serve` output directories (vllm/benchmarks/sweep/serve.py
// @ 4fa9174): under -o DIR, one directory per start (a timestamp), one per
// parameter combination ("SERVE-<k=v...>-BENCH-<k=v...>"), and in it one
// `vllm bench serve --save-result` JSON per repeat, `run=<n>.json`, with the
// combination's parameters added at the top level (run_number, and the
// serve and bench overrides as the --serve-params/--bench-params files
// name them: "max_num_seqs", "tensor_parallel_size", ...); summary.json
// repeats the runs of a combination, summary.csv all of them
// (`vllm bench sweep serve_sla`, serve_sla.py @ 79bf4cc, adds one level,
// <sla_variable>=<value>, between the combination and its runs). Each
// run=<n>.json is a record (summaries are not read again); the layout
// comes from the serve overrides where they name it.
func init() {
	RegisterFormat(Format{
		Name:      "vllm-sweep",
		Looks:     "a directory with run=<n>.json files: vllm bench sweep serve -o DIR",
		Order:     50,
		DetectDir: func(fsys fs.FS) bool { return len(sweepRuns(fsys, 1)) > 0 },
		ReadDir:   readSweepDir,
	})
}

// maxSweepDepth is how deep a sweep's run files may lie under the directory
// given (DIR/timestamp/combination/run=n.json).
const maxSweepDepth = 3

// sweepRuns lists up to limit (0 = all) run=<n>.json files under fsys,
// sorted, at most maxSweepDepth directories down.
func sweepRuns(fsys fs.FS, limit int) []string {
	var runs []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != "." && strings.Count(p, "/")+1 > maxSweepDepth {
				return fs.SkipDir
			}
			return nil
		}
		base := path.Base(p)
		if n, ok := strings.CutPrefix(base, "run="); ok && strings.HasSuffix(n, ".json") {
			if _, err := strconv.Atoi(strings.TrimSuffix(n, ".json")); err == nil && d.Type().IsRegular() {
				runs = append(runs, p)
				if limit > 0 && len(runs) >= limit {
					return fs.SkipAll
				}
			}
		}
		return nil
	})
	sort.Strings(runs)
	return runs
}

// sweepLayout are the serve overrides that name the layout, with the
// dashed and underscored spellings ParameterSweepItem accepts.
var sweepLayout = map[string]string{
	"tensor_parallel_size": "tp", "tensor-parallel-size": "tp", "tp": "tp",
	"data_parallel_size": "dp", "data-parallel-size": "dp", "dp": "dp",
	"pipeline_parallel_size": "pp", "pipeline-parallel-size": "pp", "pp": "pp",
	"enable_expert_parallel": "ep", "enable-expert-parallel": "ep",
}

func readSweepDir(fsys fs.FS, name string) ([]BenchResult, error) {
	runs := sweepRuns(fsys, 0)
	if len(runs) == 0 {
		return nil, &BenchError{File: name, Msg: "no run=<n>.json file: not a vllm bench sweep output directory"}
	}
	var out []BenchResult
	for _, p := range runs {
		file := strings.TrimSuffix(name, "/") + "/" + p
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, &BenchError{File: file, Msg: pathErrMsg(err)}
		}
		obj, err := decodeObject(data)
		if err != nil {
			return nil, &BenchError{File: file, Line: 1, Msg: "not a JSON object: " + jsonMsg(err)}
		}
		r, err := vllmKeys(file, 1, obj, "vllm-sweep")
		if err != nil {
			return nil, err
		}
		r.ID = p
		if err := sweepSetLayout(&r, obj); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// sweepSetLayout reads the layout from the run's serve overrides: TP, DP,
// PP, and EP = TP x DP with enable_expert_parallel (vLLM's expert
// parallelism spans every TP x DP rank).
func sweepSetLayout(r *BenchResult, obj map[string]json.RawMessage) error {
	f := &fields{file: r.File, line: r.Line, obj: obj}
	ep := false
	for key, what := range sweepLayout {
		if !f.has(key) {
			continue
		}
		if what == "ep" {
			var b bool
			if err := json.Unmarshal(obj[key], &b); err != nil {
				return &BenchError{File: r.File, Line: r.Line, Key: key, Msg: fmt.Sprintf("want true or false, got %s", abbrev(obj[key]))}
			}
			ep = b
			continue
		}
		n := f.count(key)
		if f.err != nil {
			return f.err
		}
		switch what {
		case "tp":
			r.Layout.TP = n
		case "dp":
			r.Layout.DP = n
		case "pp":
			r.Layout.PP = n
		}
	}
	if ep && r.Layout.TP > 0 {
		r.Layout.EP = r.Layout.TP * max(r.Layout.DP, 1)
	}
	if r.Layout.TP > 0 {
		r.Layout.GPUs = r.Layout.TP * max(r.Layout.DP, 1) * max(r.Layout.PP, 1)
	}
	if n := f.count("run_number"); f.err == nil && f.has("run_number") {
		if r.Layout.Extra == nil {
			r.Layout.Extra = map[string]string{}
		}
		r.Layout.Extra["run_number"] = strconv.Itoa(n)
	}
	return f.err
}
