package report

import (
	"fmt"
	"io"
	"slices"
)

// Views are the renderings of one command's result, one per output format
// (pprof's report.Generate picks the view of one report): the value
// --format json writes, the table --format csv writes, the text report and
// the HTML page. Warnings go to stderr before a CSV table (the text report
// prints its own, JSON holds them), or before the formats WarnOn lists,
// or after the formats WarnAfter lists (a text report that ends with its
// warnings: validate bench's); Notes follow them (a sweep's skip reasons).
//
// A result that renders every format itself (one Table, the trace
// summary and kernel tables) sets Render instead of JSON, CSV and Text.
type Views struct {
	Page     func() *Page
	JSON     func() any
	CSV      func() *Table
	Text     func(io.Writer) error
	Render   func(io.Writer, Format) error
	Warnings []string
	Notes    []string
	WarnOn   []Format // the formats before which Warnings go to stderr; nil: CSV
	// WarnAfter are the formats after whose view (once written without
	// error) Warnings and Notes go to stderr; a format in both is warned
	// before only.
	WarnAfter []Format
}

// Generate writes the view of format f to w: JSON, CSV (its warnings and
// notes on errw, one a line, warnings prefixed "warning: ") or text. The
// HTML page is a file the caller writes (Page.Write).
func Generate(w, errw io.Writer, v Views, f Format) error {
	before := v.warnOn(f)
	if before {
		v.warn(errw)
	}
	if err := v.generate(w, f); err != nil {
		return err
	}
	if !before && slices.Contains(v.WarnAfter, f) {
		v.warn(errw)
	}
	return nil
}

// generate writes the view of format f.
func (v *Views) generate(w io.Writer, f Format) error {
	switch {
	case v.Render != nil:
		return v.Render(w, f)
	case f == JSON:
		return WriteJSON(w, v.JSON())
	case f == CSV:
		return v.CSV().Render(w, CSV)
	}
	return v.Text(w)
}

// warn writes the warnings and notes, one a line.
func (v *Views) warn(errw io.Writer) {
	for _, s := range v.Warnings {
		fmt.Fprintln(errw, "warning: "+s)
	}
	for _, l := range v.Notes {
		fmt.Fprintln(errw, l)
	}
}

// warnOn says whether Generate prints the warnings before format f.
func (v *Views) warnOn(f Format) bool {
	if v.WarnOn == nil {
		return f == CSV
	}
	return slices.Contains(v.WarnOn, f)
}
