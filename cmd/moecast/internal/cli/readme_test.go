package cli

import (
	"os"
	"strings"
	"testing"

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
