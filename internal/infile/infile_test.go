package infile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadFile: regular files and "-" are read under their cap; what is
// not a regular file is refused without being opened (a FIFO would block);
// one byte past the cap is an *Error wrapping ErrTooLarge.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	exact := filepath.Join(dir, "exact")
	require.NoError(t, os.WriteFile(exact, bytes.Repeat([]byte("x"), 1024), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(exact, link))
	for _, tc := range []struct {
		name  string
		path  string
		stdin io.Reader
		limit int64
		want  int    // bytes read
		err   error  // errors.Is target
		msg   string // in the error
	}{
		{"file at its cap", exact, nil, 1024, 1024, nil, ""},
		{"link to a file", link, nil, 1024, 1024, nil, ""},
		{"file one byte past its cap", exact, nil, 1023, 0, ErrTooLarge, exact + ": is larger than 1023 bytes"},
		{"no cap", exact, nil, 0, 1024, nil, ""},
		{"stdin", Stdin, strings.NewReader("abc"), 4, 3, nil, ""},
		{"endless stdin", Stdin, zeros{}, 1 << 20, 0, ErrTooLarge, "standard input: is larger than 1 MiB"},
		{"fifo", fifo, nil, 1024, 0, ErrNotRegular, fifo + ": is a named pipe (FIFO), not a regular file"},
		{"directory", dir, nil, 1024, 0, ErrNotRegular, dir + ": is a directory"},
		{"character device", "/dev/zero", nil, 1024, 0, ErrNotRegular, "/dev/zero: is a character device"},
		{"missing", filepath.Join(dir, "nope"), nil, 1024, 0, os.ErrNotExist, "nope: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := ReadFile(tc.path, tc.stdin, tc.limit)
			if tc.err == nil {
				require.NoError(t, err)
				assert.Len(t, data, tc.want)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.err), "%v is not %v", err, tc.err)
			var e *Error
			assert.True(t, errors.As(err, &e))
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { return len(p), nil }

// TestCheckDepth: nesting is counted outside strings and comments, and
// refused past the cap with the line.
func TestCheckDepth(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string // "" = accepted
	}{
		{"table headers", "[a]\nx = 1\n[[b]]\ny = [1, [2, 3]]\n", ""},
		{"brackets in strings", `x = "[[[[[[" + '{{{{{{'` + "\n", ""},
		{"brackets in a comment", "# [[[[[[[[\nx = 1\n", ""},
		{"brackets in a multi-line string", "x = \"\"\"\n[[[[[[\n\"\"\"\ny = [[[[[[[1]]]]]]]\n", "t.toml:4: arrays and inline tables nest more than 5 levels deep"},
		{"inline tables", "x = {a = {b = {c = {d = {e = {f = 1}}}}}}\n", "t.toml:1:"},
		{"arrays on line 3", "a = 1\nb = 2\nc = [[[[[[1]]]]]]\n", "t.toml:3:"},
		{"escaped quote", `x = "\"[[[[[["` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDepth("t.toml", []byte(tc.src), 5)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var e *Error
			assert.ErrorAs(t, err, &e, "an *Error, so that callers classify it as bad input")
		})
	}
}

// FuzzCheckDepth: never panics, and never accepts input nested deeper than
// the cap outside strings (checked on inputs of brackets alone).
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{"[a]\nx = [1, [2]]\n", `x = "[[["`, "x = '''\n[[\n'''\n", "{{{{{{{{", "# [[[\n[[", `"\`, "'", `"""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckDepth("f", data, 4)
		if bytes.ContainsAny(data, "\"'#") {
			return
		}
		depth, max := 0, 0
		for _, c := range data {
			switch c {
			case '[', '{':
				depth++
				max = maxInt(max, depth)
			case ']', '}':
				if depth > 0 {
					depth--
				}
			}
		}
		if (max > 4) != (err != nil) {
			t.Fatalf("depth %d, err %v", max, err)
		}
	})
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestStat: a path that cannot be stat'ed is an *Error reading "path:
// cause" (the *fs.PathError's repetition of the path dropped); a directory
// is no error.
func TestStat(t *testing.T) {
	dir := t.TempDir()
	st, err := Stat(dir)
	require.NoError(t, err)
	assert.True(t, st.IsDir())
	missing := filepath.Join(dir, "missing")
	_, err = Stat(missing)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, missing+": no such file or directory", err.Error())
	assert.ErrorIs(t, err, os.ErrNotExist)
}
