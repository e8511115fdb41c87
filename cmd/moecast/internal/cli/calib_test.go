package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/scenarios"
	"github.com/moecast/moecast/sim"
)

var ncclFixtures = []string{
	"../../../../calib/testdata/nccl-tests/all_reduce_perf_8xh100.txt",
	"../../../../calib/testdata/nccl-tests/all_gather_perf_8xh100.txt",
}

func TestCalibImportNCCLTestsAndShow(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "h100-nccl.toml")
	args := append([]string{"calib", "import", "nccl-tests"}, ncclFixtures...)
	args = append(args, "--gpu", "h100-sxm", "--fabric", "nvlink4", "--date", "2026-11-29", "-o", out)
	code, stdout, stderr := runCLI(t, args...)
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "wrote "+out+": 2 tables, 42 rows\n", stdout)
	f, err := calib.Load(out)
	require.NoError(t, err)
	assert.Equal(t, "moecast calib import nccl-tests all_reduce_perf_8xh100.txt all_gather_perf_8xh100.txt --gpu h100-sxm --fabric nvlink4 -o h100-nccl.toml", f.Provenance.Command)

	code, stdout, stderr = runCLI(t, "calib", "show", out)
	require.Equal(t, ExitOK, code, stderr)
	golden(t, "calib/show-nccl-tests.txt", strings.ReplaceAll(stdout, dir, "DIR"))
}

func TestCalibShowEmbedded(t *testing.T) {
	code, stdout, stderr := runCLI(t, "calib", "show", "embedded:h100-sxm")
	require.Equal(t, ExitOK, code, stderr)
	golden(t, "calib/show-embedded-h100-sxm.txt", stdout)
}

func TestCalibBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "all_reduce_perf.txt")
	src, err := os.ReadFile(ncclFixtures[0])
	require.NoError(t, err)
	// One row with wrong results.
	broken := strings.Replace(string(src), "15.60    0.07    0.11      0", "15.60    0.07    0.11      2", 1)
	require.NotEqual(t, string(src), broken)
	require.NoError(t, os.WriteFile(bad, []byte(broken), 0o644))
	out := filepath.Join(dir, "out.toml")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"wrong results", []string{"calib", "import", "nccl-tests", bad, "-o", out}, bad + ":21: out-of-place #wrong = 2"},
		{"no output", []string{"calib", "import", "nccl-tests", ncclFixtures[0]}, "-o OUT is required"},
		{"missing file", []string{"calib", "import", "nccl-tests", filepath.Join(dir, "nope.txt"), "-o", out}, "no such file"},
		{"perfdb several GPUs", []string{"calib", "import", "perfdb", "../../../../calib/testdata/perfdb", "-o", out}, "several GPUs"},
		{"perfdb bad l2", []string{"calib", "import", "perfdb", "../../../../calib/testdata/perfdb", "--gpu", "h200-sxm", "--l2", "lots", "-o", out}, `--l2 "lots"`},
		{"output is a directory", []string{"calib", "import", "perfdb", "../../../../calib/testdata/perfdb", "--gpu", "h200-sxm", "-o", dir}, "-o " + dir + ": is a directory"},
		{"nccl output is a directory", []string{"calib", "import", "nccl-tests", ncclFixtures[0], "-o", dir}, "-o " + dir + ": is a directory"},
		{"output directory missing", []string{"calib", "import", "nccl-tests", ncclFixtures[0], "-o", filepath.Join(dir, "nope", "out.toml")},
			"-o " + filepath.Join(dir, "nope", "out.toml") + ": no such directory " + filepath.Join(dir, "nope")},
		{"perfdb missing", []string{"calib", "import", "perfdb", filepath.Join(dir, "nope"), "-o", out}, "perfdb " + filepath.Join(dir, "nope") + ": no such directory"},
		{"perfdb a file", []string{"calib", "import", "perfdb", ncclFixtures[0], "-o", out}, "perfdb " + ncclFixtures[0] + ": not a directory"},
		{"show unknown embedded", []string{"calib", "show", "embedded:tpu"}, `no embedded calibration "tpu"`},
		{"show missing file", []string{"calib", "show", filepath.Join(dir, "none.toml")}, "calibration file:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			assert.Equal(t, ExitInput, code)
			assert.Contains(t, stderr, tt.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			_, err := os.Stat(out)
			assert.True(t, os.IsNotExist(err), "nothing written")
		})
	}
}

func TestCalibImportPerfDB(t *testing.T) {
	out := filepath.Join(t.TempDir(), "h200.toml")
	code, stdout, stderr := runCLI(t, "calib", "import", "perfdb", "../../../../calib/testdata/perfdb", "--gpu", "h200-sxm", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	assert.Equal(t, "wrote "+out+": 7 tables, 37 rows\n", stdout)
	f, err := calib.Load(out)
	require.NoError(t, err)
	assert.Equal(t, "Apache-2.0", f.Provenance.License)
	assert.Equal(t, "moecast calib import perfdb perfdb --gpu h200-sxm -o h200.toml", f.Provenance.Command)
}

// TestPredictUsesCalibration: with the embedded calibration, the MoE,
// attention and all-reduce categories of the default scenario come from
// calibration tables; with "none" every source is a roofline or fixed.
func TestPredictUsesCalibration(t *testing.T) {
	on := stepFor(t, "embedded", 8)
	off := stepFor(t, "none", 8)
	for _, c := range []cost.Category{cost.MoE, cost.Attention, cost.AllReduce} {
		assert.Equal(t, cost.Table, on.Breakdown[c].Source.Kind, "%v with calibration", c)
		assert.Contains(t, on.Breakdown[c].Source.Table, "embedded:rtx-pro-6000-server#")
		assert.NotEqual(t, cost.Table, off.Breakdown[c].Source.Kind, "%v without calibration", c)
	}
}

func stepFor(t testing.TB, calibration string, batch int) sim.Point {
	t.Helper()
	sc, err := scenarios.Default()
	require.NoError(t, err)
	require.NoError(t, sc.SetCalibration(calibration))
	s, err := sim.New(sc.Config)
	require.NoError(t, err)
	p, err := s.Step(batch, 2048)
	require.NoError(t, err)
	return p
}

// BenchmarkStepCalibrated is BenchmarkStep of package sim (Kimi-K2.5 TP8
// EP8 on 8x RTX PRO 6000, batch 32, context 2048) with the embedded
// calibration tables consulted for every op they cover.
func BenchmarkStepCalibrated(b *testing.B) {
	sc, err := scenarios.Default()
	require.NoError(b, err)
	require.NoError(b, sc.SetCalibration("embedded"))
	s, err := sim.New(sc.Config)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Step(32, 2048); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// TestPredictCalibrationOtherBox: a calibration measured on another GPU,
// or over another fabric, is not applied: predict warns, names the
// calibration and both boxes, and prices those ops with the roofline.
func TestPredictCalibrationOtherBox(t *testing.T) {
	dir := t.TempDir()
	h200 := filepath.Join(dir, "h200.toml")
	code, _, stderr := runCLI(t, "calib", "import", "perfdb", "../../../../calib/testdata/perfdb", "--gpu", "h200-sxm", "-o", h200)
	require.Equal(t, ExitOK, code, stderr)
	src, err := scenarios.EmbeddedSource("kimi-k2.5-h200-nvlink-tp8")
	require.NoError(t, err)
	pcie := strings.Replace(string(src), `fabric = "nvlink4"`, `fabric = "pcie-gen4"`, 1)
	require.NotEqual(t, string(src), pcie)
	scen := filepath.Join(dir, "h200-pcie4.toml")
	require.NoError(t, os.WriteFile(scen, []byte(pcie), 0o644))

	tests := []struct {
		name string
		args []string
		want []string // substrings of the warnings
	}{
		{"h200 file on rtx", []string{"--calibration", h200},
			[]string{"calibration " + h200 + ": ", "kernel tables measured on GPU h200-sxm", "GPU rtx-pro-6000-server",
				"collective tables measured on h200-sxm over nvlink4", "rtx-pro-6000-server over pcie-gen5"}},
		{"embedded:NAME on rtx", []string{"--calibration", "embedded:h200-sxm"},
			[]string{"calibration embedded:h200-sxm: ", "kernel tables measured on GPU h200-sxm"}},
		{"h200 on pcie-gen4", []string{scen},
			[]string{"calibration embedded:h200-sxm: ", "collective tables measured on h200-sxm over nvlink4", "h200-sxm over pcie-gen4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"predict", "--batch", "8", "--format", "json"}, tt.args...)...)
			require.Equal(t, ExitOK, code, stderr)
			var doc struct {
				Points []struct {
					Sources map[string]string `json:"sources"`
				} `json:"points"`
				Warnings []string `json:"warnings"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
			w := strings.Join(doc.Warnings, "\n")
			for _, sub := range tt.want {
				assert.Contains(t, w, sub)
			}
			require.Len(t, doc.Points, 1)
			ar := doc.Points[0].Sources["allreduce"]
			assert.True(t, strings.HasPrefix(ar, "roofline "), "allreduce source %q", ar)
			assert.NotContains(t, stdout, "nccl.allreduce")
		})
	}
}
