// Command readmetable regenerates README.md's fewest-GPUs table from runs
// of `moecast plan`: for each shipped planning scenario (1k/1k, 8k/1k),
// each GPU type and with and without EAGLE-3 (a copy of the scenario with
// speculative.method = "none"), the best deployment of
// `moecast plan SCENARIO --gpus NAME --format json`. It writes the table
// to table.md beside it and between the README's markers
//
//	<!-- fewest-gpus table: go run ./bench/readmetable -->
//	<!-- end of fewest-gpus table -->
//
// The 12 plans take minutes on two cores, too long for `go test`: the CLI's
// TestReadmeFewestGPUs checks cheaply that the README holds table.md and
// recomputes one row. Run from the repository root:
//
//	go run ./bench/readmetable
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Markers around the table in README.md.
const (
	Begin = "<!-- fewest-gpus table: go run ./bench/readmetable -->\n"
	End   = "<!-- end of fewest-gpus table -->\n"
)

// rows are the table's rows in order.
var (
	plans = []struct{ requests, scenario string }{
		{"1k / 1k", "scenarios/kimi-k2.5-plan-1k1k.toml"},
		{"8k / 1k", "scenarios/kimi-k2.5-plan-8k1k.toml"},
	}
	gpus = []struct{ preset, label string }{
		{"rtx-pro-6000-server", "RTX PRO 6000"}, {"h200-sxm", "H200"}, {"b200-sxm", "B200"},
	}
)

// best is the part of plan's JSON "best" the table shows.
type best struct {
	Deployment  string  `json:"deployment"`
	Spec        string  `json:"spec"`
	Concurrency int     `json:"concurrency"`
	PerUser     float64 `json:"tokens_per_s_per_user"`
	TPOTP99     float64 `json:"tpot_p99_ms"`
	TTFTP99     float64 `json:"ttft_p99_ms"`
	Replicas    int     `json:"replicas"`
	TotalGPUs   int     `json:"total_gpus"`
}

func main() {
	bin := flag.String("moecast", "", "moecast binary to run (default: built from ./cmd/moecast)")
	readme := flag.String("readme", "README.md", "README to rewrite between the markers")
	out := flag.String("o", "bench/readmetable/table.md", "where to write the table")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "readmetable")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		*bin = filepath.Join(tmp, "moecast")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/moecast").CombinedOutput(); err != nil {
			log.Fatalf("go build: %v\n%s", err, out)
		}
	}
	var b strings.Builder
	b.WriteString("| requests | GPU | EAGLE-3 | deployment at concurrency | tok/s/user | TPOT p99 ms | TTFT p99 s | GPUs |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, p := range plans {
		noSpec, err := withoutSpec(tmp, p.scenario)
		if err != nil {
			log.Fatal(err)
		}
		for _, g := range gpus {
			for _, spec := range []bool{false, true} {
				sc := noSpec
				if spec {
					sc = p.scenario
				}
				bst, err := plan(*bin, sc, g.preset)
				if err != nil {
					log.Fatal(err)
				}
				b.WriteString(Row(p.requests, g.preset, g.label, spec, bst))
				fmt.Fprint(os.Stderr, ".")
			}
		}
	}
	fmt.Fprintln(os.Stderr)
	table := b.String()
	if err := os.WriteFile(*out, []byte(table), 0o644); err != nil {
		log.Fatal(err)
	}
	src, err := os.ReadFile(*readme)
	if err != nil {
		log.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)` + regexp.QuoteMeta(Begin) + `.*?` + regexp.QuoteMeta(End))
	if !re.Match(src) {
		log.Fatalf("%s has no markers %q ... %q", *readme, Begin, End)
	}
	src = re.ReplaceAllLiteral(src, []byte(Begin+table+End))
	if err := os.WriteFile(*readme, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// withoutSpec writes a copy of scenario with speculative.method = "none".
func withoutSpec(dir, scenario string) (string, error) {
	src, err := os.ReadFile(scenario)
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(`(?m)^method = "eagle3"$`)
	if !re.Match(src) {
		return "", fmt.Errorf("%s: no speculative method eagle3", scenario)
	}
	// The planning scenarios name a preset and the embedded calibration:
	// no relative path to resolve, so the copy may live anywhere.
	p := filepath.Join(dir, "nospec-"+filepath.Base(scenario))
	return p, os.WriteFile(p, re.ReplaceAll(src, []byte(`method = "none"`)), 0o644)
}

// plan runs `moecast plan SCENARIO --gpus GPU --format json` and returns
// its best deployment.
func plan(bin, scenario, gpu string) (best, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, "plan", scenario, "--gpus", gpu, "--format", "json")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return best{}, fmt.Errorf("moecast plan %s --gpus %s: %v\n%s", scenario, gpu, err, errb.String())
	}
	var v struct {
		Best *best `json:"best"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		return best{}, err
	}
	if v.Best == nil {
		return best{}, fmt.Errorf("moecast plan %s --gpus %s: no best deployment", scenario, gpu)
	}
	return *v.Best, nil
}

// Row renders one row of the table (the GPU column names the preset, so
// the deployment leaves it out).
func Row(requests, preset, gpu string, spec bool, b best) string {
	yes, dep := "no", strings.TrimPrefix(b.Deployment, preset+" ")
	if spec {
		yes = "yes"
		if b.Spec == "" || b.Spec == "none" {
			dep += " (without EAGLE-3)"
		}
	}
	if b.Replicas > 1 {
		dep = fmt.Sprintf("%dx (%s)", b.Replicas, dep)
	}
	return fmt.Sprintf("| %s | %s | %s | %s at %d | %.1f | %.1f | %.1f | %d |\n",
		requests, gpu, yes, dep, b.Concurrency, b.PerUser, b.TPOTP99, b.TTFTP99/1000, b.TotalGPUs)
}
