package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/internal/cost"
)

// importNCCL writes the nccl-tests fixtures of calib as a calibration
// file in dir. They were run on H100s; the import labels them as the
// scenario's box (as a user does with --gpu/--fabric) so that they apply,
// keeping the messages of at most 1 MiB: larger ones ran faster than a
// PCIe Gen5 link allows, which the importer refuses.
func importNCCL(t *testing.T, dir string) string {
	t.Helper()
	f, err := calib.ImportNCCLTests([]string{
		smallMessages(t, dir, "../calib/testdata/nccl-tests/all_reduce_perf_8xh100.txt"),
		smallMessages(t, dir, "../calib/testdata/nccl-tests/all_reduce_perf_2xh100.txt"),
	}, calib.NCCLTestsOptions{GPU: "rtx-pro-6000-server", Fabric: "pcie-gen5", Date: "2026-11-30", Command: "test"})
	require.NoError(t, err)
	p := filepath.Join(dir, "my-box-nccl.toml")
	require.NoError(t, f.Write(p))
	return p
}

// smallMessages copies an nccl-tests output into dir without its rows of
// more than 1 MiB.
func smallMessages(t *testing.T, dir, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	var keep []string
	for _, ln := range strings.Split(string(src), "\n") {
		if f := strings.Fields(ln); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 1<<20 {
				continue
			}
		}
		keep = append(keep, ln)
	}
	out := filepath.Join(dir, filepath.Base(path))
	require.NoError(t, os.WriteFile(out, []byte(strings.Join(keep, "\n")), 0o644))
	return out
}

const layered = `name = "t"
[model]
preset = "kimi-k2.5"
[hardware]
gpu = "rtx-pro-6000-server"
gpus = 8
fabric = "pcie-gen5"
calibration = CAL
[parallel]
tp = 8
ep = 8
[runtime]
allreduce = "nccl"
`

// TestCalibrationLayered: a user who imports their own nccl-tests output
// on top of the embedded tables keeps the embedded MoE (and other kernel)
// tables; the imported all-reduce table replaces the embedded one.
func TestCalibrationLayered(t *testing.T) {
	dir := t.TempDir()
	importNCCL(t, dir)
	parse := func(cal string) (*Scenario, cost.Source, cost.Source, cost.Source) {
		t.Helper()
		s, err := Parse(filepath.Join(dir, "t.toml"), []byte(strings.Replace(layered, "CAL", cal, 1)))
		require.NoError(t, err)
		sm, err := s.Sim()
		require.NoError(t, err)
		p, err := sm.Step(8, 2048)
		require.NoError(t, err)
		return s, p.Breakdown[cost.MoE].Source, p.Breakdown[cost.Attention].Source, p.Breakdown[cost.AllReduce].Source
	}

	// The embedded tables alone.
	_, moe, mla, ar := parse(`"embedded"`)
	require.Equal(t, cost.Table, moe.Kind, moe.Describe())
	require.Equal(t, cost.Table, mla.Kind, mla.Describe())
	require.Equal(t, cost.Table, ar.Kind, ar.Describe())
	embMoE, embMLA := moe.Table, mla.Table
	assert.True(t, strings.HasPrefix(ar.Table, "embedded:rtx-pro-6000-server#"), ar.Table)

	// The imported file alone: MoE falls back to the roofline.
	s, moe, mla, ar := parse(`"my-box-nccl.toml"`)
	assert.Equal(t, cost.Roofline, moe.Kind, moe.Describe())
	assert.Equal(t, cost.Roofline, mla.Kind, mla.Describe())
	assert.Equal(t, filepath.Join(dir, "my-box-nccl.toml")+"#nccl.allreduce", ar.Table)
	assert.Len(t, s.CalibrationUses, 1)

	// Layered: the embedded MoE table and the imported all-reduce.
	s, moe, mla, ar = parse(`["embedded", "my-box-nccl.toml"]`)
	assert.Equal(t, []string{"embedded", "my-box-nccl.toml"}, s.Calibration)
	assert.Equal(t, embMoE, moe.Table, "embedded MoE table kept")
	assert.Equal(t, embMLA, mla.Table, "embedded MLA table kept")
	assert.Equal(t, filepath.Join(dir, "my-box-nccl.toml")+"#nccl.allreduce", ar.Table, "imported all-reduce wins")
	require.Len(t, s.CalibrationUses, 2)
	assert.Equal(t, "embedded:rtx-pro-6000-server", s.CalibrationUses[0].Name)
	assert.Equal(t, filepath.Join(dir, "my-box-nccl.toml"), s.CalibrationUses[1].Name)
	assert.Equal(t, 1, s.CalibrationUses[1].Replaced, "nccl.allreduce replaces the embedded table of the same op and keys")
	assert.Contains(t, s.CalibrationNote, "embedded:rtx-pro-6000-server, ")
	assert.Contains(t, s.CalibrationNote, " + "+filepath.Join(dir, "my-box-nccl.toml")+", 1 table, replacing 1 earlier")
	assert.Empty(t, s.Warnings)
	kt := s.Config.KernelTables
	require.NotNil(t, kt)

	// The other order: the embedded all-reduce overrides the import.
	_, _, _, ar = parse(`["my-box-nccl.toml", "embedded"]`)
	assert.True(t, strings.HasPrefix(ar.Table, "embedded:rtx-pro-6000-server#"), ar.Table)

	// The flag takes the same list, paths relative to the current directory.
	s, _, _, _ = parse(`"none"`)
	require.NoError(t, s.SetCalibration("embedded", filepath.Join(dir, "my-box-nccl.toml")))
	assert.NotNil(t, s.Config.KernelTables)
	assert.Len(t, s.CalibrationUses, 2)
}

// TestCalibrationSourcesBad: the key takes a string or an array of
// strings; "none" stands alone; errors name the file, line and key.
func TestCalibrationSourcesBad(t *testing.T) {
	for _, tt := range []struct{ name, cal, want string }{
		{"number", `3`, `t.toml:8: hardware.calibration: is an integer: want a string or an array of strings`},
		{"element", `["embedded", 3]`, `t.toml:8: hardware.calibration: element 2 is an integer, not a string`},
		{"empty list", `[]`, `t.toml:8: hardware.calibration: no calibration source`},
		{"none and more", `["none", "embedded"]`, `t.toml:8: hardware.calibration: "none" (roofline only) cannot be combined`},
		{"missing file", `["embedded", "nope.toml"]`, `t.toml:8: hardware.calibration: source 2 ("nope.toml"): calibration file: `},
		{"empty element", `["embedded", ""]`, `t.toml:8: hardware.calibration: source 2 (""): empty source`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.toml", []byte(strings.Replace(layered, "CAL", tt.cal, 1)))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "got  %s\nwant %s...", err, tt.want)
		})
	}
	// A single string stays valid, and so does an empty one (the default).
	s, err := Parse("t.toml", []byte(strings.Replace(layered, "CAL", `""`, 1)))
	require.NoError(t, err)
	assert.Equal(t, []string{"embedded"}, s.Calibration)
}
