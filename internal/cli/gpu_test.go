package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/moecast/moecast/internal/cuda"
)

// TestGPUInfoWithoutGPU: where no GPU is usable (CI), `gpu info` fails with
// one line and exit 2.
func TestGPUInfoWithoutGPU(t *testing.T) {
	if err := cuda.Init(); !cuda.NoGPU(err) {
		t.Skipf("a GPU is usable here (%v)", err)
	}
	code, out, errOut := runCLI(t, "gpu", "info")
	assert.Equal(t, ExitInput, code)
	assert.Empty(t, out)
	assert.True(t, strings.HasPrefix(errOut, "moecast: gpu info: "), errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
}

func TestGPUInfoBadFormat(t *testing.T) {
	code, _, errOut := runCLI(t, "gpu", "info", "--format", "yaml")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, `--format: unknown format "yaml"`)
}
