package cli

import (
	"fmt"
	"io"

	"github.com/moecast/moecast/internal/atomicfile"
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

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error { return report.WriteJSON(w, v) }

// output is what a command writes once its results are computed: an
// optional HTML report (html, page), then JSON, CSV (warnings, then notes,
// on stderr) or text (which prints its own warnings). One piece for every
// command, so they all order their outputs alike.
type output struct {
	html     string
	page     func() *report.Page
	json     func() any
	csv      func() *report.Table
	text     func(io.Writer) error
	warnings []string
	notes    []string // further stderr lines with CSV (a sweep's skip reasons)
	// inputs are files read that no argument names (a scenario's
	// calibration files): the HTML report is never written onto one.
	inputs []string
}

func (o output) write(s *streams, format string) error {
	if o.html != "" {
		if err := atomicfile.CheckOutput(o.html, o.inputs...); err != nil {
			return inputErrf("--html %w", err)
		}
		if err := writeHTML(s, o.html, o.page()); err != nil {
			return err
		}
	}
	switch format {
	case formatJSON:
		return writeJSON(s.Out, o.json())
	case formatCSV:
		for _, w := range o.warnings {
			fmt.Fprintln(s.Err, "warning: "+w)
		}
		for _, l := range o.notes {
			fmt.Fprintln(s.Err, l)
		}
		return o.csv().Render(s.Out, report.CSV)
	}
	return o.text(s.Out)
}
