package moecast_test

// This test keeps the packages' import direction ({model, kernels, comm,
// trace} -> sim -> {serve, plan, validate} -> CLI): model, kernels and
// comm sit below sim; sim never imports calib; each third-party library has
// its owner packages. A new package or a new edge must be added here on
// purpose (as in Go's src/go/build/deps_test.go).

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const modulePath = "github.com/moecast/moecast"

// allowed maps a package (relative to the module) to the module packages and
// third-party module prefixes its non-test files may import.
var allowed = map[string][]string{
	"internal/unit":       {},
	"internal/dtype":      {},
	"internal/cost":       {"internal/unit"},
	"internal/atomicfile": {"internal/infile"},
	"internal/golden":     {},
	"internal/infile":     {},
	"internal/curve":      {"internal/unit", "internal/cost", "gonum.org/v1/gonum"},
	"internal/cuda":       {"github.com/ebitengine/purego"},
	// The rendezvous is the standard library only: it runs (and is tested)
	// with no GPU, on any launcher's processes.
	"internal/rendezvous": {},
	"kernels/gpu":         {"internal/cuda", "internal/unit"},
	"model":               {"internal/unit", "internal/dtype", "internal/infile"},
	"kernels":             {"internal/unit", "internal/dtype", "internal/cost", "internal/curve"},
	"comm":                {"internal/unit", "internal/cost", "internal/curve"},
	// comm/ncclrun measures collectives through internal/cuda's NCCL and
	// joins multi-process jobs through internal/rendezvous; it makes no
	// tables (calib/campaign does).
	"comm/ncclrun":   {"internal/cuda", "internal/rendezvous", "internal/unit"},
	"sim":            {"internal/unit", "internal/dtype", "internal/cost", "model", "kernels", "comm"},
	"serve":          {"internal/unit", "internal/cost", "model", "kernels", "comm", "sim"},
	"plan":           {"internal/unit", "internal/dtype", "model", "kernels", "comm", "sim", "serve"},
	"trace":          {"internal/unit", "internal/infile", "internal/cost", "github.com/BurntSushi/toml", "github.com/klauspost/compress"},
	"trace/tracegen": {},
	// calib reads aiconfigurator's parquet tables (parquet-go: a
	// maintained pure-Go reader; parquet's encodings and compressions are
	// not worth writing by hand) and keeps its largest embedded files
	// zstd-compressed (klauspost/compress).
	"calib": {"internal/unit", "internal/infile", "internal/cost", "internal/atomicfile", "internal/curve", "kernels", "comm",
		"github.com/BurntSushi/toml", "github.com/parquet-go/parquet-go", "github.com/klauspost/compress"},
	"calib/campaign": {"internal/unit", "model", "kernels", "calib", "internal/cuda", "kernels/gpu", "report",
		"comm", "comm/ncclrun", "internal/rendezvous"},
	"scenarios": {"internal/unit", "internal/infile", "internal/dtype", "model", "kernels", "comm", "sim", "serve", "plan", "calib",
		"github.com/BurntSushi/toml"},
	"cmd/moecast/internal/cli": {"internal/unit", "internal/dtype", "internal/cost", "internal/atomicfile", "internal/infile", "model",
		"sim", "serve", "plan", "calib", "calib/campaign", "trace", "report", "report/view", "scenarios", "validate", "internal/cuda", "kernels/gpu",
		"internal/rendezvous", "validate/corpus", "github.com/spf13/cobra", "github.com/spf13/pflag"},
	"report": {"internal/unit", "internal/cost", "trace", "gonum.org/v1/plot"},
	// report/view: each command's result and its views (text, JSON schema,
	// CSV table, HTML page), built on report's table and page model; the
	// CLI computes a result and hands it here.
	"report/view": {"internal/unit", "internal/cost", "internal/dtype", "model", "calib", "kernels", "comm", "sim", "serve", "plan", "validate", "scenarios", "report"},
	"cmd/moecast": {"cmd/moecast/internal/cli"},
	"validate":    {"internal/unit", "internal/dtype", "internal/cost", "internal/infile", "model", "kernels", "sim", "serve", "trace", "calib"},
	// The shipped accuracy corpus: data only; gen is its go generate
	// converter (standard library only).
	"validate/corpus":     {},
	"validate/corpus/gen": {},
}

// moduleImports maps each package directory (relative to the module) to
// the set of import paths of its non-test files.
func moduleImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	imports := map[string]map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if dir == "." || strings.HasPrefix(dir, "bench") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, im := range f.Imports {
			imports[dir][strings.Trim(im.Path.Value, `"`)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

func TestImportDirection(t *testing.T) {
	imports := moduleImports(t)
	var dirs []string
	for d := range imports {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		rules, ok := allowed[dir]
		if !ok {
			t.Errorf("package %s is not in deps_test.go's table: add it with its allowed imports", dir)
			continue
		}
		for im := range imports[dir] {
			if !strings.Contains(strings.SplitN(im, "/", 2)[0], ".") {
				continue // standard library
			}
			if !importAllowed(im, rules) {
				t.Errorf("%s imports %s, which deps_test.go does not allow", dir, im)
			}
		}
	}
}

func importAllowed(im string, rules []string) bool {
	for _, r := range rules {
		full := r
		if !strings.Contains(strings.SplitN(r, "/", 2)[0], ".") {
			full = modulePath + "/" + r
			if im == full {
				return true
			}
			continue
		}
		if im == full || strings.HasPrefix(im, full+"/") {
			return true
		}
	}
	return false
}

// TestSimNeverImportsCalib states the rule the table encodes, so that an edit
// of the table that breaks it fails too.
func TestSimNeverImportsCalib(t *testing.T) {
	for _, pkg := range []string{"sim", "model", "kernels", "comm"} {
		for _, im := range allowed[pkg] {
			if strings.HasPrefix(im, "calib") || im == "scenarios" || im == "cmd/moecast/internal/cli" {
				t.Errorf("%s may not import %s", pkg, im)
			}
		}
	}
	if _, err := os.Stat("sim"); err != nil {
		t.Fatal("sim package missing")
	}
}

// TestAllowedModulesInGoMod keeps the table honest: every third-party module
// it allows is required by go.mod, so the table cannot grant an import that
// would need a new dependency.
func TestAllowedModulesInGoMod(t *testing.T) {
	f, err := os.Open("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	required := map[string]bool{}
	block := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !block:
			continue
		}
		if fields := strings.Fields(line); len(fields) >= 2 {
			required[fields[0]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for pkg, rules := range allowed {
		for _, r := range rules {
			if !strings.Contains(strings.SplitN(r, "/", 2)[0], ".") {
				continue // a package of this module
			}
			if !required[r] {
				t.Errorf("deps_test.go allows %s to import %s, which go.mod does not require", pkg, r)
			}
		}
	}
}

// TestTraceApartFromCalib states the rules of trace and report: trace
// imports nothing of calib or sim and calib nothing of trace (the nesting
// was by name only); report sits below the CLI.
func TestTraceApartFromCalib(t *testing.T) {
	forbid := map[string][]string{
		"trace":          {"calib", "sim", "report", "cmd/moecast/internal/cli"},
		"trace/tracegen": {"calib", "sim"},
		"calib":          {"trace"},
		"report":         {"cmd/moecast/internal/cli", "scenarios"},
	}
	for pkg, bad := range forbid {
		for _, im := range allowed[pkg] {
			for _, b := range bad {
				if im == b || strings.HasPrefix(im, b+"/") {
					t.Errorf("%s may not import %s", pkg, im)
				}
			}
		}
	}
}

// TestAllowedEdgesUsed keeps the table from granting more than the tree
// uses: every allowed import is imported by some non-test file of its
// package (a third-party module: some package of it), so that an allowance
// nothing uses is removed rather than kept as an open door.
func TestAllowedEdgesUsed(t *testing.T) {
	imports := moduleImports(t)
	for pkg, rules := range allowed {
		for _, r := range rules {
			used := false
			for im := range imports[pkg] {
				if importAllowed(im, []string{r}) {
					used = true
					break
				}
			}
			if !used {
				t.Errorf("deps_test.go allows %s to import %s, which none of its files imports: remove the allowance", pkg, r)
			}
		}
	}
}

// groundFloor is internal/'s ground floor: packages that every layer may
// use and that import only each other, the standard library and
// third-party modules, never a package above them (the CLI least of all).
var groundFloor = []string{"internal/unit", "internal/cost", "internal/dtype", "internal/curve", "internal/atomicfile", "internal/infile",
	"internal/cuda", "internal/rendezvous"}

// TestGroundFloor refuses an allowance from a ground-floor package to any
// module package above it, the CLI (cmd/moecast/internal/cli) first.
func TestGroundFloor(t *testing.T) {
	floor := map[string]bool{}
	for _, p := range groundFloor {
		floor[p] = true
	}
	for _, p := range groundFloor {
		rules, ok := allowed[p]
		if !ok {
			t.Errorf("ground-floor package %s is not in deps_test.go's table", p)
		}
		for _, r := range rules {
			if strings.Contains(strings.SplitN(r, "/", 2)[0], ".") {
				continue // a third-party module
			}
			if r == "cmd/moecast/internal/cli" || strings.HasPrefix(r, "cmd/") {
				t.Errorf("ground-floor package %s may not import the CLI (%s)", p, r)
			} else if !floor[r] {
				t.Errorf("ground-floor package %s may not import %s, which is above the ground floor", p, r)
			}
		}
	}
}
