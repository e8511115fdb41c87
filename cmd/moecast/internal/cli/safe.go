package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// safeWriter passes text to a terminal (or a pipe) with its control
// characters made visible: a scenario name, a device name or a trace's
// kernel name that holds ESC or OSC sequences (or C1 controls, U+0080 to
// U+009F) reaches the terminal as "\u001b[..." text, never as a command to
// it. Newlines, tabs and carriage returns (progress lines) pass. The form
// \u00XX keeps JSON valid: encoding/json escapes C0 controls itself and
// leaves C1 raw, which this writes as the JSON escape of the same rune.
// Every byte stream a command prints goes through one (RunIO).
type safeWriter struct {
	w       io.Writer
	pending bool // the last byte written was 0xC2, the first of a C1 rune
}

// Unwrap is the writer underneath (to ask whether it is a terminal).
func (s *safeWriter) Unwrap() io.Writer { return s.w }

func (s *safeWriter) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+8)
	for _, c := range p {
		if s.pending {
			s.pending = false
			if c >= 0x80 && c <= 0x9f {
				out = fmt.Appendf(out, `\u%04x`, c)
				continue
			}
			out = append(out, 0xc2)
		}
		switch {
		case c == 0xc2:
			s.pending = true
		case c == '\n' || c == '\t' || c == '\r':
			out = append(out, c)
		case c < 0x20 || c == 0x7f:
			out = fmt.Appendf(out, `\u%04x`, c)
		default:
			out = append(out, c)
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes a 0xC2 held back at the end of the output.
func (s *safeWriter) flush() {
	if s.pending {
		s.pending = false
		s.w.Write([]byte{0xc2})
	}
}

// visible is s with its control characters made visible, as safeWriter
// writes them: for text written past a safeWriter (the progress line's
// file name).
func visible(s string) string {
	var b strings.Builder
	w := &safeWriter{w: &b}
	io.WriteString(w, s)
	w.flush()
	return b.String()
}

// rawWriter is w without its safeWriters: for the progress line, whose
// text is moecast's own and whose escapes must reach the terminal.
func rawWriter(w io.Writer) io.Writer {
	for {
		s, ok := w.(*safeWriter)
		if !ok {
			return w
		}
		w = s.w
	}
}

// osFile is the *os.File under w (through safeWriters), if any.
func osFile(w io.Writer) (*os.File, bool) {
	for {
		switch x := w.(type) {
		case *os.File:
			return x, true
		case interface{ Unwrap() io.Writer }:
			w = x.Unwrap()
		default:
			return nil, false
		}
	}
}
