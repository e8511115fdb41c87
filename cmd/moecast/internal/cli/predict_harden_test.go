package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/report/view"
	"github.com/moecast/moecast/sim"
)

const hardenBase = `name = "x"
[model]
preset = "qwen3-30b-a3b"
[hardware]
gpu = "h100-sxm"
gpus = 2
fabric = "nvlink4"
`

// TestPredictWarnings: what is unusual is said, in the text and in the
// JSON's warnings, once however many batch sizes raise it. Each case
// printed nothing before.
func TestPredictWarnings(t *testing.T) {
	many := make([]string, 5000)
	for i := range many {
		many[i] = strconv.Itoa(i + 1)
	}
	pcie := "name = \"x\"\n[model]\npreset = \"kimi-k2.5\"\n[hardware]\ngpu = \"rtx-pro-6000-server\"\ngpus = 8\nfabric = \"pcie-gen5\"\n[parallel]\ntp = 8\nep = 8\n"
	for _, tt := range []struct {
		name, src string
		args      []string
		want      string
		count     int // warnings with want; 1 when 0
	}{
		{"custom fabric under calibration tables", hardenBase + "[hardware.custom_fabric]\nlatency = \"2us\"\n", nil,
			"calibration embedded:h100-sxm: its 13 collective tables, measured on the nvlink4 preset, price the collectives they cover, not the figures of [hardware.custom_fabric]; set hardware.custom_fabric.override_calibration = true", 0},
		{"custom fabric overriding them", hardenBase + "[hardware.custom_fabric]\nlatency = \"2us\"\noverride_calibration = true\n", nil,
			"hardware.custom_fabric.override_calibration = true prices the collectives from the figures of [hardware.custom_fabric]", 0},
		{"oneshot on 8 PCIe GPUs", pcie + "[runtime]\nallreduce = \"oneshot\"\n", nil,
			`x.toml:12: runtime.allreduce = "oneshot": stock vLLM disables its custom all-reduce on more than 2 GPUs without NVLink`, 0},
		{"twoshot on 2 GPUs", hardenBase + "[runtime]\nallreduce = \"twoshot\"\n", nil,
			`x.toml:9: runtime.allreduce = "twoshot": stock vLLM always runs the one-shot kernel on 2 GPUs`, 0},
		{"context beyond max_position_embeddings", hardenBase, []string{"--context", "100000"},
			"context 100000 exceeds the model's max_position_embeddings (40960)", 0},
		{"16 GPUs over an 8-GPU NVLink node", strings.Replace(hardenBase, "gpus = 2", "gpus = 16", 1), nil,
			"x.toml:6: hardware.gpus: 16 GPUs span 2 nodes of fabric nvlink4, which joins 8 GPUs per node", 0},
		{"5000 batch sizes", hardenBase, []string{"--batch", strings.Join(many, ",")}, "batch sizes do not fit (batch ", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.toml")
			require.NoError(t, os.WriteFile(path, []byte(tt.src), 0o644))
			// x.toml:N positions: the test names the file x.toml.
			args := append([]string{"predict", path}, tt.args...)
			code, out, errs := runCLI(t, args...)
			require.Equal(t, ExitOK, code, errs)
			out = strings.ReplaceAll(out, filepath.Dir(path)+string(filepath.Separator), "")
			var lines []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "warning: ") {
					lines = append(lines, l)
				}
			}
			n := 0
			for _, l := range lines {
				if strings.Contains(l, tt.want) {
					n++
				}
			}
			assert.Equal(t, 1, n, "one warning with %q in:\n%s", tt.want, strings.Join(lines, "\n"))
			assert.Less(t, len(lines), 10, "warnings collapse")
			for _, l := range lines {
				assert.Less(t, len(l), 2000, "a warning stays one readable line")
			}

			code, out, errs = runCLI(t, append(args, "--format", "json")...)
			require.Equal(t, ExitOK, code, errs)
			var pr view.PredictJSON
			require.NoError(t, json.Unmarshal([]byte(out), &pr))
			assert.Contains(t, strings.ReplaceAll(strings.Join(pr.Warnings, "\n"), filepath.Dir(path)+string(filepath.Separator), ""), tt.want)
		})
	}
}

// TestPredictInputErrors: every input error exits 2 with one line that
// names the file, line and key, in text and JSON output alike, without
// Go's words. Each case passed with exit 0 (a wrong number) or spoke Go
// before.
func TestPredictInputErrors(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"DRAM 1e30TB/s", hardenBase + "[hardware.custom_gpu]\nbandwidth = \"1e30TB/s\"\n", `x.toml:9: hardware.custom_gpu.bandwidth: "1e30TB/s" is above the plausible range`},
		{"bf16 overflowing to Inf", hardenBase + "[hardware.custom_gpu]\nbf16 = \"1e300TFLOPS\"\n", `x.toml:9: hardware.custom_gpu.bf16: "1e300TFLOPS" is above`},
		{"fabric latency 1e300s", hardenBase + "[hardware.custom_fabric]\nlatency = \"1e300s\"\n", `x.toml:9: hardware.custom_fabric.latency: "1e300s" is above`},
		{"fabric bandwidth 1e-300B/s", hardenBase + "[hardware.custom_fabric]\nbandwidth = \"1e-300B/s\"\n", `x.toml:9: hardware.custom_fabric.bandwidth: "1e-300B/s" is below`},
		{"memory 1B", hardenBase + "[hardware.custom_gpu]\nmemory = \"1B\"\n", `x.toml:9: hardware.custom_gpu.memory: "1B" is below`},
		{"batch scalar", hardenBase + "[workload]\nbatch = 8\n", `x.toml:9: workload.batch: is an integer, want an array`},
		{"tp string", hardenBase + "[parallel]\ntp = \"2\"\n", `x.toml:9: parallel.tp: is a string, want an integer`},
		{"table as number", strings.Replace(hardenBase, "[hardware]\n", "[hardware]\ncustom_gpu = 3\n", 1), `x.toml:5: hardware.custom_gpu: is an integer, want a table`},
		{"node_gpus zero", hardenBase + "[hardware.custom_fabric]\nnode_gpus = 0\n", `x.toml:9: hardware.custom_fabric.node_gpus: 0 must be in [1, 65536]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.toml")
			require.NoError(t, os.WriteFile(path, []byte(tt.src), 0o644))
			for _, format := range []string{"text", "json"} {
				code, out, errs := runCLI(t, "predict", path, "--format", format)
				assert.Equal(t, ExitInput, code, format)
				assert.Empty(t, out, format)
				errs = strings.ReplaceAll(errs, filepath.Dir(path)+string(filepath.Separator), "")
				assert.True(t, strings.HasPrefix(errs, "moecast: "+tt.want), "%s: got %q\nwant %q", format, errs, tt.want)
				assert.Equal(t, 1, strings.Count(errs, "\n"), "one line")
				for _, gos := range []string{"destination has type", "int64", "float64", "strconv.", "Inf", "NaN"} {
					assert.NotContains(t, errs, gos)
				}
			}
		})
	}
}

// TestPredictStdin: "-" reads the scenario from standard input.
func TestPredictStdin(t *testing.T) {
	var out, errs bytes.Buffer
	code := RunIO([]string{"predict", "-", "--batch", "1"}, strings.NewReader(hardenBase), &out, &errs)
	require.Equal(t, ExitOK, code, errs.String())
	assert.Contains(t, out.String(), "scenario  x (<stdin>)")
	out.Reset()
	errs.Reset()
	code = RunIO([]string{"predict", "-"}, strings.NewReader(hardenBase+"[parallel]\ntp = \"2\"\n"), &out, &errs)
	assert.Equal(t, ExitInput, code)
	assert.Equal(t, "moecast: <stdin>:9: parallel.tp: is a string, want an integer\n", errs.String())
}

// TestCalibImportStdout: -o - writes the calibration to standard output,
// the summary and warnings to standard error.
func TestCalibImportStdout(t *testing.T) {
	code, out, errs := runCLI(t, "calib", "import", "nccl-tests", ncclFixtures[0], "--date", "2026-11-29", "-o", "-")
	require.Equal(t, ExitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "# moecast calibration file"), out)
	assert.Contains(t, out, `gpu = "h100-sxm"`, "device name mapped to its preset")
	assert.Contains(t, errs, "warning: nccl-tests: the output does not name the fabric and --fabric was not given")
	assert.Contains(t, errs, "wrote standard output: 1 tables")
}

// TestCheckPointFinite: a point holding Inf, NaN or an overflowed figure
// is refused rather than printed (or failing the JSON encoder, exit 1).
func TestCheckPointFinite(t *testing.T) {
	ok := sim.Point{Batch: 1, Step: cost.Estimate{Time: 0.01}}
	assert.NoError(t, checkPointFinite(ok))
	for name, p := range map[string]sim.Point{
		"inf step":  {Batch: 2, Step: cost.Estimate{Time: unit.Seconds(math.Inf(1))}},
		"nan tok/s": {Batch: 3, TokensPerSecond: math.NaN()},
		"1e250 ms":  {Batch: 4, TPOT: 1e247},
		"huge moe":  func() sim.Point { p := ok; p.Breakdown[cost.MoE].Time = 1e300; return p }(),
	} {
		err := checkPointFinite(p)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "not a finite prediction", name)
	}
}

// TestUsageErrors: a bad flag value or argument count names the command
// and the flag in words, once (before: "moecast: moecast calib show: ...",
// "strconv.ParseInt: parsing ...", "accepts 1 arg(s)" without a command).
func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "--context", "abc"}, "moecast: predict: --context: \"abc\" is not an integer\n"},
		{[]string{"predict", "--explain=maybe"}, "moecast: predict: --explain: \"maybe\" is not true or false\n"},
		{[]string{"calib", "show", "x.toml", "--format", "json"}, "moecast: calib show: unknown flag: --format\n"},
		{[]string{"calib", "show"}, "moecast: calib show: accepts 1 arg(s), received 0 (usage: moecast calib show FILE|embedded:NAME|- [flags])\n"},
		{[]string{"predict", "a", "b"}, "moecast: predict: accepts at most 1 arg(s), received 2 (usage: moecast predict [SCENARIO] [flags])\n"},
		{[]string{"--bogus"}, "moecast: unknown flag: --bogus\n"},
	} {
		code, out, errs := runCLI(t, tt.args...)
		assert.Equal(t, ExitInput, code, tt.args)
		assert.Empty(t, out, tt.args)
		assert.Equal(t, tt.want, errs, tt.args)
	}
}

// TestCalibInputErrors: calibration rows the hardware of their provenance
// cannot produce are refused at their line, by show and by predict, exit 2.
func TestCalibInputErrors(t *testing.T) {
	const file = `schema = 1
[provenance]
gpu = "h200-sxm"
fabric = "nvlink4"
date = "2026-11-29"
command = "hand"
launch = "cuda-graph"
cache = "warm"
[[table]]
name = "ar"
op = "allreduce"
impl = "nccl"
columns = ["ranks", "bytes", "latency_us"]
rows = """
8,1024,20.5
ROW
"""
`
	for _, tt := range []struct{ name, row, want string }{
		{"1 GB in 1 us over NVLink", "8,1073741824,1.0", `c.toml:16: table "ar": row 2: latency_us 1 is below the physical floor 2.088ms`},
		{"latency in hours", "8,4096,1e10", `c.toml:16: table "ar": row 2: latency_us 1e+10 (10000.000s) is absurdly slow`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.toml")
			require.NoError(t, os.WriteFile(path, []byte(strings.Replace(file, "ROW", tt.row, 1)), 0o644))
			for _, args := range [][]string{{"calib", "show", path}, {"predict", "kimi-k2.5-h200-nvlink-tp8", "--calibration", path, "--format", "json"}} {
				code, out, errs := runCLI(t, args...)
				assert.Equal(t, ExitInput, code, args)
				assert.Empty(t, out)
				assert.Contains(t, strings.ReplaceAll(errs, dir+string(filepath.Separator), ""), tt.want, args)
				assert.Equal(t, 1, strings.Count(errs, "\n"))
			}
		})
	}
}
