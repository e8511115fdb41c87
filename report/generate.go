package report

import (
	"fmt"
	"io"
)

// Views are the renderings of one command's result, one per output format
// (pprof's report.Generate picks the view of one report): the value
// --format json writes, the table --format csv writes, the text report and
// the HTML page. Warnings go to stderr before a CSV table (the text report
// prints its own, JSON holds them); Notes follow them (a sweep's skip
// reasons).
type Views struct {
	Page     func() *Page
	JSON     func() any
	CSV      func() *Table
	Text     func(io.Writer) error
	Warnings []string
	Notes    []string
}

// Generate writes the view of format f to w: JSON, CSV (its warnings and
// notes on errw, one a line, warnings prefixed "warning: ") or text. The
// HTML page is a file the caller writes (Page.Write).
func Generate(w, errw io.Writer, v Views, f Format) error {
	switch f {
	case JSON:
		return WriteJSON(w, v.JSON())
	case CSV:
		for _, s := range v.Warnings {
			fmt.Fprintln(errw, "warning: "+s)
		}
		for _, l := range v.Notes {
			fmt.Fprintln(errw, l)
		}
		return v.CSV().Render(w, CSV)
	}
	return v.Text(w)
}
