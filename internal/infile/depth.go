package infile

import (
	"fmt"
	"strconv"
)

// MaxDepth bounds the nesting of arrays and inline tables in a TOML input:
// real files nest a few levels; 100,000 levels make a decoder recurse
// 100,000 deep.
const MaxDepth = 64

// CheckDepth returns an error naming name's line where data nests arrays
// or inline tables ('[' '{' outside strings and comments) deeper than max,
// an *Error whose Name is "name:line".
// Table headers ([a.b], [[a]]) open and close on their line, so they count
// as one or two levels there.
func CheckDepth(name string, data []byte, max int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			i--
		case '"', '\'':
			// A basic or literal string, single or triple quoted.
			q := []byte{c}
			if i+2 < len(data) && data[i+1] == c && data[i+2] == c {
				q = []byte{c, c, c}
			}
			i += len(q)
			for i < len(data) {
				if data[i] == '\n' {
					line++
				}
				if c == '"' && data[i] == '\\' {
					i += 2
					continue
				}
				if data[i] == c && (len(q) == 1 || (i+2 < len(data) && data[i+1] == c && data[i+2] == c)) {
					i += len(q) - 1
					break
				}
				if len(q) == 1 && data[i] == '\n' {
					break // an unterminated string: the decoder says so
				}
				i++
			}
		case '[', '{':
			if depth++; depth > max {
				return &Error{Name: name + ":" + strconv.Itoa(line), Msg: fmt.Sprintf("arrays and inline tables nest more than %d levels deep", max)}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
