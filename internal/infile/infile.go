// Package infile opens moecast's input files. Every reader (scenario,
// config.json, calibration file, rules, trace, bench result) goes through
// it, so they all refuse the same things: what is not a regular file (a
// FIFO, a device such as /dev/zero, a socket, a directory), which would
// block forever or never end, and more bytes than the reader's cap. "-"
// is standard input, read under the same cap.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Stdin is the name that reads standard input.
const Stdin = "-"

// Size caps of moecast's inputs: far above any real file of the kind, far
// below what exhausts a machine of a few GB.
const (
	MaxScenario    = 4 << 20   // a scenario TOML file
	MaxModelConfig = 16 << 20  // an HF config.json
	MaxCalibration = 256 << 20 // a calibration TOML file
	MaxRules       = 4 << 20   // a trace classification rules file
	MaxText        = 64 << 20  // a benchmark tool's text log (nccl-tests)
	MaxCSV         = 1 << 30   // a perf-database CSV (streamed, counted)
	MaxRequestLog  = 1 << 30   // a request log to replay (workload.trace, --workload)
)

var (
	// ErrNotRegular: the input is not a regular file (nor "-").
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge: the input holds more bytes than its reader's cap.
	ErrTooLarge = errors.New("is larger than")
)

// Error is an input file that cannot be read as one.
type Error struct {
	Name string // the path as given; "standard input" for "-"
	Msg  string
	Err  error // ErrNotRegular, ErrTooLarge or the OS's error
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Name + ": " + e.Msg
	}
	return e.Name + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// displayName is how errors name an input.
func displayName(name string) string {
	if name == Stdin {
		return "standard input"
	}
	return name
}

// Check returns an *Error unless name is "-" or a regular file (or a link
// to one). It does not open the file, so a FIFO is refused without
// blocking.
func Check(name string) error {
	if name == Stdin {
		return nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return &Error{Name: name, Err: unwrapPath(err)}
	}
	if !st.Mode().IsRegular() {
		return &Error{Name: name, Err: ErrNotRegular,
			Msg: fmt.Sprintf("is %s, not a regular file; give a file (or - for standard input)", Kind(st.Mode()))}
	}
	return nil
}

// Stat is os.Stat of an input path of any kind (a file or a directory);
// its failure is an *Error naming name with the OS's cause ("x: no such
// file or directory").
func Stat(name string) (fs.FileInfo, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, &Error{Name: name, Err: unwrapPath(err)}
	}
	return st, nil
}

// Open opens name ("-": stdin) for reading, refusing what Check refuses;
// reads past limit bytes fail with an *Error wrapping ErrTooLarge (limit
// <= 0: no cap, for inputs that are streamed). Closing the result closes
// the file, never stdin.
func Open(name string, stdin io.Reader, limit int64) (io.ReadCloser, error) {
	if err := Check(name); err != nil {
		return nil, err
	}
	var r io.Reader
	var c io.Closer = io.NopCloser(nil)
	if name == Stdin {
		if stdin == nil {
			stdin = os.Stdin
		}
		r = stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, &Error{Name: name, Err: unwrapPath(err)}
		}
		r, c = f, f
	}
	if limit > 0 {
		r = &capped{r: r, left: limit, limit: limit, name: displayName(name)}
	}
	return readCloser{r, c}, nil
}

// ReadFile reads all of name ("-": stdin) under limit bytes.
func ReadFile(name string, stdin io.Reader, limit int64) ([]byte, error) {
	rc, err := Open(name, stdin, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, &Error{Name: displayName(name), Err: err}
	}
	return data, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// capped fails the read that would pass its limit.
type capped struct {
	r           io.Reader
	left, limit int64
	name        string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a file of exactly limit bytes from a longer one.
		var b [1]byte
		if n, _ := c.r.Read(b[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &Error{Name: c.name, Err: ErrTooLarge,
			Msg: fmt.Sprintf("is larger than %s, the most this input may hold; is it the right file?", Size(c.limit))}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// Size renders a byte count in binary units ("4 MiB").
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kind names a file mode that is not a regular file.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file"
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadFS is ReadFile for a file of fsys (a corpus read through os.DirFS):
// the same refusals, the same cap.
func ReadFS(fsys fs.FS, name string, limit int64) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, &Error{Name: name, Err: unwrapPath(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Name: name, Err: ErrNotRegular,
			Msg: fmt.Sprintf("is %s, not a regular file; give a file", Kind(st.Mode()))}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, &Error{Name: name, Err: unwrapPath(err)}
	}
	defer f.Close()
	var r io.Reader = f
	if limit > 0 {
		r = &capped{r: f, left: limit, limit: limit, name: name}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, &Error{Name: name, Err: err}
	}
	return data, nil
}
