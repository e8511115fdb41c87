package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeWorkedExample keeps the README's worked example in step with
// the tool: the block after "Output of this tree:" must be what
// `moecast predict` prints on the embedded default. After a change of
// output, paste the new output into README.md (go run ./cmd/moecast predict).
func TestReadmeWorkedExample(t *testing.T) {
	readme, err := os.ReadFile("../../../../README.md")
	require.NoError(t, err)
	text := string(readme)
	const marker = "Output of this tree:"
	i := strings.Index(text, marker)
	require.GreaterOrEqual(t, i, 0, "README.md has no %q", marker)
	rest := text[i+len(marker):]
	open := strings.Index(rest, "```\n")
	require.GreaterOrEqual(t, open, 0, "no code block after %q", marker)
	rest = rest[open+4:]
	end := strings.Index(rest, "```")
	require.GreaterOrEqual(t, end, 0, "unterminated code block after %q", marker)
	want := rest[:end]

	code, stdout, stderr := runCLI(t, "predict")
	require.Equal(t, 0, code, stderr)
	got := stdout + stderr // warnings go to stderr, below the table, as a terminal shows them
	if got != want {
		t.Errorf("README.md's worked example differs from `moecast predict`:\n--- README\n%s--- predict\n%s", want, got)
	}
}

// TestReadmePlanExample keeps the README's planning example in step with
// the tool: the block after "--html plan.html` prints" is the head of
// `moecast plan kimi-k2.5-plan-1k1k` (through the front table).
func TestReadmePlanExample(t *testing.T) {
	readme, err := os.ReadFile("../../../../README.md")
	require.NoError(t, err)
	text := string(readme)
	const marker = "--html plan.html` prints"
	i := strings.Index(text, marker)
	require.GreaterOrEqual(t, i, 0, "README.md has no %q", marker)
	rest := text[i:]
	open := strings.Index(rest, "```\n")
	require.GreaterOrEqual(t, open, 0)
	rest = rest[open+4:]
	end := strings.Index(rest, "```")
	require.GreaterOrEqual(t, end, 0)
	want := rest[:end]
	code, stdout, stderr := runCLI(t, "plan", "kimi-k2.5-plan-1k1k")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(stdout, want), "README.md's planning example differs from `moecast plan kimi-k2.5-plan-1k1k`:\n--- README\n%s--- plan\n%s", want, stdout)
}

// TestReadmeFewestGPUs keeps the README's fewest-GPUs table in step with
// moecast plan. The 12 plans behind it take about a minute on two cores,
// so bench/readmetable generates it (go run ./bench/readmetable) into
// bench/readmetable/table.md and the README; this test checks cheaply that
// the README holds that file, and recomputes one row (B200, 1k/1k, with
// EAGLE-3: one plan of a few seconds) against it.
func TestReadmeFewestGPUs(t *testing.T) {
	const begin, end = "<!-- fewest-gpus table: go run ./bench/readmetable -->\n", "<!-- end of fewest-gpus table -->\n"
	readme, err := os.ReadFile("../../../../README.md")
	require.NoError(t, err)
	table, err := os.ReadFile("../../../../bench/readmetable/table.md")
	require.NoError(t, err)
	s := string(readme)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "README.md has no fewest-GPUs table markers")
	require.Equal(t, string(table), s[i+len(begin):j], "README.md's table differs from bench/readmetable/table.md: run go run ./bench/readmetable")
	if testing.Short() {
		t.Skip("one plan run: not with -short")
	}
	var row string
	for _, l := range strings.Split(string(table), "\n") {
		if strings.HasPrefix(l, "| 1k / 1k | B200 | yes |") {
			row = l
		}
	}
	require.NotEmpty(t, row)
	code, out, errs := runCLI(t, "plan", "kimi-k2.5-plan-1k1k", "--gpus", "b200-sxm", "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	var v struct {
		Best struct {
			Deployment  string  `json:"deployment"`
			Concurrency int     `json:"concurrency"`
			PerUser     float64 `json:"tokens_per_s_per_user"`
			TPOTP99     float64 `json:"tpot_p99_ms"`
			TTFTP99     float64 `json:"ttft_p99_ms"`
			TotalGPUs   int     `json:"total_gpus"`
		} `json:"best"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	b := v.Best
	want := fmt.Sprintf("| 1k / 1k | B200 | yes | %s at %d | %.1f | %.1f | %.1f | %d |",
		strings.TrimPrefix(b.Deployment, "b200-sxm "), b.Concurrency, b.PerUser, b.TPOTP99, b.TTFTP99/1000, b.TotalGPUs)
	assert.Equal(t, want, row, "the README's row differs from moecast plan: run go run ./bench/readmetable")
}
