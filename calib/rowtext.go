package calib

import "strings"

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
	text  string
	rows  []string
	lines []int // content lines of each cut rows string
	ok    []bool
}

func cutRows(data string) cutText {
	var c cutText
	var out strings.Builder
	out.Grow(len(data) / 16)
	section, inML := "", ""
	table := -1
	rest := data
	for len(rest) > 0 {
		line, next := nextLine(rest)
		rest = next
		out.WriteString(line)
		if inML != "" {
			if strings.Contains(line, inML) {
				inML = ""
			}
			continue
		}
		t := strings.TrimSpace(line)
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
		if section == "table" && table >= 0 && !c.ok[table] && strings.TrimSuffix(line, "\n") == `rows = """` {
			if body, n, after, ok := cleanRows(rest); ok {
				c.rows[table], c.lines[table], c.ok[table] = body, n, true
				for range n {
					out.WriteByte('\n')
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
	c.text = out.String()
	return c
}

// cleanRows reads the content lines of a rows string up to its closing
// `"""` line and reports whether they are decoded verbatim (cutRows); it
// returns the decoded value (a substring of rest), the number of content
// lines and the text from the closing line on.
func cleanRows(rest string) (string, int, string, bool) {
	start := rest
	n := 0
	for len(rest) > 0 {
		line, next := nextLine(rest)
		if line == "\"\"\"\n" || line == `"""` {
			return start[:len(start)-len(rest)], n, rest, true
		}
		if line[len(line)-1] != '\n' {
			return "", 0, "", false // no closing line
		}
		for i := range len(line) - 1 {
			if b := line[i]; b == '\\' || b == '"' || (b < 0x20 && b != '\t') || b >= 0x7f {
				return "", 0, "", false
			}
		}
		n++
		rest = next
	}
	return "", 0, "", false
}

// nextLine splits off the first line of s, with its "\n" when it has one.
func nextLine(s string) (line, rest string) {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i+1], s[i+1:]
	}
	return s, ""
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
