package cli

import (
	"os"
	"path/filepath"
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

// TestCalibGPUWithoutGPU: where no GPU is usable (CI), `calib gpu` fails
// with one line, exit 2, and writes nothing.
func TestCalibGPUWithoutGPU(t *testing.T) {
	if err := cuda.Init(); !cuda.NoGPU(err) {
		t.Skipf("a GPU is usable here (%v)", err)
	}
	out := filepath.Join(t.TempDir(), "h200.toml")
	code, stdout, errOut := runCLI(t, "calib", "gpu", "--quick", "--out", out)
	assert.Equal(t, ExitInput, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(errOut, "moecast: calib gpu: "), errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

func TestCalibGPUBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"calib", "gpu"}, "calib gpu: --out FILE is required"},
		{[]string{"calib", "gpu", "--out", dir}, "is a directory"},
		{[]string{"calib", "gpu", "--ops", "bogus", "--out", filepath.Join(dir, "x.toml")}, `--ops "bogus": want some of`},
		{[]string{"calib", "gpu", "--ops", "copy", "--gpus", "8", "--out", filepath.Join(dir, "x.toml")}, "--gpus 8: only the comm op uses several GPUs"},
		// Flags only the file or the comm op uses fail before any GPU is
		// looked for (not after the campaign, nor as the driver's error).
		{[]string{"calib", "gpu", "--date", "2026-13-01", "--out", filepath.Join(dir, "x.toml")}, `calib gpu: --date "2026-13-01": want YYYY-MM-DD`},
		{[]string{"calib", "gpu", "--gpu", "h900", "--out", filepath.Join(dir, "x.toml")}, `calib gpu: --gpu "h900": not a GPU preset`},
		{[]string{"calib", "gpu", "--gpus", "0", "--out", filepath.Join(dir, "x.toml")}, "calib gpu: --gpus 0: want 1 or more"},
		{[]string{"calib", "gpu", "--comm-timeout", "0s", "--out", filepath.Join(dir, "x.toml")}, "calib gpu: --comm-timeout 0s: want a positive duration"},
		{[]string{"calib", "gpu", "--comm-timeout", "-5s", "--out", filepath.Join(dir, "x.toml")}, "calib gpu: --comm-timeout -5s: want a positive duration"},
	} {
		code, _, errOut := runCLI(t, tt.args...)
		assert.Equal(t, ExitInput, code, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	}
	_, err := os.Stat(filepath.Join(dir, "x.toml"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}
