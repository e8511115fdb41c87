// Package report is the one output model of moecast: a Table built once
// and rendered as text, CSV or JSON (after google/pprof's internal/report
// and golang/perf's benchstat benchtab), and the reports built from the
// libraries' results: the per-rank trace summary with its cross-rank
// aggregation (Trace), the kernel list of a trace (Kernels). The JSON
// types here are contracts of `moecast ... --format json`: extend them,
// never rename a field. Numbers are written in the unit their field names
// (`*_ms` milliseconds, `*_us` microseconds, `share` a fraction).
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Format is an output format.
type Format string

// The output formats of --format.
const (
	Text Format = "text"
	JSON Format = "json"
	CSV  Format = "csv"
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, CSV:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want text, json or csv)", s)
}

// Column is one column of a table.
type Column struct {
	Name string // header in text, CSV and JSON (use snake_case with the unit: "step_ms")
	// Text is the fmt verb for numbers in text output ("%.2f"); "" means
	// %v. CSV and JSON always write full precision.
	Text string
	Left bool // left-align in text (default: numbers right, strings left)
}

// Table is the one table model every command renders as text, JSON or CSV:
// built once, rendered in any format. Cells hold string, int, float64, bool
// or nil (an empty cell; JSON null).
type Table struct {
	Columns []Column
	Rows    [][]any
}

// Add appends a row; it panics if the row has the wrong width (a
// programmer error).
func (t *Table) Add(cells ...any) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("table row has %d cells, want %d", len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// Render writes t in format f; any format other than JSON and CSV is text.
func (t *Table) Render(w io.Writer, f Format) error {
	switch f {
	case JSON:
		return t.renderJSON(w)
	case CSV:
		return t.renderCSV(w)
	}
	return t.renderText(w)
}

// renderText writes aligned columns separated by two spaces, with a header.
func (t *Table) renderText(w io.Writer) error {
	cells := make([][]string, 0, len(t.Rows)+1)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	cells = append(cells, head)
	for _, r := range t.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			row[i] = textCell(v, t.Columns[i].Text)
		}
		cells = append(cells, row)
	}
	width := make([]int, len(t.Columns))
	for _, r := range cells {
		for i, s := range r {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	// A column is left-aligned when asked, or when its first cell is text.
	left := make([]bool, len(t.Columns))
	for i, c := range t.Columns {
		left[i] = c.Left || (len(t.Rows) > 0 && isText(t.Rows[0][i]))
	}
	var b strings.Builder
	for _, r := range cells {
		b.Reset()
		for i, s := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(s)))
			if i > 0 {
				b.WriteString("  ")
			}
			if left[i] {
				b.WriteString(s)
				if i < len(r)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad)
				b.WriteString(s)
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// isText reports whether v renders as a word (left-aligned): strings and bools.
func isText(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	return false
}

func textCell(v any, verb string) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	if verb == "" {
		verb = "%v"
	}
	return fmt.Sprintf(verb, v)
}

// renderCSV writes a header row and one row per table row; numbers at full
// precision.
func (t *Table) renderCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Name
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, len(t.Columns))
	for _, r := range t.Rows {
		for i, v := range r {
			row[i] = csvCell(v)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvCell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return SafeCSV(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// SafeCSV neutralises a text cell that a spreadsheet would run as a
// formula: one that starts with '=', '+', '-', '@', a tab or a carriage
// return gets a leading apostrophe (OWASP's CSV-injection advice), unless
// it is a plain number ("-3", "+0.5%"), which no spreadsheet runs.
func SafeCSV(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err == nil {
		return s
	}
	return "'" + s
}

// renderJSON writes an array of objects, one per row, keys in column order.
func (t *Table) renderJSON(w io.Writer) error {
	var b strings.Builder
	b.WriteString("[")
	for ri, r := range t.Rows {
		if ri > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  {")
		for i, v := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			k, _ := json.Marshal(t.Columns[i].Name)
			b.Write(k)
			b.WriteString(": ")
			if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
				v = nil // JSON has no NaN/Inf
			}
			val, err := json.Marshal(v)
			if err != nil {
				return err
			}
			b.Write(val)
		}
		b.WriteString("}")
	}
	if len(t.Rows) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
