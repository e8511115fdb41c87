package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/infile"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/model"
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
		// The nine wrappers the CLI used to add (issue 18): each library
		// now says by type what is the caller's input.
		{"rendezvous.EnvError (calib gpu: launcher variables)", fmt.Errorf("calib gpu: %w", &rendezvous.EnvError{Launcher: rendezvous.Torchrun, Msg: "m"}), ExitInput},
		{"campaign.InputError (calib gpu: options, the file)", fmt.Errorf("calib gpu: %w", &campaign.InputError{Err: base}), ExitInput},
		{"cuda.InitError (calib gpu, gpu info: no usable CUDA)", fmt.Errorf("gpu info: %w", &cuda.InitError{Err: &cuda.Error{Call: "cuInit", Code: 999}}), ExitInput},
		{"model.ResolveError (model show)", &model.ResolveError{Name: "x", Err: base}, ExitInput},
		{"model.LayoutError (model show --tp)", &model.LayoutError{Field: "--tp", Msg: "m"}, ExitInput},
		{"atomicfile.OutputError (--html, -o)", fmt.Errorf("--html %w", &atomicfile.OutputError{Err: base}), ExitInput},
		{"infile.Error (validate corpus PATH)", fmt.Errorf("validate corpus: %w", &infile.Error{Name: "p", Err: base}), ExitInput},
		// Not input: a failed rendezvous and a failed write.
		{"rendezvous.Error", &rendezvous.Error{Op: "join", Msg: "m"}, ExitFailure},
		{"cuda.Error after Init", &cuda.Error{Call: "cuMemAlloc", Code: 2}, ExitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, exitCodeOf(tc.err))
		})
	}
}
