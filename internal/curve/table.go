package curve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
)

// TableFormula is the Source.Formula of every table estimate.
const TableFormula = "piecewise-linear interpolation in log-log space"

// Axis is one measured axis of a calibration table.
type Axis struct {
	Name string // the column it comes from: "tokens", "kv_len", "bytes"
	// Extrapolated says what a query above the range gets: the last
	// segment extended (its curves SetAbove), described by How ("last
	// segment extended linearly in tokens"), rather than the end value.
	Extrapolated bool
	How          string
}

// Flags say how one lookup went; Table.Estimate turns them into a Source.
// The first four are the axes' range limits (FlagsOf sets them); a table's
// own notes take the bits from FirstNote up.
type Flags uint8

const (
	BelowA Flags = 1 << iota // first axis below its measured range
	AboveA                   // first axis above
	BelowB                   // second axis below
	AboveB                   // second axis above

	// FirstNote is the flag of a table's first own note (Table.Init's
	// notes[0]); notes[i] has flag FirstNote << i.
	FirstNote
)

// MaxNotes is how many own notes a table can have.
const MaxNotes = 4

const numFlags = 1 << (4 + MaxNotes)

// FlagsOf maps a lookup's clamps on the first (a) and second (b) axis to
// Flags.
func FlagsOf(a, b Clamp) Flags {
	var f Flags
	switch a {
	case Below:
		f |= BelowA
	case Above:
		f |= AboveA
	}
	switch b {
	case Below:
		f |= BelowB
	case Above:
		f |= AboveB
	}
	return f
}

// Table is what every calibration table shares (kernels and comm embed
// it): its name, its leave-one-out error and its notes, precomputed so
// that building an Estimate never allocates.
type Table struct {
	name string  // "<file>#<table>", the Source.Table of its estimates
	err  float64 // p90 leave-one-out relative error
	nLOO int     // interior points the error was computed over
	axes [2]Axis
	// w holds the whole Note for each combination of flags and the
	// Source.Range for each combination of the axis flags, shared by the
	// tables of the same axes and notes (a table used to hold a copy:
	// 5 KB, which made building the 384 tables of an embedded calibration
	// copy 2 MB)
	w *words
}

// Init names the table, sets its axes (one or two) and own notes (at most
// MaxNotes, the words for FirstNote<<i) and summarises loo, the
// leave-one-out errors of its interior points, by their 90th percentile.
func (t *Table) Init(name string, axes []Axis, notes []string, loo []float64) {
	if len(axes) > 2 || len(notes) > MaxNotes {
		panic("curve.Table.Init: too many axes or notes")
	}
	t.name = name
	t.err = P90(loo)
	t.nLOO = len(loo)
	copy(t.axes[:], axes)
	t.w = wordsFor(t.axes, notes)
}

// SetLOO sets the leave-one-out summary of a table initialised before
// (Init) and nothing else: a table whose curves are built on first use
// (kernels' deferred tables) names itself at once and learns its error
// later, without rewriting what readers may hold.
func (t *Table) SetLOO(loo []float64) {
	t.err = P90(loo)
	t.nLOO = len(loo)
}

// words are the notes and ranges of every combination of flags, which
// depend only on a table's axes and own notes: tables of the same kind
// share them (the 318 MoE tables of an embedded calibration, one set),
// so that building a table joins no string.
type words struct {
	notes  [numFlags]string
	ranges [16]cost.Range
}

type wordsKey struct {
	axes  [2]Axis
	notes string // the notes, each followed by a zero byte
}

var (
	wordsMu    sync.Mutex
	wordsCache = map[wordsKey]*words{}
	noWords    words // of a Table not initialised
)

// wordsFor returns the shared words of axes and notes.
func wordsFor(axes [2]Axis, notes []string) *words {
	n := 0
	for _, s := range notes {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for _, s := range notes {
		b = append(append(b, s...), 0)
	}
	wordsMu.Lock()
	defer wordsMu.Unlock()
	if w, ok := wordsCache[wordsKey{axes, string(b)}]; ok { // no copy of b to look up
		return w
	}
	w := newWords(axes, notes)
	wordsCache[wordsKey{axes, string(b)}] = w
	return w
}

func newWords(axes [2]Axis, notes []string) *words {
	t := &words{}
	words := func(m Flags) []string {
		var parts []string
		for i, a := range axes {
			if a.Name == "" {
				continue
			}
			lo, hi := BelowA<<(2*i), AboveA<<(2*i)
			if m&lo != 0 {
				parts = append(parts, "clamped: "+a.Name+" below the measured range")
			}
			if m&hi != 0 {
				if a.Extrapolated {
					parts = append(parts, "extrapolated: "+a.Name+" above the measured range ("+a.How+")")
				} else {
					parts = append(parts, "clamped: "+a.Name+" above the measured range")
				}
			}
		}
		return parts
	}
	for m := range Flags(16) {
		r := &t.ranges[m]
		r.Note = strings.Join(words(m), "; ")
		for i, a := range axes {
			switch {
			case m&(BelowA<<(2*i)) != 0:
				r.Axes[i] = cost.AxisRange{Axis: a.Name, Limit: cost.ClampedBelow}
			case m&(AboveA<<(2*i)) != 0 && a.Extrapolated:
				r.Axes[i] = cost.AxisRange{Axis: a.Name, Limit: cost.ExtrapolatedAbove}
			case m&(AboveA<<(2*i)) != 0:
				r.Axes[i] = cost.AxisRange{Axis: a.Name, Limit: cost.ClampedAbove}
			}
		}
	}
	for m := range numFlags {
		parts := words(Flags(m))
		for i, n := range notes {
			if Flags(m)&(FirstNote<<i) != 0 {
				parts = append(parts, n)
			}
		}
		t.notes[m] = strings.Join(parts, "; ")
	}
	return t
}

// Name is the table's Source.Table string.
func (t *Table) Name() string { return t.name }

// LOOError is the table's p90 relative leave-one-out error and the number
// of interior points it was computed over.
func (t *Table) LOOError() (p90 float64, points int) { return t.err, t.nLOO }

// Estimate is a table answer of y seconds from rows rowLo..rowHi: its
// interval is y(1 -+ the leave-one-out error); its Source names the table
// and rows, the axes the query left (Range) and the notes of
// flags. Bytes and FLOPs are zero: the caller knows the op's traffic.
func (t *Table) Estimate(y float64, rowLo, rowHi int, flags Flags) cost.Estimate {
	w := t.w
	if w == nil {
		w = &noWords
	}
	src := cost.Source{
		Kind: cost.Table, Formula: TableFormula, Table: t.name,
		RowLo: rowLo, RowHi: rowHi, Note: w.notes[flags],
	}
	if r := flags & 15; r != 0 && w.ranges[r].Note != "" {
		src.Range = &w.ranges[r]
	}
	return cost.Estimate{
		Time:   unit.Seconds(y),
		Lo:     unit.Seconds(math.Max(0, y*(1-t.err))),
		Hi:     unit.Seconds(y * (1 + t.err)),
		Source: src,
	}
}

// RowError is an error in one row of a calibration table (Row is 1-based,
// as Source rows are), from a table constructor; the caller that knows
// where the row came from (calib: the file and line) finds it with
// errors.As and places it there.
type RowError struct {
	Row int
	Err error
}

// RowErrorf builds a RowError for row.
func RowErrorf(row int, format string, args ...any) *RowError {
	return &RowError{Row: row, Err: fmt.Errorf(format, args...)}
}

func (e *RowError) Error() string { return "row " + strconv.Itoa(e.Row) + ": " + e.Err.Error() }

func (e *RowError) Unwrap() error { return e.Err }

// Lookuper is a table that answers queries of type Q, reporting false
// when it does not cover one.
type Lookuper[Q any] interface {
	Lookup(q Q) (cost.Estimate, bool)
}

// First is the answer of the first table in ts that covers q: a set of
// tables answers in its order (file order; later calibration sources
// first).
func First[T Lookuper[Q], Q any](ts []T, q Q) (cost.Estimate, bool) {
	for _, t := range ts {
		if e, ok := t.Lookup(q); ok {
			return e, true
		}
	}
	return cost.Estimate{}, false
}
