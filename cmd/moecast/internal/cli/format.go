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
// optional HTML report (html, views.Page), then report.Generate's view of
// the format. One piece for every command, so they all order their outputs
// alike.
type output struct {
	html  string
	views report.Views
	// inputs are files read that no argument names (a scenario's
	// calibration files): the HTML report is never written onto one.
	inputs []string
}

func (o output) write(s *streams, format string) error {
	if o.html != "" {
		if err := atomicfile.CheckOutput(o.html, o.inputs...); err != nil {
			return fmt.Errorf("--html %w", err) // an *atomicfile.OutputError
		}
		if err := writeHTML(s, o.html, o.views.Page()); err != nil {
			return err
		}
	}
	return report.Generate(s.Out, s.Err, o.views, report.Format(format))
}

// printWarnings writes each warning on its own line of w, after "warning: ".
func printWarnings(w io.Writer, warns []string) {
	for _, m := range warns {
		fmt.Fprintln(w, "warning: "+m)
	}
}
