package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutputNeverDamages: -o onto something that is not a regular file, or
// onto one of the inputs, exits 2 with one line naming the path and leaves
// the destination as it was (issue 8, item 1).
func TestOutputNeverDamages(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "calib.toml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	link := filepath.Join(dir, "link.toml")
	require.NoError(t, os.Symlink(fifo, link))
	input := filepath.Join(dir, "all_reduce_perf.txt")
	src, err := os.ReadFile(ncclFixtures[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(input, src, 0o644))
	hard := filepath.Join(dir, "hard.txt")
	require.NoError(t, os.Link(input, hard))
	perfdbDir := filepath.Join(dir, "perfdb")
	require.NoError(t, os.CopyFS(perfdbDir, os.DirFS("../../../../calib/testdata/perfdb")))
	var perfdbCSV string
	filepath.WalkDir(perfdbDir, func(p string, e os.DirEntry, err error) error {
		if err == nil && perfdbCSV == "" && strings.HasSuffix(p, ".csv") {
			perfdbCSV = p
		}
		return nil
	})
	require.NotEmpty(t, perfdbCSV)
	csvBefore, err := os.ReadFile(perfdbCSV)
	require.NoError(t, err)

	nccl := []string{"calib", "import", "nccl-tests", input, "--gpu", "h100-sxm", "-o"}
	for _, tc := range []struct {
		name string
		args []string
		path string // the destination, unchanged after
		want string
	}{
		{"fifo", append(nccl, fifo), fifo, "moecast: -o " + fifo + ": exists and is not a regular file (a named pipe (FIFO)); refusing to replace it"},
		{"link to fifo", append(nccl, link), fifo, "moecast: -o " + link + ": exists and is not a regular file (a named pipe (FIFO))"},
		{"output is the input", append(nccl, input), input, "moecast: -o " + input + ": is one of the inputs; refusing to overwrite it"},
		{"output is a hard link to the input", append(nccl, hard), input, "moecast: -o " + hard + ": is one of the inputs (" + input + ")"},
		{"perfdb output is an input csv", []string{"calib", "import", "perfdb", perfdbDir, "-o", perfdbCSV}, perfdbCSV, "moecast: -o " + perfdbCSV + ": is one of the inputs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.Stat(tc.path)
			require.NoError(t, err)
			code, stdout, stderr := runCLI(t, tc.args...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, tc.want), "stderr %q, want prefix %q", stderr, tc.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			after, err := os.Stat(tc.path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "destination changed kind")
			assert.Equal(t, before.Size(), after.Size())
		})
	}
	b, err := os.ReadFile(input)
	require.NoError(t, err)
	assert.Equal(t, src, b, "input overwritten")
	b, err = os.ReadFile(perfdbCSV)
	require.NoError(t, err)
	assert.Equal(t, csvBefore, b, "perfdb input overwritten")
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 5, "a temporary file left behind")
}

// TestVersion: --version prints the version and the commit ("devel" when
// the build does not record them, as under go test).
func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI(t, "--version")
	require.Equal(t, ExitOK, code, stderr)
	assert.Regexp(t, `^moecast \S+ \(commit \S+(, modified)?\)\n$`, stdout)
}

// TestImplausibleModelRefused: a config.json with absurd dimensions is an
// input error naming the file, line and key, for `model show` and for a
// scenario that uses it; nothing is priced from it (issue 8, item 3).
func TestImplausibleModelRefused(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../../../model/presets/moonshotai--Kimi-K2.5_config.json")
	require.NoError(t, err)
	bad := strings.Replace(string(src), `"hidden_size": 7168`, `"hidden_size": 1000000000000`, 1)
	require.NotEqual(t, string(src), bad)
	cfg := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(cfg, []byte(bad), 0o644))
	scen := filepath.Join(dir, "s.toml")
	require.NoError(t, os.WriteFile(scen, []byte(`[model]
config = "big.json"
[hardware]
gpu = "h200-sxm"
gpus = 8
fabric = "nvlink4"
[parallel]
tp = 8
ep = 8
[workload]
batch = [1, 8]
context = 2048
`), 0o644))
	want := "big.json:50:5: text_config.hidden_size: 1000000000000 is implausibly large (limit 65536)\n"
	for _, args := range [][]string{
		{"model", "show", cfg},
		{"model", "show", cfg, "--format", "json"},
		{"predict", scen},
		{"predict", scen, "--format", "json"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		assert.Equal(t, ExitInput, code, "%v: %s", args, stderr)
		assert.Empty(t, stdout, args)
		assert.True(t, strings.HasSuffix(stderr, want), "%v: stderr %q", args, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%v: one line", args)
	}
}

// TestModelShowStdin: `model show -` reads the config.json from standard
// input and names it "stdin" in errors.
func TestModelShowStdin(t *testing.T) {
	stdin := func(t *testing.T, content string) {
		p := filepath.Join(t.TempDir(), "in.json")
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		f, err := os.Open(p)
		require.NoError(t, err)
		old := os.Stdin
		os.Stdin = f
		t.Cleanup(func() { os.Stdin = old; f.Close() })
	}
	src, err := os.ReadFile("../../../../model/presets/openai--gpt-oss-120b_config.json")
	require.NoError(t, err)
	stdin(t, string(src))
	code, stdout, stderr := runCLI(t, "model", "show", "-")
	require.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, stdout, "model         stdin\narchitecture  GptOssForCausalLM")

	stdin(t, `{"architectures": 5}`)
	code, _, stderr = runCLI(t, "model", "show", "-")
	assert.Equal(t, ExitInput, code)
	assert.Equal(t, "moecast: stdin:1:19: architectures: want a list of strings, got a number\n", stderr)
}
