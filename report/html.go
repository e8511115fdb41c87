package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
)

// Page is a self-contained HTML report: a header naming what was
// predicted (scenario, box, layout, calibration provenance), warnings at
// the top, then sections, each with text, a chart and tables. Every
// command writes its --html report as a Page (predict, sweep, plan; later
// simulate and validate): build the sections, then Write.
//
// The file holds everything it shows: styles inline, charts as inline SVG
// drawn by gonum/plot, no script, font or style from anywhere else, so it
// opens offline in any browser and prints to PDF.
type Page struct {
	Title    string
	Header   []Field
	Warnings []string
	Sections []Section
}

// Field is one labelled line of a page header ("box", "8x h200-sxm ...").
type Field struct {
	Label, Value string
}

// Section is one part of a page: its title, a paragraph, a chart (drawn,
// with the table of its numbers under it) and further tables, in that
// order; any may be empty.
type Section struct {
	Title  string
	Text   string
	Chart  Chart
	Tables []Titled
}

// Titled is a table with a caption.
type Titled struct {
	Caption string
	Table   *Table
}

// Write renders p as one HTML document.
func (p *Page) Write(w io.Writer) error {
	type tableView struct {
		Caption string
		Head    []string
		Numeric []bool
		Rows    [][]string
	}
	type sectionView struct {
		Title, Text string
		Kind        string
		SVG         template.HTML
		Tables      []tableView
	}
	view := struct {
		Title    string
		Header   []Field
		Warnings []string
		Sections []sectionView
	}{Title: p.Title, Header: p.Header, Warnings: p.Warnings}
	tv := func(caption string, t *Table) tableView {
		v := tableView{Caption: caption}
		for _, c := range t.Columns {
			v.Head = append(v.Head, c.Name)
		}
		v.Numeric = make([]bool, len(t.Columns))
		for ci := range t.Columns {
			v.Numeric[ci] = len(t.Rows) > 0
			for _, r := range t.Rows {
				if _, ok := r[ci].(string); ok {
					v.Numeric[ci] = false
				}
			}
		}
		for _, r := range t.Rows {
			row := make([]string, len(r))
			for i, c := range r {
				row[i] = htmlCell(c, t.Columns[i].Text)
			}
			v.Rows = append(v.Rows, row)
		}
		return v
	}
	for si, s := range p.Sections {
		sv := sectionView{Title: s.Title, Text: s.Text}
		if s.Chart != nil {
			svg, err := SVG(s.Chart)
			if err != nil {
				return fmt.Errorf("html report: section %d (%s): %w", si+1, s.Title, err)
			}
			sv.SVG, sv.Kind = template.HTML(svg), s.Chart.Kind() // #nosec: drawn by gonum/plot from numbers; text is escaped by vgsvg
			sv.Tables = append(sv.Tables, tv("The numbers of this chart", s.Chart.Data()))
		}
		for _, t := range s.Tables {
			sv.Tables = append(sv.Tables, tv(t.Caption, t.Table))
		}
		view.Sections = append(view.Sections, sv)
	}
	return pageTemplate.Execute(w, view)
}

func htmlCell(v any, verb string) string {
	switch x := v.(type) {
	case nil:
		return "–"
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "–"
		}
		if verb == "" {
			return strconv.FormatFloat(x, 'g', 6, 64)
		}
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	return textCell(v, verb)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.3em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
dl.header { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; margin: 1em 0; }
dl.header dt { font-weight: 600; }
dl.header dd { margin: 0; font-family: ui-monospace, "Liberation Mono", monospace; font-size: 0.9em; }
.warnings { background: #fff4e5; border-left: 4px solid #d55e00; padding: 0.5em 1em; margin: 1em 0; }
.warnings li { margin: 0.2em 0; }
figure { margin: 1em 0; }
figure svg { width: 100%; max-width: 46em; height: auto; display: block; }
.tablewrap { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
caption { text-align: left; font-style: italic; padding-bottom: 0.3em; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.5em; }
th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
p.text { max-width: 50em; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } figure, table { break-inside: avoid; } }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<dl class="header">
{{- range .Header}}
<dt>{{.Label}}</dt><dd>{{.Value}}</dd>
{{- end}}
</dl>
{{- if .Warnings}}
<div class="warnings" id="warnings"><strong>Warnings</strong>
<ul>
{{- range .Warnings}}
<li>{{.}}</li>
{{- end}}
</ul>
</div>
{{- end}}
{{- range .Sections}}
<section>
<h2>{{.Title}}</h2>
{{- if .Text}}
<p class="text">{{.Text}}</p>
{{- end}}
{{- if .SVG}}
<figure class="chart" data-kind="{{.Kind}}">
{{.SVG}}
</figure>
{{- end}}
{{- range .Tables}}
<div class="tablewrap"><table>
{{- if .Caption}}
<caption>{{.Caption}}</caption>
{{- end}}
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- $num := .Numeric}}
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if index $num $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
</section>
{{- end}}
</body>
</html>
`))
