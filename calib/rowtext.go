package calib

import (
	"bytes"
	"strings"
)

// cutRows takes the CSV rows of a calibration file's tables out of the
// text that the TOML decoder reads, so that the decoder lexes the keys and
// provenance only (the rows are 95% of a 6 MB embedded file, and were
// most of its decode time). A rows string is cut only where TOML would
// decode it to its own bytes: the line `rows = """` alone in a [[table]],
// content lines of ASCII free of backslashes, quotes, carriage returns and
// control characters other than tab, and the closing `"""` alone on its line.
// Its value is then the content lines, each ending in "\n". The text
// handed to the decoder keeps every line (the content lines are emptied),
// so the decoder's errors keep their line numbers; any other rows string
// is left to the decoder.
//
// cut[i] is table i's rows string when it was cut; ok[i] says so. A table
// whose rows were cut decodes to n empty lines (n = its content lines),
// which pasteRows checks before it puts the rows back.
type cutText struct {
	text  []byte
	rows  []string
	lines []int // content lines of each cut rows string
	ok    []bool
}

func cutRows(data []byte) cutText {
	var c cutText
	out := make([]byte, 0, len(data)/16)
	section, inML := "", ""
	table := -1
	rest := data
	for len(rest) > 0 {
		line, next := nextLine(rest)
		rest = next
		out = append(out, line...)
		if inML != "" {
			if bytes.Contains(line, []byte(inML)) {
				inML = ""
			}
			continue
		}
		t := strings.TrimSpace(string(trimEOL(line)))
		if strings.HasPrefix(t, "[[") {
			section = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t"))
			if section == "table" {
				table++
				c.rows, c.lines, c.ok = append(c.rows, ""), append(c.lines, 0), append(c.ok, false)
			}
			continue
		}
		if strings.HasPrefix(t, "[") {
			section = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t"))
			continue
		}
		eq := strings.IndexByte(t, '=')
		if eq <= 0 || strings.HasPrefix(t, "#") {
			continue
		}
		if section == "table" && table >= 0 && !c.ok[table] && string(trimEOL(line)) == `rows = """` {
			if body, n, after, ok := cleanRows(rest); ok {
				c.rows[table], c.lines[table], c.ok[table] = body, n, true
				for range n {
					out = append(out, '\n')
				}
				rest = after
				continue
			}
		}
		val := t[eq+1:]
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(val, q)%2 == 1 {
				inML = q
			}
		}
	}
	c.text = out
	return c
}

// cleanRows reads the content lines of a rows string up to its closing
// `"""` line and reports whether they are decoded verbatim (cutRows); it
// returns the decoded value, the number of content lines and the text
// from the closing line on.
func cleanRows(rest []byte) (string, int, []byte, bool) {
	start := rest
	n := 0
	for len(rest) > 0 {
		line, next := nextLine(rest)
		if bytes.Equal(line, []byte("\"\"\"\n")) || bytes.Equal(line, []byte(`"""`)) {
			return string(start[:len(start)-len(rest)]), n, rest, true
		}
		if line[len(line)-1] != '\n' {
			return "", 0, nil, false // no closing line
		}
		for _, b := range line[:len(line)-1] {
			if b == '\\' || b == '"' || (b < 0x20 && b != '\t') || b >= 0x7f {
				return "", 0, nil, false
			}
		}
		n++
		rest = next
	}
	return "", 0, nil, false
}

// nextLine splits off the first line of b, with its "\n" when it has one.
func nextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

func trimEOL(line []byte) []byte {
	return bytes.TrimSuffix(line, []byte("\n"))
}

// pasteRows puts the cut rows back into the decoded tables; false when a
// decoded table does not hold the emptied lines cutRows left (the caller
// then decodes the whole text).
func (c *cutText) pasteRows(tables []wireTable) bool {
	if len(tables) != len(c.ok) {
		return false
	}
	for i := range tables {
		if !c.ok[i] {
			continue
		}
		if tables[i].Rows != strings.Repeat("\n", c.lines[i]) {
			return false
		}
		tables[i].Rows = c.rows[i]
	}
	return true
}
