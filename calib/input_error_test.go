package calib

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputErrorType: the readers' and importers' errors are
// *InputError (the CLI's exit 2), with the wrapped error's text.
func TestInputErrorType(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"Open missing", func() error { _, err := Open(filepath.Join(dir, "none.toml")); return err }},
		{"Open embedded", func() error { _, err := Open("embedded:no-such-gpu"); return err }},
		{"Parse", func() error { _, err := Parse("x.toml", []byte("schema = 99\n")); return err }},
		{"ImportNCCLTests", func() error {
			_, err := ImportNCCLTests([]string{filepath.Join(dir, "none.txt")}, NCCLTestsOptions{})
			return err
		}},
		{"ImportPerfDB", func() error { _, err := ImportPerfDB(filepath.Join(dir, "none"), PerfDBOptions{}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, ie.Err.Error(), err.Error())
		})
	}
}
