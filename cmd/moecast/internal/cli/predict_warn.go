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
			at += " (also hit at batch " + listSome(bs[:len(bs)-1], maxListed) + ")"
		}
		out = append(out, fmt.Sprintf("%s %s: table %s rows %d-%d %s; query %s %s, context %d",
			k.layer, k.op, k.table, h.rowLo, h.rHi, k.note, h.shape, at, h.ctx))
	}
	return out, nil
}

// maxListed is how many batch sizes a warning lists before it counts the
// rest ("1, 2, 4, ... and 4,990 more").
const maxListed = 8

// listSome joins the first n items and counts the others.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// fitWarnings says which points do not fit in GPU memory, in one warning
// however many they are: the first one's reason, and the others counted
// (5,000 batch sizes gave 4,917 warnings before).
func fitWarnings(points []sim.Point) []string {
	var bad []sim.Point
	for _, p := range points {
		if !p.Fits {
			bad = append(bad, p)
		}
	}
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return []string{fitWarning(bad[0])}
	}
	bs := make([]string, len(bad))
	for i, p := range bad {
		bs[i] = fmt.Sprint(p.Batch)
	}
	return []string{fmt.Sprintf("%d batch sizes do not fit (batch %s); the first, %s", len(bad), listSome(bs, maxListed), fitWarning(bad[0]))}
}

// collapseWarnings keeps the first of identical warnings, with the count
// of the others: "... (3 times)".
func collapseWarnings(ws []string) []string {
	count := map[string]int{}
	var order []string
	for _, w := range ws {
		if count[w] == 0 {
			order = append(order, w)
		}
		count[w]++
	}
	out := make([]string, len(order))
	for i, w := range order {
		out[i] = w
		if n := count[w]; n > 1 {
			out[i] += fmt.Sprintf(" (%d times)", n)
		}
	}
	return out
}
