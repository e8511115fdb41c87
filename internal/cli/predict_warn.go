package cli

import (
	"fmt"
	"strings"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/sim"
)

// tableRangeWarnings lists, as user warnings, every op whose cost came from
// a calibration table queried outside the table's measured range
// (cost.Source.Range: clamped to the end value, or the last segment
// extended, and on which axis). It re-evaluates each point op by op
// (sim.Explain), because a category's source shows only its largest op. One warning per op, table
// and note, naming the query (the op's per-rank shape at the largest batch
// that hit it) and every batch that hit it, e.g.
//
//	head all_gather (logits, vocab-parallel): table embedded:rtx-pro-6000-server#nccl.allgather rows 62-63
//	extrapolated: bytes above the measured range (...); query 8 ranks, 1.34GB at batch 4096 (context 2048)
//
// Warnings come in the order of the first batch and op that raised them.
func tableRangeWarnings(sm *sim.Sim, points []sim.Point) ([]string, error) {
	type key struct {
		layer, op, table, note string
	}
	type hit struct {
		batches    []int
		shape      string
		ctx        int
		rowLo, rHi int
	}
	var order []key
	hits := map[key]*hit{}
	for _, p := range points {
		ops, err := sm.Explain(p.Batch, p.Context)
		if err != nil {
			return nil, err
		}
		for _, o := range ops {
			src := o.Estimate.Source
			if src.Kind != cost.Table || o.Estimate.Time <= 0 {
				continue
			}
			if !src.OutOfRange() {
				continue
			}
			n := src.Range.Note
			k := key{o.Layer, o.Name, src.Table, n}
			h, ok := hits[k]
			if !ok {
				h = &hit{rowLo: src.RowLo, rHi: src.RowHi}
				hits[k] = h
				order = append(order, k)
			}
			if len(h.batches) == 0 || h.batches[len(h.batches)-1] != p.Batch {
				h.batches = append(h.batches, p.Batch)
			}
			h.shape, h.ctx = o.Shape, p.Context
			h.rowLo, h.rHi = min(h.rowLo, src.RowLo), max(h.rHi, src.RowHi)
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		h := hits[k]
		bs := make([]string, len(h.batches))
		for i, b := range h.batches {
			bs[i] = fmt.Sprint(b)
		}
		at := fmt.Sprintf("at batch %s", bs[len(bs)-1])
		if len(bs) > 1 {
			at += " (also hit at batch " + strings.Join(bs[:len(bs)-1], ", ") + ")"
		}
		out = append(out, fmt.Sprintf("%s %s: table %s rows %d-%d %s; query %s %s, context %d",
			k.layer, k.op, k.table, h.rowLo, h.rHi, k.note, h.shape, at, h.ctx))
	}
	return out, nil
}
