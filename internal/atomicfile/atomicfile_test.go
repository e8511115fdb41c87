package atomicfile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.toml")
	require.NoError(t, WriteFile(p, []byte("one"), 0o644))
	require.NoError(t, WriteFile(p, []byte("two"), 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
}

func TestFailedWriteKeepsOldAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.toml")
	require.NoError(t, WriteFile(p, []byte("old"), 0o644))
	err := Write(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("boom")
	})
	require.ErrorContains(t, err, "boom")
	b, _ := os.ReadFile(p)
	assert.Equal(t, "old", string(b))
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 1, "temporary file left behind")
}

// TestRefusesNonRegular: a destination that is not a regular file, or a
// link to one, is left as it is, and the error names it.
func TestRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(fifo, link))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	for _, tc := range []struct{ name, path, want string }{
		{"fifo", fifo, "named pipe (FIFO)"},
		{"directory", sub, "a directory"},
		{"link to fifo", link, "named pipe (FIFO)"},
		{"socket", sock, "a socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.Lstat(tc.path)
			require.NoError(t, err)
			werr := WriteFile(tc.path, []byte("x"), 0o644)
			require.ErrorIs(t, werr, ErrNotRegular)
			assert.ErrorContains(t, werr, tc.path)
			assert.ErrorContains(t, werr, tc.want)
			require.ErrorIs(t, CheckOutput(tc.path), ErrNotRegular)
			after, err := os.Lstat(tc.path)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), after.Mode(), "destination changed kind")
		})
	}
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 4, "temporary file left behind")
}

// TestRefusesCharDevice checks /dev/null through CheckOutput only: a
// regression must fail the test, not replace the machine's /dev/null.
func TestRefusesCharDevice(t *testing.T) {
	st, err := os.Lstat(os.DevNull)
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("%s is not a character device here", os.DevNull)
	}
	err = CheckOutput(os.DevNull)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.ErrorContains(t, err, "a character device")
}

// TestLinkToRegularKept: writing through a link replaces the file it
// points to and keeps the link; an existing file keeps its mode.
func TestLinkToRegularKept(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.toml")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o600))
	link := filepath.Join(dir, "link.toml")
	require.NoError(t, os.Symlink("real.toml", link))
	require.NoError(t, WriteFile(link, []byte("new"), 0o644))
	st, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, st.Mode()&os.ModeSymlink, "link replaced by a file")
	b, _ := os.ReadFile(real)
	assert.Equal(t, "new", string(b))
	st, _ = os.Stat(real)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("nowhere", dangling))
	assert.ErrorContains(t, WriteFile(dangling, []byte("x"), 0o644), "symbolic link to a missing file")
}

// TestOutputIsInput: the same file under another name (a hard link, a
// path with ..) counts as the input.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("data"), 0o644))
	hard := filepath.Join(dir, "hard.txt")
	require.NoError(t, os.Link(in, hard))
	for _, out := range []string{in, hard, filepath.Join(dir, "..", filepath.Base(dir), "in.txt")} {
		err := CheckOutput(out, filepath.Join(dir, "other"), in)
		require.ErrorIs(t, err, ErrIsInput, out)
		assert.ErrorContains(t, err, out)
	}
	assert.NoError(t, CheckOutput(filepath.Join(dir, "new.toml"), in))
	assert.NoError(t, CheckOutput(filepath.Join(dir, "new.toml")))
}

// TestOutputIsStdout: an output onto the file the command's standard
// output goes to (by name, through /dev/stdout, or a link) is refused
// (session 13: `plan S --html /dev/stdout > r.txt` left r.txt holding
// the HTML alone, exit 0); CheckOutput and Write both refuse it.
func TestOutputIsStdout(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.txt")
	f, err := os.Create(out)
	require.NoError(t, err)
	defer f.Close()
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(out, link))
	old := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = old }()
	for _, p := range []string{out, link, "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))} {
		err := CheckOutput(p)
		require.ErrorIs(t, err, ErrIsStdout, p)
		assert.ErrorContains(t, err, p)
		require.ErrorIs(t, WriteFile(p, []byte("x"), 0o644), ErrIsStdout, p)
	}
	os.Stdout = old
	assert.NoError(t, CheckOutput(out), "not the output once stdout goes elsewhere")
}

// TestSignalRemovesTemp runs a child (this test binary) that is killed in
// the middle of a write: it exits 143 or 130, the old destination is
// intact and no temporary file is left.
func TestSignalRemovesTemp(t *testing.T) {
	if p := os.Getenv("ATOMICFILE_SIGNAL_CHILD"); p != "" {
		HandleSignals(nil)
		_ = Write(p, 0o644, func(w io.Writer) error {
			io.WriteString(w, "half")
			os.Stdout.WriteString("ready\n")
			select {} // until the signal
		})
		os.Exit(3)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "out.toml")
			require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalRemovesTemp$")
			cmd.Env = append(os.Environ(), "ATOMICFILE_SIGNAL_CHILD="+p)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			line, err := bufio.NewReader(out).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			ents, _ := os.ReadDir(dir)
			require.Len(t, ents, 2, "the child holds a temporary file")
			require.NoError(t, cmd.Process.Signal(tc.sig))
			err = cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, tc.code, ee.ExitCode())
			ents, _ = os.ReadDir(dir)
			assert.Len(t, ents, 1, "temporary file left behind")
			b, _ := os.ReadFile(p)
			assert.Equal(t, "old", string(b))
		})
	}
}

// TestCheckOutputTyped: every refusal of CheckOutput is an *OutputError
// (the caller's input, whatever the cause), with the cause's text; Write's
// own check of a dangling link is not one (a failed write, not an input).
func TestCheckOutputTyped(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(in, []byte("data"), 0o644))
	dangling := filepath.Join(dir, "dangling")
	require.NoError(t, os.Symlink("nowhere", dangling))
	for _, tc := range []struct {
		name, path string
		inputs     []string
		want       string
	}{
		{"input", in, []string{in}, in + ": is one of the inputs; refusing to overwrite it"},
		{"device", os.DevNull, nil, os.DevNull + ": exists and is not a regular file (a character device); refusing to replace it"},
		{"dangling link", dangling, nil, dangling + ": is a symbolic link to a missing file; refusing to write through it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckOutput(tc.path, tc.inputs...)
			var oe *OutputError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	err := WriteFile(dangling, []byte("x"), 0o644)
	require.Error(t, err)
	assert.False(t, errors.As(err, new(*OutputError)), "%v", err)
}
