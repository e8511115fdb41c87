package validate

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadErrorType: the result and workload readers' errors are
// *ReadError, the positioned ones with their *BenchError inside.
func TestReadErrorType(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"ReadBench", func() error { _, err := ReadBench("x.json", strings.NewReader("")); return err }},
		{"ReadBenchAs", func() error { _, err := ReadBenchAs("no-such-format", "x", nil); return err }},
		{"ReadBenchPath", func() error { _, err := ReadBenchPath(missing); return err }},
		{"ReadWorkload", func() error { _, _, err := ReadWorkload("x.jsonl", []byte("{}\n")); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			var re *ReadError
			require.ErrorAs(t, err, &re)
			var be *BenchError
			assert.ErrorAs(t, err, &be)
			assert.Equal(t, re.Err.Error(), err.Error())
		})
	}
	_, err := ReadBenchPath(missing)
	assert.True(t, strings.HasPrefix(err.Error(), missing+": "), "names the path as given: %v", err)
}
