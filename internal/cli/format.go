package cli

import (
	"io"

	"github.com/moecast/moecast/report"
)

// Output formats accepted by --format.
const (
	formatText = string(report.Text)
	formatJSON = string(report.JSON)
	formatCSV  = string(report.CSV)
)

// checkFormat validates a --format value (an input error otherwise).
func checkFormat(f string) error {
	if _, err := report.ParseFormat(f); err != nil {
		return inputErrf("--format: %v", err)
	}
	return nil
}

// column and table are the CLI's names for report's table model, which
// every command renders (report.Table: built once, rendered as text, JSON
// or CSV).
type column = report.Column

type table report.Table

func (t *table) add(cells ...any) { (*report.Table)(t).Add(cells...) }

func (t *table) render(w io.Writer, f string) error {
	return (*report.Table)(t).Render(w, report.Format(f))
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error { return report.WriteJSON(w, v) }
