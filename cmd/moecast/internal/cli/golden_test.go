package cli

import (
	"bytes"
	"path/filepath"
	"testing"

	goldenfile "github.com/moecast/moecast/internal/golden"
)

// golden compares got with testdata/name, or writes it there with -update
// (go test ./internal/cli -run Predict -update; review the diff).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// runCLI runs moecast with args through Run and returns the exit code,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(args, &out, &errb)
	return code, out.String(), errb.String()
}
