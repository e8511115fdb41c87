// Package atomicfile writes output files atomically: the data goes to a
// temporary file in the target's directory, is synced, and is renamed over
// the target only when complete, so a reader never sees half a file and a
// failed write leaves the old file (or none) in place.
//
// An output never damages anything: a destination that exists and is not a
// regular file (a directory, FIFO, socket or device node, or a symbolic link
// to one) is refused with ErrNotRegular, and a destination that is one of
// the command's inputs with ErrIsInput (CheckOutput), or the file its
// standard output or error goes to with ErrIsStdout. A symbolic link to a
// regular file is kept: the file it points to is replaced. Temporary files
// of writes in progress are removed on error and, once the program has
// called HandleSignals, on SIGINT and SIGTERM too.
package atomicfile

import (
	"errors"
	"fmt"
	"github.com/moecast/moecast/internal/infile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Errors of CheckOutput and Write that are the caller's input; test with
// errors.Is.
var (
	ErrNotRegular = errors.New("exists and is not a regular file")
	ErrIsInput    = errors.New("is one of the inputs")
	ErrIsStdout   = errors.New("is where this command's standard output or error goes")
)

// OutputError is an output path that CheckOutput refuses: the caller's
// input (a file that may not be written, or one that is an input). Its
// text is its wrapped error's.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// CheckOutput checks, before any work, that path may be written by Write:
// it does not exist, or it is a regular file (possibly through a symbolic
// link) that is none of inputs (the same file by os.SameFile; inputs that
// cannot be stat'ed are skipped, as their reader reports them). The error
// is an *OutputError that names path (and wraps ErrNotRegular or
// ErrIsInput where those are the cause).
func CheckOutput(path string, inputs ...string) error {
	if err := checkOutput(path, inputs...); err != nil {
		return &OutputError{Err: err}
	}
	return nil
}

// checkOutput is CheckOutput with the cause untyped: Write's own check,
// whose failures other than ErrNotRegular are not the caller's input.
func checkOutput(path string, inputs ...string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, lerr := os.Lstat(path); lerr == nil {
			return fmt.Errorf("%s: is a symbolic link to a missing file; refusing to write through it", path)
		}
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s: %w (%s); refusing to replace it", path, ErrNotRegular, infile.Kind(st.Mode()))
	}
	// A report written over the file the command's own output goes to
	// (`--html /dev/stdout > r.txt`, `--html r.txt > r.txt`) would
	// replace it with the report and leave the text written to an
	// unlinked file: one of the two outputs lost, exit 0.
	for _, f := range []*os.File{os.Stdout, os.Stderr} {
		if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
			return fmt.Errorf("%s: %w; refusing to replace it", path, ErrIsStdout)
		}
	}
	for _, in := range inputs {
		ist, err := os.Stat(in)
		if err == nil && os.SameFile(st, ist) {
			if filepath.Clean(in) == filepath.Clean(path) {
				return fmt.Errorf("%s: %w; refusing to overwrite it", path, ErrIsInput)
			}
			return fmt.Errorf("%s: %w (%s); refusing to overwrite it", path, ErrIsInput, in)
		}
	}
	return nil
}

// unwrapPath drops the *fs.PathError wrapper (whose text repeats the
// path) from err.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// target is the file a write to path replaces: path itself, or the file a
// symbolic link at path points to (so that the link survives).
func target(path string) (string, error) {
	if st, err := os.Lstat(path); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	t, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	return t, nil
}

// Write creates or replaces path with what fn writes. If fn or any step
// fails, the temporary file is removed and path is untouched. A destination
// that is not a regular file is refused (ErrNotRegular). An existing file
// keeps its permission bits; a new one gets perm.
func Write(path string, perm os.FileMode, fn func(w io.Writer) error) (err error) {
	if err := checkOutput(path); err != nil {
		return fmt.Errorf("write %w", err)
	}
	dst, err := target(path)
	if err != nil {
		return fmt.Errorf("write %w", err)
	}
	if st, err := os.Stat(dst); err == nil {
		perm = st.Mode().Perm()
	}
	dir := filepath.Dir(dst)
	tmp, err := create(dir, "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		forget(tmp.Name())
	}()
	if err = fn(tmp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	// Checked again just before the rename: something may have been put
	// at the destination while fn ran.
	if st, serr := os.Lstat(dst); serr == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("write %s: %w (%s); refusing to replace it", path, ErrNotRegular, infile.Kind(st.Mode()))
		return err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// WriteFile is Write for a byte slice.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
