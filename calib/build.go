package calib

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/kernels"
)

// build turns the validated tables into kernels and comm lookup tables,
// precomputing everything a lookup needs (curves, LOO errors, notes).
func (f *File) build() error {
	kt, ct := &kernels.Tables{}, &comm.Tables{Graphs: true}
	for i := range f.Tables {
		t := &f.Tables[i]
		if t.lazy != nil {
			t.loo = buildLazy(f.Name, t, kt, !f.embedded)
			continue
		}
		loo, err := buildTable(f.Name, f.Effective(t), t, kt, ct, f.deferred, !f.embedded)
		t.loo = loo
		if err != nil {
			return &tableErr{index: i, err: t.buildErr(f.Name, err)}
		}
	}
	kt.Rank() // the source policy's order and MoE index (KernelTables)
	f.kt, f.ct = kt, ct
	return nil
}

// tableErr is an error of building table index of a file, so that an
// importer can place it in the file it read the rows from.
type tableErr struct {
	index int
	err   error
}

func (e *tableErr) Error() string { return e.err.Error() }
func (e *tableErr) Unwrap() error { return e.err }

// buildErr places an error of the kernels/comm table constructors: at the
// line of the row it names (a curve.RowError, 1-based table row) when the
// row's line is known, in the loaded file or in the file an importer read
// the rows from (t.src); else at the table header; else at the table.
func (t *Table) buildErr(file string, err error) error {
	if t.src != "" {
		file = t.src
	}
	if re, ok := errors.AsType[*curve.RowError](err); ok {
		if r := re.Row; r >= 1 && r <= len(t.rowLines) && t.rowLines[r-1] > 0 {
			return fmt.Errorf("%s:%d: table %q: %w", file, t.rowLines[r-1], t.Name, err)
		}
	}
	if t.line > 0 && t.src == "" {
		return fmt.Errorf("%s:%d: table %q: %w", file, t.line, t.Name, err)
	}
	return fmt.Errorf("%s: table %q: %w", file, t.Name, err)
}

// envelopeCorrection states the monotone envelope applied to MoE rows.
func envelopeCorrection(rows []int) string {
	s := make([]string, len(rows))
	for i, r := range rows {
		s[i] = strconv.Itoa(r)
	}
	return "monotone envelope at load: within each (moe_tp, ep) series latency is made non-decreasing in tokens " +
		"(running max); rows " + strings.Join(s, ", ") + " raised to the largest latency measured at fewer tokens"
}

// addCorrection appends c to the table's corrections unless it is there
// (a file written after a load keeps it; loading it again adds nothing).
// A table without its own corrections starts from the inherited ones.
func (t *Table) addCorrection(eff Provenance, c string) {
	if slices.Contains(eff.Corrections, c) {
		return
	}
	if len(t.Provenance.Corrections) == 0 {
		t.Provenance.Corrections = append([]string(nil), eff.Corrections...)
	}
	t.Provenance.Corrections = append(t.Provenance.Corrections, c)
}

// looer is what every built table reports: its p90 leave-one-out error.
type looer interface{ LOOError() (float64, int) }

// buildTable builds table t of file; user says the file is one the user
// passed, not an embedded calibration (the source policy ranks its kernel
// tables first: kernels.Origin).
func buildTable(file string, prov Provenance, t *Table, kt *kernels.Tables, ct *comm.Tables, deferred, user bool) (looer, error) {
	c, err := specFor(t)
	if err != nil {
		return nil, err
	}
	if err := plausibleRows(prov, t, c); err != nil {
		return nil, err
	}
	def, _ := opFor(t.Op) // specFor found it
	tb, err := def.build(&builder{name: file + "#" + t.Name, prov: prov, t: t, c: c, kt: kt, ct: ct, deferred: deferred})
	if o, ok := tb.(interface {
		SetOrigin(engine, version string, user bool, label string)
	}); ok && err == nil {
		o.SetOrigin(prov.Engine, prov.EngineVersion, user, originLabel(prov, t.Op))
	}
	return tb, err
}

// originLabel names a kernel table's rows in the source policy's words
// (cost.Source.Policy): "perfdb vllm 0.24.0 moe rows" for the perf
// database's, "vllm 0.24.0 prefill rows" for another engine measurement
// (a trace), "calib gpu moe rows" for moecast's own kernels.
func originLabel(p Provenance, op string) string {
	switch {
	case p.Engine != "" && strings.Contains(p.Source, "aiconfigurator"):
		return strings.TrimSpace("perfdb "+p.Engine+" "+p.EngineVersion) + " " + op + " rows"
	case p.Engine != "":
		return strings.TrimSpace(p.Engine+" "+p.EngineVersion) + " " + op + " rows"
	case strings.Contains(p.Command, "calib gpu"):
		return "calib gpu " + op + " rows"
	}
	return op + " rows"
}

// buildLazy adds the lookup table of a stub (Table.lazy) to kt: built,
// from the rows read then, on its first lookup that matches its keys.
// The load checks the table as buildTable does; a failure panics there
// (kernels' lazy tables): the embedded tables are all built by
// TestEmbeddedIndexed.
func buildLazy(file string, t *Table, kt *kernels.Tables, user bool) looer {
	l, name := t.lazy, file+"#"+t.Name
	load := func() (*builder, error) {
		tb, prov, err := l.load(file)
		if err != nil {
			return nil, err
		}
		c, err := specFor(tb)
		if err != nil {
			return nil, err
		}
		if err := plausibleRows(prov, tb, c); err != nil {
			return nil, tb.buildErr(file, err)
		}
		return &builder{name: name, prov: prov, t: tb, c: c}, nil
	}
	switch Op(t.Op) {
	case OpGEMM:
		tb := kernels.NewGEMMTableLazy(name, t.Keys.Dtype, func() ([]kernels.GEMMPoint, error) {
			b, err := load()
			if err != nil {
				return nil, err
			}
			return gemmPoints(b), nil
		})
		tb.SetOrigin(l.e.engine, l.e.version, user, l.e.origin)
		kt.GEMMs = append(kt.GEMMs, tb)
		return tb
	case OpMoE:
		tb := kernels.NewMoETableLazy(name, moeKey(t.Keys), func() ([]kernels.MoEPoint, error) {
			b, err := load()
			if err != nil {
				return nil, err
			}
			return moePoints(b), nil
		})
		tb.SetOrigin(l.e.engine, l.e.version, user, l.e.origin)
		kt.MoEs = append(kt.MoEs, tb)
		return tb
	case OpGQA:
		tb := kernels.NewGQATableLazy(name, gqaKey(t.Keys), func() ([]kernels.GQAPoint, error) {
			b, err := load()
			if err != nil {
				return nil, err
			}
			return gqaPoints(b), nil
		})
		tb.SetOrigin(l.e.engine, l.e.version, user, l.e.origin)
		kt.GQAs = append(kt.GQAs, tb)
		return tb
	case OpMLA:
		tb := kernels.NewMLATableLazy(name, mlaKey(t.Keys), memBW(l.e.gpu), func() ([]kernels.MLAPoint, error) {
			b, err := load()
			if err != nil {
				return nil, err
			}
			return mlaPoints(b), nil
		})
		tb.SetOrigin(l.e.engine, l.e.version, user, l.e.origin)
		tb.LegacyCollector = LegacyMLA(l.e.gpu, l.e.engine, l.e.version, l.e.origin)
		kt.MLAs = append(kt.MLAs, tb)
		return tb
	case OpPrefill:
		tb := kernels.NewPrefillTableLazy(name, prefillKey(t.Keys), func() ([]kernels.PrefillPoint, error) {
			b, err := load()
			if err != nil {
				return nil, err
			}
			return prefillPoints(b), nil
		})
		tb.SetOrigin(l.e.engine, l.e.version, user, l.e.origin)
		kt.Prefills = append(kt.Prefills, tb)
		return tb
	}
	panic("calib: no lazy table for op " + t.Op) // lazyOp names only the ops above
}

// KernelTables is the kernel lookup of the file, or nil when the file has
// no kernel table (set it as kernels.Costs.Tables).
func (f *File) KernelTables() kernels.Lookup {
	if f == nil || f.kt.Empty() {
		return nil
	}
	return f.kt
}

// CommTables is the collective lookup of the file for CUDA-graph runs, or
// nil when the file has no collective table (set it as comm.Comm.Tables).
func (f *File) CommTables() comm.Lookup { return f.CommTablesFor(true) }

// CommTablesFor is CommTables for runs with (graphs) or without CUDA
// graphs: framework all-reduce tables measured in the other mode are
// skipped.
func (f *File) CommTablesFor(graphs bool) comm.Lookup {
	if f == nil || f.ct.Empty() {
		return nil
	}
	c := *f.ct
	c.Graphs = graphs
	return &c
}

// Kernels returns the built kernel tables (for coverage reports).
func (f *File) Kernels() *kernels.Tables { return f.kt }

// Comm returns the built collective tables (for coverage reports).
func (f *File) Comm() *comm.Tables { return f.ct }
