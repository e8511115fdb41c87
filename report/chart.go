package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart is a figure of an HTML page: drawn as inline SVG with gonum/plot,
// and the same numbers as a Table (shown under the chart, and the golden
// data of its tests).
type Chart interface {
	// Kind names the chart type ("line", "stacked-bars", "pareto").
	Kind() string
	// Data is the table of the numbers plotted, one row per plotted value.
	Data() *Table
	plot() (*plot.Plot, error)
}

// Axis is a chart axis: its label and the unit of its values ("ms",
// "tokens/s"), shown as "label (unit)".
type Axis struct {
	Label, Unit string
	// Log draws the axis on a log scale (every value must be > 0).
	Log bool
}

func (a Axis) title() string {
	if a.Unit == "" {
		return a.Label
	}
	return a.Label + " (" + a.Unit + ")"
}

// column is the axis as a table column name: "label_unit" in snake case.
func (a Axis) column() string {
	s := a.Label
	if a.Unit != "" {
		s += " " + a.Unit
	}
	return snake(s)
}

func snake(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case r == '/':
			b.WriteString("_per_")
			under = true
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimSuffix(strings.ReplaceAll(b.String(), "__", "_"), "_")
}

// Series is one line of a LineChart; Lo and Hi, when set (same length as
// Y), draw its interval as a band.
type Series struct {
	Name      string
	X, Y      []float64
	Lo, Hi    []float64
	NoMarkers bool
}

// LineChart is Y against X for one or more series, with intervals.
type LineChart struct {
	Title  string
	X, Y   Axis
	Series []Series
}

// Kind implements Chart.
func (*LineChart) Kind() string { return "line" }

// Data implements Chart: series, x, y (and lo, hi when any series has an
// interval).
func (c *LineChart) Data() *Table {
	band := false
	for _, s := range c.Series {
		band = band || len(s.Lo) > 0
	}
	t := &Table{Columns: []Column{{Name: "series"}, {Name: c.X.column(), Text: "%g"}, {Name: c.Y.column(), Text: "%.4g"}}}
	if band {
		t.Columns = append(t.Columns, Column{Name: c.Y.column() + "_lo", Text: "%.4g"}, Column{Name: c.Y.column() + "_hi", Text: "%.4g"})
	}
	for _, s := range c.Series {
		for i := range s.X {
			row := []any{s.Name, s.X[i], s.Y[i]}
			if band {
				var lo, hi any
				if len(s.Lo) > i {
					lo, hi = s.Lo[i], s.Hi[i]
				}
				row = append(row, lo, hi)
			}
			t.Add(row...)
		}
	}
	return t
}

func (c *LineChart) plot() (*plot.Plot, error) {
	p := newPlot(c.Title, c.X, c.Y)
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) || (len(s.Lo) > 0 && (len(s.Lo) != len(s.Y) || len(s.Hi) != len(s.Y))) {
			return nil, fmt.Errorf("chart %q: series %q has mismatched lengths", c.Title, s.Name)
		}
		col := palette(i)
		if len(s.Lo) > 0 && len(s.X) > 0 {
			band := make(plotter.XYs, 0, 2*len(s.X))
			for j := range s.X {
				band = append(band, plotter.XY{X: s.X[j], Y: s.Hi[j]})
			}
			for j := len(s.X) - 1; j >= 0; j-- {
				band = append(band, plotter.XY{X: s.X[j], Y: s.Lo[j]})
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			poly.Color = withAlpha(col, 0x40)
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		xy := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xy[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = col, vg.Points(1.5)
		p.Add(l)
		if !s.NoMarkers {
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
			p.Add(sc)
			p.Legend.Add(s.Name, l, sc)
		} else {
			p.Legend.Add(s.Name, l)
		}
	}
	return p, nil
}

// Stack is one layer of a StackedBars chart.
type Stack struct {
	Name   string
	Values []float64 // one per bar, >= 0
}

// StackedBars is one bar per label, each the sum of its stacks.
type StackedBars struct {
	Title  string
	X      Axis     // the bars' axis (Label and Unit name the labels)
	Labels []string // one per bar
	Y      Axis
	Stacks []Stack
	// Budget, when > 0, is drawn as a horizontal line named BudgetName
	// (the memory a GPU may use): bars above it do not fit.
	Budget     float64
	BudgetName string
}

// Kind implements Chart.
func (*StackedBars) Kind() string { return "stacked-bars" }

// Data implements Chart: one row per bar, one column per stack.
func (c *StackedBars) Data() *Table {
	t := &Table{Columns: []Column{{Name: c.X.column()}}}
	for _, s := range c.Stacks {
		t.Columns = append(t.Columns, Column{Name: snake(s.Name) + "_" + snake(c.Y.Unit), Text: "%.4g"})
	}
	for i, l := range c.Labels {
		row := []any{l}
		for _, s := range c.Stacks {
			row = append(row, s.Values[i])
		}
		t.Add(row...)
	}
	return t
}

func (c *StackedBars) plot() (*plot.Plot, error) {
	x := c.X
	x.Log = false
	p := newPlot(c.Title, x, c.Y)
	w := vg.Points(max(6, min(40, 360/float64(max(1, len(c.Labels))))))
	var below *plotter.BarChart
	for i, s := range c.Stacks {
		if len(s.Values) != len(c.Labels) {
			return nil, fmt.Errorf("chart %q: stack %q has %d values for %d bars", c.Title, s.Name, len(s.Values), len(c.Labels))
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return nil, fmt.Errorf("chart %q: stack %q: %w", c.Title, s.Name, err)
		}
		b.Color = palette(i)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	p.NominalX(c.Labels...)
	if c.Budget > 0 {
		f := plotter.NewFunction(func(float64) float64 { return c.Budget })
		f.Color, f.Width, f.Dashes = color.Black, vg.Points(1.2), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(f)
		p.Legend.Add(c.BudgetName, f)
		p.Y.Max = max(p.Y.Max, c.Budget*1.02)
	}
	return p, nil
}

// GroupedBars is one group of bars per label, one bar of each group per
// Stack (measured and predicted side by side, say).
type GroupedBars struct {
	Title  string
	X      Axis     // the groups' axis (Label and Unit name the labels)
	Labels []string // one per group
	Y      Axis
	Bars   []Stack // one bar per label in each; values >= 0
}

// Kind implements Chart.
func (*GroupedBars) Kind() string { return "grouped-bars" }

// Data implements Chart: one row per group, one column per bar (a value
// a bar lacks is nil; plot refuses such a chart).
func (c *GroupedBars) Data() *Table {
	t := &Table{Columns: []Column{{Name: c.X.column()}}}
	for _, s := range c.Bars {
		t.Columns = append(t.Columns, Column{Name: snake(s.Name) + "_" + snake(c.Y.Unit), Text: "%.4g"})
	}
	for i, l := range c.Labels {
		row := []any{l}
		for _, s := range c.Bars {
			var v any
			if i < len(s.Values) {
				v = s.Values[i]
			}
			row = append(row, v)
		}
		t.Add(row...)
	}
	return t
}

func (c *GroupedBars) plot() (*plot.Plot, error) {
	x := c.X
	x.Log = false
	p := newPlot(c.Title, x, c.Y)
	n := float64(max(1, len(c.Bars)))
	w := vg.Points(max(3, min(24, 360/(n*float64(max(1, len(c.Labels)))))))
	for i, s := range c.Bars {
		if len(s.Values) != len(c.Labels) {
			return nil, fmt.Errorf("chart %q: bars %q have %d values for %d groups", c.Title, s.Name, len(s.Values), len(c.Labels))
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Values), w)
		if err != nil {
			return nil, fmt.Errorf("chart %q: bars %q: %w", c.Title, s.Name, err)
		}
		b.Color = palette(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-(n-1)/2) * w
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	p.NominalX(c.Labels...)
	return p, nil
}

// ParetoPoint is one point of a Pareto chart.
type ParetoPoint struct {
	Name string
	X, Y float64
}

// Pareto plots every point in grey, the front as a line through its points
// and the recommended point marked (Best, when not nil).
type Pareto struct {
	Title  string
	X, Y   Axis
	Others []ParetoPoint // points off the front
	Front  []ParetoPoint
	Best   *ParetoPoint
}

// Kind implements Chart.
func (*Pareto) Kind() string { return "pareto" }

// Data implements Chart: the front points and the best, with their names
// (the other points are too many for a table; they are drawn only).
func (c *Pareto) Data() *Table {
	t := &Table{Columns: []Column{{Name: "point"}, {Name: "set"}, {Name: c.X.column(), Text: "%.1f"}, {Name: c.Y.column(), Text: "%.1f"}}}
	if c.Best != nil {
		t.Add(c.Best.Name, "best", c.Best.X, c.Best.Y)
	}
	for _, p := range c.Front {
		t.Add(p.Name, "front", p.X, p.Y)
	}
	return t
}

func (c *Pareto) plot() (*plot.Plot, error) {
	p := newPlot(c.Title, c.X, c.Y)
	xys := func(ps []ParetoPoint) plotter.XYs {
		out := make(plotter.XYs, len(ps))
		for i, q := range ps {
			out[i] = plotter.XY{X: q.X, Y: q.Y}
		}
		return out
	}
	if len(c.Others) > 0 {
		s, err := plotter.NewScatter(xys(c.Others))
		if err != nil {
			return nil, err
		}
		s.Color, s.Radius = color.Gray{Y: 0xa0}, vg.Points(1.5)
		p.Add(s)
		p.Legend.Add("other points", s)
	}
	if len(c.Front) > 0 {
		l, sc, err := plotter.NewLinePoints(xys(c.Front))
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = palette(0), vg.Points(1.5)
		sc.Color, sc.Shape, sc.Radius = palette(0), draw.CircleGlyph{}, vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add("Pareto front", l, sc)
	}
	if c.Best != nil {
		s, err := plotter.NewScatter(xys([]ParetoPoint{*c.Best}))
		if err != nil {
			return nil, err
		}
		s.Color, s.Shape, s.Radius = palette(1), draw.RingGlyph{}, vg.Points(7)
		s.GlyphStyle.Shape = draw.RingGlyph{}
		p.Add(s)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys([]ParetoPoint{*c.Best}), Labels: []string{"  best"}})
		if err != nil {
			return nil, err
		}
		p.Add(lb)
		p.Legend.Add("recommended", s)
	}
	return p, nil
}

// newPlot sets up a plot with titles, grid and log scales as asked.
func newPlot(title string, x, y Axis) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = x.title(), y.title()
	if x.Log {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if y.Log {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	p.Add(plotter.NewGrid())
	return p
}

// Size of every chart.
const (
	chartWidth  = 16 * vg.Centimeter
	chartHeight = 9 * vg.Centimeter
)

// SVG draws c as an SVG document without its XML prolog, ready to inline
// in HTML. Values that are not finite, or not > 0 on a log axis, are an
// error: a chart never draws a wrong point.
func SVG(c Chart) ([]byte, error) {
	if err := checkFinite(c); err != nil {
		return nil, err
	}
	p, err := c.plot()
	if err != nil {
		return nil, err
	}
	tickEnds(&p.X)
	tickEnds(&p.Y)
	// The legend goes under the plot, never over the data.
	leg := p.Legend
	p.Legend = plot.NewLegend()
	leg.Left, leg.Top = true, true
	r := leg.Rectangle(draw.Canvas{})
	legH := r.Max.Y - r.Min.Y
	if legH > 0 {
		legH += vg.Points(8)
	}
	canvas := vgsvg.New(chartWidth, chartHeight+legH)
	dc := draw.New(canvas)
	p.Draw(draw.Crop(dc, 0, 0, legH, 0))
	if legH > 0 {
		leg.Draw(draw.Crop(dc, vg.Points(36), 0, 0, -chartHeight-vg.Points(4)))
	}
	var b bytes.Buffer
	if _, err := canvas.WriteTo(&b); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg")); i > 0 {
		out = out[i:]
	}
	return out, nil
}

// checkFinite refuses NaN and Inf in c's data, and values <= 0 on log axes.
func checkFinite(c Chart) error {
	var xlog, ylog bool
	switch ch := c.(type) {
	case *LineChart:
		xlog, ylog = ch.X.Log, ch.Y.Log
	case *Pareto:
		xlog, ylog = ch.X.Log, ch.Y.Log
	case *StackedBars:
		ylog = ch.Y.Log
	case *GroupedBars:
		ylog = ch.Y.Log
	}
	t := c.Data()
	for ri, r := range t.Rows {
		for ci, v := range r {
			f, ok := v.(float64)
			if !ok {
				continue
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("chart %s: row %d, %s is %g", c.Kind(), ri+1, t.Columns[ci].Name, f)
			}
			logAxis := (ci == 1 && xlog && c.Kind() == "line") || (ci >= 2 && ylog && c.Kind() == "line") ||
				(ci == 2 && xlog && c.Kind() == "pareto") || (ci == 3 && ylog && c.Kind() == "pareto")
			if logAxis && !(f > 0) {
				return fmt.Errorf("chart %s: row %d, %s is %g on a log axis", c.Kind(), ri+1, t.Columns[ci].Name, f)
			}
		}
	}
	return nil
}

// palette is a colour-blind-safe qualitative palette (Okabe and Ito 2008).
func palette(i int) color.Color {
	cs := []color.RGBA{
		{0x00, 0x72, 0xb2, 0xff}, {0xd5, 0x5e, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff}, {0xe6, 0x9f, 0x00, 0xff},
		{0xcc, 0x79, 0xa7, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0xf0, 0xe4, 0x42, 0xff}, {0x00, 0x00, 0x00, 0xff},
		{0x88, 0x88, 0x88, 0xff}, {0x99, 0x44, 0x55, 0xff}, {0x44, 0x77, 0xaa, 0xff}, {0x66, 0xaa, 0x55, 0xff},
	}
	return cs[i%len(cs)]
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	// premultiplied
	f := float64(a) / 0xff
	return color.RGBA{R: uint8(float64(r>>8) * f), G: uint8(float64(g>>8) * f), B: uint8(float64(b>>8) * f), A: a}
}

// tickEnds widens a numeric axis to the major ticks around its data, so
// that both ends of the axis carry a labelled tick (gonum/plot ends an
// axis at the data's extremes, between ticks). Nominal axes (bars) stay.
func tickEnds(a *plot.Axis) {
	if _, nominal := a.Tick.Marker.(plot.ConstantTicks); nominal {
		return
	}
	lo, hi := a.Min, a.Max
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return
	}
	if _, log := a.Scale.(plot.LogScale); log {
		if lo > 0 {
			a.Min, a.Max = logTick(lo, false), logTick(hi, true)
		}
		return
	}
	var majors []float64
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" {
			majors = append(majors, t.Value)
		}
	}
	if len(majors) < 2 {
		return
	}
	step := majors[1] - majors[0]
	a.Min = math.Floor(lo/step+1e-9) * step
	a.Max = math.Ceil(hi/step-1e-9) * step
}

// logTick is the labelled log tick (1, 2 or 5 x 10^k, as logTicks labels)
// at or below v (up false) or at or above it (up true).
func logTick(v float64, up bool) float64 {
	e := math.Floor(math.Log10(v))
	base := math.Pow(10, e)
	cands := []float64{base, 2 * base, 5 * base, 10 * base}
	if up {
		for _, c := range cands {
			if c >= v*(1-1e-9) {
				return c
			}
		}
		return 10 * base
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if cands[i] <= v*(1+1e-9) {
			return cands[i]
		}
	}
	return base
}

// logTicks labels a log axis at 1, 2 and 5 x 10^k (plot.LogTicks labels
// only powers of ten, none at all on a range narrower than a decade), with
// unlabelled minor ticks at the other integers x 10^k.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m <= 9; m++ {
			v := float64(m) * base
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}
