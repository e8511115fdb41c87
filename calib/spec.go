package calib

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/unit"
)

// opSpec is what one op's tables must hold.
type opSpec struct {
	ints     []string // integer axes/keys, each >= 1
	nonneg   []string // integer axes, each >= 0
	reals    []string // positive real columns (sizes)
	optional []string // optional non-latency columns
	inplace  bool     // an inplace_latency_* column is allowed
	keys     func(k Keys) error
}

func need(cond bool, msg string) error {
	if cond {
		return nil
	}
	return errors.New(msg)
}

// Known key values: a table with any other value would never answer a
// query (lookups match these strings exactly), so it is refused at load.
var (
	collectiveImpls = comm.TableImpls()
	epImpls         = []string{"deepep_ll", "deepep_normal"}
	moeQuants       = []string{"int4_wo", "fp8_block", "fp8", "nvfp4", "mxfp4", "mxfp4_mxfp8", "bf16"}
	mlaDtypes       = []string{"bf16", "fp8", "fp8_block", "nvfp4"}
	kvDtypes        = []string{"bf16", "fp8"}
	// GEMM weight formats as dtype.Format names: bf16, fp16, fp32, mxfp4,
	// nvfp4, fp8, fp8-b128, fp8-b128x128, int4-g32, fp4-g16, int8-channel.
	reGEMMDtype    = regexp.MustCompile(`^(bf16|fp16|fp32|mxfp4|nvfp4|(int|fp)(4|8)(-(g[0-9]+|b[0-9]+(x[0-9]+)?|channel|tensor))?)$`)
	reDistribution = regexp.MustCompile(`^(balanced|uniform|power_law_[0-9]+(\.[0-9]+)?)$`)
)

// oneOf is nil when v is one of the known values, else an error naming
// them.
func oneOf(key, v string, known []string) error {
	if slices.Contains(known, v) {
		return nil
	}
	return fmt.Errorf("key %s %q is unknown (known: %s)", key, v, strings.Join(known, ", "))
}

func collectiveKeys(k Keys) error {
	if k.Impl == "" {
		return errors.New("key impl is missing (nccl, vllm, sglang, trtllm, oneshot, twoshot or auto)")
	}
	if err := oneOf("impl", k.Impl, collectiveImpls); err != nil {
		return err
	}
	switch k.Mode {
	case "", "graph", "eager":
		return nil
	}
	return fmt.Errorf(`key mode %q: want "graph", "eager" or none`, k.Mode)
}

// colIndex is a table's column layout, resolved against its op's spec.
type colIndex struct {
	idx        map[string]int
	lat        int          // latency column
	latScale   unit.Seconds // seconds per unit of the latency column
	inplace    int          // -1 when absent
	inplaceSc  unit.Seconds
	spec       opSpec
	optPresent map[string]bool
}

func specFor(t *Table) (*colIndex, error) {
	def, ok := opFor(t.Op)
	if !ok && t.Op == "gqa_prefill" {
		// an earlier from-trace table kind, now op prefill
		return nil, errors.New(`op "gqa_prefill" is no longer read: use op "prefill" (columns heads, kv_heads, chunk, prefix = kv_len - chunk; keys head_dim, v_head_dim = head_dim, window), or run calib from-trace again`)
	}
	if !ok {
		return nil, fmt.Errorf("op %q is unknown (%s)", t.Op, opNames())
	}
	spec := def.spec
	if err := spec.keys(t.Keys); err != nil {
		return nil, fmt.Errorf("op %s: %w", t.Op, err)
	}
	c := &colIndex{idx: map[string]int{}, lat: -1, inplace: -1, spec: spec, optPresent: map[string]bool{}}
	allowed := map[string]bool{}
	for _, n := range slices.Concat(spec.ints, spec.nonneg, spec.reals, spec.optional) {
		allowed[n] = true
	}
	for i, col := range t.Columns {
		if _, dup := c.idx[col]; dup {
			return nil, fmt.Errorf("column %q appears twice", col)
		}
		c.idx[col] = i
		if sc, ok, err := latencyColumn(col, "latency"); err != nil {
			return nil, err
		} else if ok {
			if c.lat >= 0 {
				return nil, errors.New("more than one latency column")
			}
			c.lat, c.latScale = i, sc
			continue
		}
		if strings.HasPrefix(col, "inplace_latency") && spec.inplace {
			sc, ok, err := latencyColumn(col, "inplace_latency")
			if err != nil {
				return nil, err
			}
			if ok {
				c.inplace, c.inplaceSc = i, sc
				continue
			}
		}
		if !allowed[col] {
			return nil, fmt.Errorf("column %q is unknown for op %s (columns: %s, latency_us)", col, t.Op,
				strings.Join(slices.Concat(spec.ints, spec.nonneg, spec.reals, spec.optional), ", "))
		}
		c.optPresent[col] = true
	}
	if c.lat < 0 {
		return nil, errors.New("latency column is missing (latency_us, latency_ms or latency_s)")
	}
	for _, n := range slices.Concat(spec.ints, spec.nonneg, spec.reals) {
		if _, ok := c.idx[n]; !ok {
			return nil, fmt.Errorf("column %q is missing", n)
		}
	}
	return c, nil
}

// checkRows validates every row's values: axes are positive integers,
// sizes positive, latencies positive, l2_resident 0 or 1.
func (c *colIndex) checkRows(t *Table) error {
	axes := slices.Concat(c.spec.ints, c.spec.nonneg, c.spec.reals)
	cols := make([]int, len(axes))
	for i, n := range axes {
		cols[i] = c.idx[n]
	}
	l2, ws := -1, -1
	if i, ok := c.idx["l2_resident"]; ok {
		l2 = i
	}
	if i, ok := c.idx["working_set_bytes"]; ok {
		ws = i
	}
	// Duplicate points are found by the bits of their axis values (equal
	// bits, equal %v text: %v prints the shortest text that reads back to
	// the same float64); the text is formatted only for the error.
	seen := make(map[string]int, len(t.Rows))
	key := make([]byte, 8*len(cols))
	for r, row := range t.Rows {
		ln := 0
		if r < len(t.rowLines) {
			ln = t.rowLines[r]
		}
		pos := func(ln int) string { return t.rowPos(ln) }
		for i, j := range cols {
			binary.LittleEndian.PutUint64(key[8*i:], math.Float64bits(row[j]))
		}
		if prev, dup := seen[string(key)]; dup {
			var text strings.Builder
			for i, n := range axes {
				fmt.Fprintf(&text, "%s=%v ", n, row[cols[i]])
			}
			return fmt.Errorf("%stable %q row %d: point %sis measured twice (also row %d)", pos(ln), t.Name, r+1, text.String(), prev)
		}
		seen[string(key)] = r + 1
		// axes and cols list the ints, then the nonneg, then the reals
		ni, nn := len(c.spec.ints), len(c.spec.nonneg)
		for i, n := range c.spec.ints {
			v := row[cols[i]]
			if v < 1 || v != math.Trunc(v) || v > 1<<40 {
				return fmt.Errorf("%stable %q row %d: %s must be a positive integer, got %v", pos(ln), t.Name, r+1, n, v)
			}
		}
		for i, n := range c.spec.nonneg {
			v := row[cols[ni+i]]
			if v < 0 || v != math.Trunc(v) || v > 1<<40 {
				return fmt.Errorf("%stable %q row %d: %s must be an integer >= 0, got %v", pos(ln), t.Name, r+1, n, v)
			}
		}
		for i, n := range c.spec.reals {
			if v := row[cols[ni+nn+i]]; !(v > 0) {
				return fmt.Errorf("%stable %q row %d: %s must be positive, got %v", pos(ln), t.Name, r+1, n, v)
			}
		}
		if v := row[c.lat]; !(v > 0) {
			return fmt.Errorf("%stable %q row %d: %s must be positive, got %v", pos(ln), t.Name, r+1, t.Columns[c.lat], v)
		}
		if c.inplace >= 0 {
			if v := row[c.inplace]; !(v > 0) {
				return fmt.Errorf("%stable %q row %d: %s must be positive, got %v", pos(ln), t.Name, r+1, t.Columns[c.inplace], v)
			}
		}
		if i := l2; i >= 0 && row[i] != 0 && row[i] != 1 {
			return fmt.Errorf("%stable %q row %d: l2_resident must be 0 or 1, got %v", pos(ln), t.Name, r+1, row[i])
		}
		if i := ws; i >= 0 && row[i] < 0 {
			return fmt.Errorf("%stable %q row %d: working_set_bytes must not be negative", pos(ln), t.Name, r+1)
		}
	}
	return nil
}

// rowPos is the position prefix of a row error: "LINE: " in a loaded file
// (the caller adds the file name), "FILE:LINE: " for imported rows (FILE
// the source the importer read), "" when the line is unknown.
func (t *Table) rowPos(ln int) string {
	switch {
	case ln <= 0:
		return ""
	case t.src != "":
		return fmt.Sprintf("%s:%d: ", t.src, ln)
	}
	return fmt.Sprintf("%d: ", ln)
}

// Validate checks a table built in memory (an importer's output) against
// its op's spec.
func (t *Table) Validate() error {
	c, err := specFor(t)
	if err != nil {
		return fmt.Errorf("table %q: %w", t.Name, err)
	}
	for i, r := range t.Rows {
		if len(r) != len(t.Columns) {
			return fmt.Errorf("table %q row %d: %d values for %d columns", t.Name, i+1, len(r), len(t.Columns))
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("table %q row %d: value %v is not finite", t.Name, i+1, v)
			}
		}
	}
	if len(t.Rows) == 0 {
		return fmt.Errorf("table %q has no rows", t.Name)
	}
	return c.checkRows(t)
}

// Column returns the values of a named column, or nil.
func (t *Table) Column(name string) []float64 {
	for j, c := range t.Columns {
		if c == name {
			out := make([]float64, len(t.Rows))
			for i, r := range t.Rows {
				out[i] = r[j]
			}
			return out
		}
	}
	return nil
}

// Latencies returns the latency column in seconds.
func (t *Table) Latencies() ([]unit.Seconds, error) {
	c, err := specFor(t)
	if err != nil {
		return nil, err
	}
	out := make([]unit.Seconds, len(t.Rows))
	for i, r := range t.Rows {
		out[i] = unit.Seconds(r[c.lat]) * c.latScale
	}
	return out, nil
}
