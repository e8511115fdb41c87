// Package golden compares test output with golden files under testdata/ and
// rewrites them when the test binary runs with -update:
//
//	go test ./cmd/moecast/internal/cli -run Predict -update
//
// Review the diff of every rewritten file before committing it (raft: only
// commit the changes if you understand what caused them). Only tests import
// this package.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// update is registered once per test binary that imports this package.
var update = flag.Bool("update", false, "rewrite golden files in testdata/ instead of comparing")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Check compares got with the file at path (relative to the package under
// test, e.g. testdata/x.golden), or writes got there with -update. A missing
// file or a difference fails the test with the path and how to refresh it.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run the test with -update, then review the diff)", path, err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (refresh with -update and review the diff)\n%s", path, diff(string(want), got))
	}
}

// diff shows the first differing line of want and got, enough to find it.
func diff(want, got string) string {
	line, i := 1, 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		if want[i] == '\n' {
			line++
		}
		i++
	}
	return "first difference at line " + strconv.Itoa(line) + ":\n  want: " + lineAt(want, i) + "\n  got:  " + lineAt(got, i)
}

func lineAt(s string, i int) string {
	start := i
	for start > 0 && s[start-1] != '\n' {
		start--
	}
	end := i
	for end < len(s) && s[end] != '\n' {
		end++
	}
	if start >= len(s) {
		return "(end of file)"
	}
	return s[start:end]
}
