package calib

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/curve"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// build turns the validated tables into kernels and comm lookup tables,
// precomputing everything a lookup needs (curves, LOO errors, notes).
func (f *File) build() error {
	kt, ct := &kernels.Tables{}, &comm.Tables{Graphs: true}
	for i := range f.Tables {
		t := &f.Tables[i]
		loo, err := buildTable(f.Name, f.Effective(t), t, kt, ct)
		t.loo = loo
		if err != nil {
			return &tableErr{index: i, err: t.buildErr(f.Name, err)}
		}
	}
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

func buildTable(file string, prov Provenance, t *Table, kt *kernels.Tables, ct *comm.Tables) (looer, error) {
	c, err := specFor(t)
	if err != nil {
		return nil, err
	}
	if err := plausibleRows(prov, t, c); err != nil {
		return nil, err
	}
	name := file + "#" + t.Name
	col := func(r []float64, n string) float64 { return r[c.idx[n]] }
	ival := func(r []float64, n string) int { return int(col(r, n)) }
	lat := func(r []float64) unit.Seconds { return unit.Seconds(r[c.lat]) * c.latScale }
	flag := func(r []float64, n string) bool { i, ok := c.idx[n]; return ok && r[i] == 1 }
	k := t.Keys
	switch t.Op {
	case "gemm":
		pts := make([]kernels.GEMMPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.GEMMPoint{M: ival(r, "m"), N: ival(r, "n"), K: ival(r, "k"), Latency: lat(r), Row: i + 1}
		}
		tb, err := kernels.NewGEMMTable(name, k.Dtype, pts)
		if err != nil {
			return nil, err
		}
		kt.GEMMs = append(kt.GEMMs, tb)
		return tb, nil
	case "moe":
		pts := make([]kernels.MoEPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.MoEPoint{Tokens: ival(r, "tokens"), MoETP: ival(r, "moe_tp"), EP: ival(r, "ep"),
				Latency: lat(r), L2Resident: flag(r, "l2_resident"), Row: i + 1}
		}
		tb, err := kernels.NewMoETable(name, kernels.MoEKey{Quant: k.Dtype, Experts: k.Experts, TopK: k.TopK,
			Hidden: k.Hidden, Inter: k.Inter, Distribution: k.Distribution}, pts)
		if err != nil {
			return nil, err
		}
		if r := tb.Raised(); len(r) > 0 {
			t.addCorrection(prov, envelopeCorrection(r))
		}
		kt.MoEs = append(kt.MoEs, tb)
		return tb, nil
	case "mla":
		pts := make([]kernels.MLAPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.MLAPoint{Heads: ival(r, "heads"), Batch: ival(r, "batch"), KVLen: ival(r, "kv_len"),
				Latency: lat(r), L2Resident: flag(r, "l2_resident"), Row: i + 1}
		}
		tb, err := kernels.NewMLATable(name, kernels.MLAKey{GEMMDtype: k.Dtype, KV: k.KVDtype, KVLoRARank: k.KVLoRARank, QKRopeDim: k.QKRopeDim,
			Hidden: k.Hidden, QLoRARank: k.QLoRARank, QKNopeDim: k.QKNopeDim, VHeadDim: k.VHeadDim}, pts)
		if err != nil {
			return nil, err
		}
		// The GPU's peak bandwidth prices the KV read an fp8-KV query saves
		// when this bf16-KV table answers it (kernels.Tables.MLAModule).
		if g, ok := kernels.LookupGPU(prov.GPU); ok {
			tb.MemBW = g.MemBW
		}
		kt.MLAs = append(kt.MLAs, tb)
		return tb, nil
	case "gqa":
		pts := make([]kernels.GQAPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.GQAPoint{Heads: ival(r, "heads"), KVHeads: ival(r, "kv_heads"), Batch: ival(r, "batch"),
				KVLen: ival(r, "kv_len"), Latency: lat(r), Row: i + 1}
		}
		tb, err := kernels.NewGQATable(name, kernels.GQAKey{HeadDim: k.HeadDim, KV: k.KVDtype}, pts)
		if err != nil {
			return nil, err
		}
		kt.GQAs = append(kt.GQAs, tb)
		return tb, nil
	case "prefill":
		pts := make([]kernels.PrefillPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.PrefillPoint{Heads: ival(r, "heads"), KVHeads: ival(r, "kv_heads"), Chunk: ival(r, "chunk"),
				Prefix: ival(r, "prefix"), Latency: lat(r), Row: i + 1}
		}
		tb, err := kernels.NewPrefillTable(name, kernels.PrefillKey{QKDim: k.HeadDim, VDim: k.VHeadDim, KV: k.KVDtype, Window: k.Window}, pts)
		if err != nil {
			return nil, err
		}
		kt.Prefills = append(kt.Prefills, tb)
		return tb, nil
	case "elementwise":
		pts := make([]kernels.ElementwisePoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.ElementwisePoint{Bytes: unit.Bytes(col(r, "bytes")), Latency: lat(r), Row: i + 1}
		}
		tb, err := kernels.NewElementwiseTable(name, pts)
		if err != nil {
			return nil, err
		}
		kt.Elementwises = append(kt.Elementwises, tb)
		return tb, nil
	case "unmapped":
		pts := make([]kernels.UnmappedPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = kernels.UnmappedPoint{Tokens: ival(r, "tokens"), Latency: lat(r), Row: i + 1}
		}
		tb, err := kernels.NewUnmappedTable(name, pts)
		if err != nil {
			return nil, err
		}
		kt.Unmappeds = append(kt.Unmappeds, tb)
		return tb, nil
	case "ep":
		pts := make([]comm.EPPoint, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = comm.EPPoint{Hidden: ival(r, "hidden"), TopK: ival(r, "topk"), Experts: ival(r, "experts"),
				Ranks: ival(r, "ranks"), TokensPerRank: ival(r, "tokens_per_rank"), Latency: lat(r), Row: i + 1}
		}
		tb, err := comm.NewEPTable(name, comm.EPKey{Phase: k.Phase, Impl: k.Impl}, pts)
		if err != nil {
			return nil, err
		}
		ct.EPs = append(ct.EPs, tb)
		return tb, nil
	default:
		op, ok := cost.ParseCategory(t.Op)
		if !ok || !op.IsCollective() {
			return nil, fmt.Errorf("op %q has no table type", t.Op)
		}
		pts := make([]comm.Point, len(t.Rows))
		for i, r := range t.Rows {
			pts[i] = comm.Point{Ranks: ival(r, "ranks"), Bytes: unit.Bytes(col(r, "bytes")), Latency: lat(r), Row: i + 1}
		}
		tb, err := comm.NewTable(name, op, k.Impl, k.Mode, pts)
		if err != nil {
			return nil, err
		}
		ct.Colls = append(ct.Colls, tb)
		return tb, nil
	}
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
