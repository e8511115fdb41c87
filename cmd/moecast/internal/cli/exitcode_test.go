package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/plan"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/validate"
)

// TestExitCodeOfLibraryTypes: the libraries' typed errors of bad input exit 2 however
// deeply the caller wrapped them; anything else exits 1.
func TestExitCodeOfLibraryTypes(t *testing.T) {
	base := errors.New("x")
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"plain", base, ExitFailure},
		{"cli InputError", inputErr(base), ExitInput},
		{"scenarios.InputError", &scenarios.InputError{Err: base}, ExitInput},
		{"scenarios.Error", &scenarios.Error{File: "s.toml", Msg: "m"}, ExitInput},
		{"calib.InputError", &calib.InputError{Err: base}, ExitInput},
		{"plan.InputError", &plan.InputError{Err: base}, ExitInput},
		{"validate.ReadError", &validate.ReadError{Err: base}, ExitInput},
		{"report.NonFiniteError", &report.NonFiniteError{File: "t.json", What: "w"}, ExitInput},
		{"infile.Error", &infile.Error{Name: "f", Err: base}, ExitInput},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", &calib.InputError{Err: base})), ExitInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exitCodeOf(tc.err))
		})
	}
}
