package view

import (
	"io"

	"github.com/moecast/moecast/report"
)

// The views of each result, for report.Generate: the page, the JSON value,
// the full CSV table, the text report, and the warnings (and skip notes)
// a CSV output prints on stderr.

// Views of a prediction.
func (pr *Prediction) Views() report.Views {
	return report.Views{Page: pr.Page, JSON: func() any { return pr.JSON() },
		CSV: func() *report.Table { return pr.Table(true) }, Text: pr.Text, Warnings: pr.Warnings}
}

// Views of a simulation.
func (sn *Simulation) Views() report.Views {
	return report.Views{Page: sn.Page, JSON: func() any { return sn.JSON() },
		CSV: func() *report.Table { return sn.Table(true) }, Text: sn.Text, Warnings: sn.Warnings}
}

// Views of a plan.
func (pl *Planned) Views() report.Views {
	return report.Views{Page: pl.Page, JSON: func() any { return pl.JSON() },
		CSV: pl.CSVTable, Text: pl.Text, Warnings: pl.Warnings}
}

// Views of a decode sweep.
func (sw *Swept) Views() report.Views {
	return report.Views{Page: sw.Page, JSON: func() any { return sw.JSON() },
		CSV: func() *report.Table { return sw.Table(true) }, Text: sw.Text, Warnings: sw.Warnings,
		Notes: sw.SkipLines()}
}

// Views of a serving sweep.
func (ss *ServingSwept) Views() report.Views {
	return report.Views{Page: ss.Page, JSON: func() any { return ss.JSON() },
		CSV: func() *report.Table { return ss.Table(true) }, Text: ss.Text, Warnings: ss.Warnings,
		Notes: ss.SkipLines()}
}

// Views of the corpus scorecard.
func (res *CorpusResult) Views() report.Views {
	return report.Views{Page: func() *report.Page { return CorpusPage(res) }, JSON: func() any { return CorpusJSONOf(res) },
		CSV: func() *report.Table { return CorpusRowsTable(res.Card) }, Text: func(w io.Writer) error { return CorpusText(w, res) },
		Warnings: res.Warnings}
}
