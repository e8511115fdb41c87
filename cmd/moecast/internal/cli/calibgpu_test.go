package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report"
)

// TestCalibGPUFileUsedByPredict: a file as `calib gpu` writes it (from a
// recorded result) layered on the embedded calibration answers predict's
// MoE layers for the shipped Kimi-K2.5 H200 scenario.
func TestCalibGPUFileUsedByPredict(t *testing.T) {
	var moe []campaign.MoEResult
	for _, p := range campaign.MoEPoints(campaign.Options{Quick: true}) {
		us := 20 + 0.3*float64(p.Tokens)
		moe = append(moe, campaign.MoEResult{Point: p, Layer: unit.Timing{Median: unit.Seconds((us + 7) * 1e-6)}, Experts: unit.Timing{Median: unit.Seconds(us * 1e-6)}, Touched: 8, WorkingSet: 1e8})
	}
	var ew []campaign.ElementwiseResult
	for _, c := range campaign.ElementwiseCases(campaign.Options{Quick: true}) {
		ew = append(ew, campaign.ElementwiseResult{Case: c, Bytes: float64(c.Bytes()), Timing: unit.Timing{Median: unit.Seconds(3e-6 + float64(c.Bytes())/3e12)}})
	}
	path := writeRecorded(t, "moecast calib gpu --quick --out h200.toml", campaign.MoEOutput(moe), campaign.ElementwiseOutput(ew, "glue.sm_90.cubin"))
	srcs, cal := predictSources(t, "../../../../scenarios/kimi-k2.5-h200-nvlink-tp8.toml", "embedded,"+path)
	for _, src := range srcs {
		assert.True(t, strings.Contains(src["moe"], path+"#moe.moecast_w4a16.int4_wo.e384.uniform"), src["moe"])
	}
	assert.Len(t, cal, 2)

	// Alone (the embedded MLA module table, which prices the attention
	// block's norms with the module, left out), the file answers the
	// elementwise kernels.
	srcs, _ = predictSources(t, "../../../../scenarios/kimi-k2.5-h200-nvlink-tp8.toml", path)
	for _, src := range srcs {
		assert.True(t, strings.Contains(src["elementwise"], path+"#elementwise.moecast_glue.bf16"), src["elementwise"])
	}
}

// writeRecorded writes a calibration file as `calib gpu` would from
// outputs recorded on an H200, and gives its path.
func writeRecorded(t *testing.T, command string, outputs ...*campaign.Output) string {
	t.Helper()
	r := &campaign.Result{Device: campaign.Device{Name: "NVIDIA H200", UUID: "GPU-0", UUIDs: []string{"GPU-0"}, SM: "sm_90",
		SMs: 132, L2Bytes: 60 << 20, Image: "w4a16.sm_90.cubin"}, Versions: campaign.Versions{Driver: "580", CUDA: "13.0", NCCL: "2.28.9"},
		Outputs: outputs}
	f, err := r.File(campaign.Options{Command: command}, time.Now())
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200.toml")
	require.NoError(t, f.Write(path))
	return path
}

// predictSources runs predict --format json on scenario with calibration
// and gives each point's sources by category, and the calibration list.
func predictSources(t *testing.T, scenario, calibration string) ([]map[string]string, []any) {
	t.Helper()
	code, out, errOut := runCLI(t, "predict", scenario, "--calibration", calibration, "--format", "json")
	require.Equal(t, ExitOK, code, errOut)
	var got struct {
		Calibration []any `json:"calibration"`
		Points      []struct {
			Sources map[string]string `json:"sources"`
		} `json:"points"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.NotEmpty(t, got.Points)
	var srcs []map[string]string
	for _, p := range got.Points {
		srcs = append(srcs, p.Sources)
	}
	return srcs, got.Calibration
}

// TestCalibGPUCommFlags: the comm op's flags and the launcher's
// environment are checked before any GPU is touched: one line, exit 2.
func TestCalibGPUCommFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.toml")
	code, _, errOut := runCLI(t, "calib", "gpu", "--ops", "comm", "--fabric", "ethernet", "--out", out)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, `calib gpu: --fabric "ethernet": not a fabric preset`)
	t.Setenv("RANK", "0")
	t.Setenv("WORLD_SIZE", "2")
	code, _, errOut = runCLI(t, "calib", "gpu", "--ops", "comm", "--out", out)
	assert.Equal(t, ExitInput, code)
	assert.Equal(t, "moecast: calib gpu: rendezvous: torchrun environment: 2 ranks but MASTER_ADDR is not set (or set MOECAST_RENDEZVOUS_DIR)\n", errOut)
	t.Setenv("MASTER_ADDR", "127.0.0.1")
	code, _, errOut = runCLI(t, "calib", "gpu", "--ops", "moe,comm", "--out", out)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, "--ops moe under torchrun (2 ranks): only comm runs in several processes")
	t.Setenv("RANK", "2")
	code, _, errOut = runCLI(t, "calib", "gpu", "--out", out)
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, errOut, "RANK=2 is not below WORLD_SIZE=2")
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// TestCalibGPUReport: calib gpu's measurement report, rendered by its view
// through report.Generate, is the device line, then each op's lines and
// table in order, then what is not measured; nothing on stderr.
func TestCalibGPUReport(t *testing.T) {
	tab := &report.Table{Columns: []report.Column{{Name: "tokens"}, {Name: "us", Text: "%.1f"}}}
	tab.Add(1, 20.25)
	res := &campaign.Result{
		Device:   campaign.Device{Name: "NVIDIA H200", UUID: "GPU-0"},
		Versions: campaign.Versions{Driver: "580.159.04", CUDA: "13.0", NCCL: "2.28.9"},
		Outputs: []*campaign.Output{
			{Op: "copy", Lines: []string{"copy: 3.9 TB/s"}},
			{Op: "moe", Lines: []string{"moe: 1 point", "second line"}, Report: tab},
		},
		Elapsed: 12345 * time.Millisecond,
	}
	var tabText strings.Builder
	require.NoError(t, tab.Render(&tabText, report.Text))
	want := "calib gpu: NVIDIA H200 (GPU-0), driver 580.159.04, CUDA 13.0, NCCL 2.28.9; 12.3 s\n" +
		"copy: 3.9 TB/s\nmoe: 1 point\nsecond line\n" + tabText.String()
	if nm := campaign.NotMeasuredList(); len(nm) > 0 {
		want += "not measured: " + strings.Join(nm, "; ") + "\n"
	}
	var out, errw strings.Builder
	require.NoError(t, printCalibGPU(&streams{Out: &out, Err: &errw}, res))
	assert.Equal(t, want, out.String())
	assert.Empty(t, errw.String())
}
