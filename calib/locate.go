package calib

import (
	"strings"

	"github.com/BurntSushi/toml"
)

// locator finds the lines of [[table]] headers, their rows keys and other
// keys in a calibration file's text, so that errors found after decoding
// (which keeps no positions) still name file:line. It tracks multi-line
// strings so that CSV rows are never read as keys.
type locator struct {
	tables   []int // line of each [[table]] header
	rows     []int // line of each table's rows key (0 if none)
	assigned []assign
}

type assign struct {
	section string // "", "provenance", "table", "table.provenance"
	key     string
	line    int
}

func locate(data string) locator {
	var l locator
	section := ""
	inML := ""
	rest := data
	for ln := 1; ; ln++ {
		if inML != "" {
			// the multi-line string ends on the first line from here
			// that holds its delimiter: skip to the line after it
			i := strings.Index(rest, inML)
			if i < 0 {
				break
			}
			ln += strings.Count(rest[:i], "\n")
			inML = ""
			j := strings.IndexByte(rest[i:], '\n')
			if j < 0 {
				break
			}
			rest = rest[i+j+1:]
			continue
		}
		if rest == "" {
			break
		}
		line := rest
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			line, rest = rest[:j], rest[j+1:]
		} else {
			rest = ""
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[[") {
			section = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t"))
			if section == "table" {
				l.tables = append(l.tables, ln)
				l.rows = append(l.rows, 0)
			}
			continue
		}
		if strings.HasPrefix(t, "[") {
			section = strings.TrimSpace(strings.Trim(strings.SplitN(t, "#", 2)[0], "[] \t"))
			continue
		}
		if eq := strings.IndexByte(t, '='); eq > 0 && !strings.HasPrefix(t, "#") {
			key := strings.Trim(strings.TrimSpace(t[:eq]), `"'`)
			l.assigned = append(l.assigned, assign{section: section, key: key, line: ln})
			if section == "table" && key == "rows" && len(l.rows) > 0 {
				l.rows[len(l.rows)-1] = ln
			}
			val := t[eq+1:]
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(val, q)%2 == 1 {
					inML = q
				}
			}
		}
	}
	return l
}

func (l locator) tableLine(i int) int {
	if i < len(l.tables) {
		return l.tables[i]
	}
	return 0
}

func (l locator) rowsLine(i int) int {
	if i < len(l.rows) {
		return l.rows[i]
	}
	return 0
}

// keyLine is the first line assigning key k in its section, or 0.
func (l locator) keyLine(k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	sec := strings.Join(k[:len(k)-1], ".")
	for _, a := range l.assigned {
		if a.section == sec && a.key == k[len(k)-1] {
			return a.line
		}
	}
	// A whole unknown section: find its header.
	for _, a := range l.assigned {
		if strings.HasPrefix(a.section, k.String()) {
			return a.line
		}
	}
	return 0
}
