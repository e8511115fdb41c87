package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputErrorType: every error of the exported loaders and checks is an
// *InputError (the CLI's exit 2), whether or not it is positioned, and its
// text is the wrapped error's.
func TestInputErrorType(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("model = \n"), 0o644))
	sc, err := Default()
	require.NoError(t, err)
	for _, tc := range []struct {
		name       string
		err        func() error
		positioned bool // an *Error inside
	}{
		{"Open: no such file or name", func() error { _, err := Open("no-such-scenario"); return err }, false},
		{"Open: syntax", func() error { _, err := Open(bad); return err }, true},
		{"Load: missing file", func() error { _, err := Load(filepath.Join(dir, "none.toml")); return err }, false},
		{"Parse", func() error { _, err := Parse("x.toml", []byte("[parallel]\ntp = 0\n")); return err }, true},
		{"ReadSource", func() error { _, err := ReadSource(filepath.Join(dir, "a/none.toml")); return err }, false},
		{"ReadSourceIn stdin", func() error { _, err := ReadSourceIn("-", strings.NewReader("")); return errOrParse(err) }, false},
		{"Embedded", func() error { _, err := Embedded("nope"); return err }, false},
		{"CheckOverride", func() error { return CheckOverride(Override{Key: "no.such.key", Value: "1"}) }, false},
		{"SetCalibration", func() error { return sc.SetCalibration(filepath.Join(dir, "none.toml")) }, false},
		{"ReadEngineArgs", func() error { _, err := ReadEngineArgs("x", []byte("")); return err }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.Error(t, err)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, ie.Err.Error(), err.Error(), "the text is the wrapped error's")
			if tc.positioned {
				var pe *Error
				assert.ErrorAs(t, err, &pe)
			}
			assert.False(t, errors.As(ie.Err, new(*InputError)), "wrapped once")
		})
	}
}

// errOrParse parses stdin's empty scenario when reading it succeeded.
func errOrParse(err error) error {
	if err != nil {
		return err
	}
	src, _ := ReadSourceIn("-", strings.NewReader("[parallel]\ntp = 0\n"))
	_, err = src.Parse(nil)
	return err
}
