package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files under testdata/ instead of comparing:
//
//	go test ./internal/cli -run Model -update
//
// Review the diff of every rewritten file before committing it.
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test ./internal/cli -update")
	assert.Equal(t, string(want), got, "output differs from %s (refresh with -update and review the diff)", path)
}

// runCLI runs moecast with args through Run and returns the exit code,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(args, &out, &errb)
	return code, out.String(), errb.String()
}
