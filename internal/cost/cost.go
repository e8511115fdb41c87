// Package cost holds what every cost function returns: an Estimate of time
// with its interval, the bytes and FLOPs behind it, and the Source that says
// where the number came from (a roofline formula and its efficiency, or a
// calibration table and its rows). It also defines the operation categories
// shared by the cost model (sim) and trace analysis (calib/trace), so that a
// prediction and a measurement can be compared category by category.
package cost

import (
	"fmt"

	"github.com/moecast/moecast/internal/unit"
)

// Category is an operation category. The names are a contract shared by
// `moecast predict` (breakdown_ms) and `moecast trace` (by_category_ms).
// Its collectives (AllReduce, AllGather, ReduceScatter, AllToAll) are the
// one collective vocabulary: comm's tables and NCCL model, and calib's
// table ops ("allreduce", ...), use these values and names.
type Category uint8

const (
	Attention Category = iota
	GEMM
	MoE
	AllReduce
	AllGather
	ReduceScatter
	AllToAll
	Elementwise
	Sampling
	Launch
	Other
	Idle // GPU gaps inside a step; traces only

	NumCategories
)

var categoryNames = [NumCategories]string{
	"attention", "gemm", "moe", "allreduce", "allgather", "reducescatter",
	"alltoall", "elementwise", "sampling", "launch", "other", "idle",
}

func (c Category) String() string {
	if c < NumCategories {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", uint8(c))
}

// ParseCategory maps a category name back to its value.
func ParseCategory(s string) (Category, bool) {
	for i, n := range categoryNames {
		if n == s {
			return Category(i), true
		}
	}
	return 0, false
}

// IsCollective reports whether c is a communication category.
func (c Category) IsCollective() bool {
	return c == AllReduce || c == AllGather || c == ReduceScatter || c == AllToAll
}

// SourceKind says how a number was obtained.
type SourceKind uint8

const (
	Roofline SourceKind = iota // analytic: max(bytes/(BW·eff), FLOPs/(peak·eff)) + overhead
	Table                      // interpolated from a calibration table
	Fixed                      // a documented constant (launch cost, per-kernel cost)
)

func (k SourceKind) String() string {
	switch k {
	case Roofline:
		return "roofline"
	case Table:
		return "table"
	case Fixed:
		return "fixed"
	}
	return "unknown"
}

// Limit says where a table query fell against one measured axis.
type Limit uint8

const (
	InRange           Limit = iota // inside the measured range: interpolated
	ClampedBelow                   // below it: the first measured value used
	ClampedAbove                   // above it: the last measured value used
	ExtrapolatedAbove              // above it: the last segment extended
)

func (l Limit) String() string {
	switch l {
	case InRange:
		return "in range"
	case ClampedBelow:
		return "clamped below"
	case ClampedAbove:
		return "clamped above"
	case ExtrapolatedAbove:
		return "extrapolated above"
	}
	return fmt.Sprintf("limit(%d)", uint8(l))
}

// AxisRange is a table query against one axis of the table.
type AxisRange struct {
	Axis  string // the table axis: "tokens", "m", "kv_len", "bytes"
	Limit Limit
}

// Source is the provenance of one Estimate. Strings are static (constants
// or names held by a table), so building a Source never allocates.
type Source struct {
	Kind       SourceKind
	Formula    string  // the formula in words, e.g. "max(bytes/(BW*eff), flops/(peak*eff)) + t_kernel"
	Efficiency float64 // fraction of peak used (roofline); 0 when not applicable
	Bound      string  // "memory", "compute", "latency" or "" when not applicable
	Table      string  // calibration file and table name (Kind == Table)
	RowLo      int     // first table row used (1-based, Kind == Table)
	RowHi      int     // last table row used
	Note       string  // anything else a reader needs: clamping, a correction applied
	// Policy says which calibration table the source policy chose and
	// why (Kind == Table; kernels' Tables): "perfdb vllm 0.24.0 moe rows
	// (measured on the scenario's engine: outranks the proxy kernels)".
	// It survives a Note that a caller replaces.
	Policy string
	// Range says where the query left the table's measured range (Kind ==
	// Table), or is nil when it fell inside on every axis. It points at
	// what the table holds for that case (read-only, so building a Source
	// still never allocates), and survives a Note that a caller replaces
	// (a floor, a share of a module table).
	Range *Range
}

// Range is how a table query left the table's measured range.
type Range struct {
	// Axes has one entry per table axis, in table order (unused entries
	// are zero); at least one has a Limit other than InRange.
	Axes [2]AxisRange
	// Note says the same in words, as Note begins with it:
	// "clamped: kv_len above the measured range".
	Note string
}

// OutOfRange reports whether the query left the table's measured range on
// some axis (clamped or extrapolated).
func (s Source) OutOfRange() bool { return s.Range != nil }

// Describe renders the source in one line; a roofline's efficiency is
// left out when it is 0 (not applicable).
func (s Source) Describe() string {
	switch s.Kind {
	case Table:
		d := fmt.Sprintf("table %s rows %d-%d", s.Table, s.RowLo, s.RowHi)
		if s.Note != "" {
			d += " (" + s.Note + ")"
		}
		if s.Policy != "" {
			d += "; chosen: " + s.Policy
		}
		return d
	case Fixed:
		if s.Note != "" {
			return "fixed: " + s.Formula + " (" + s.Note + ")"
		}
		return "fixed: " + s.Formula
	}
	d := "roofline " + s.Formula
	if s.Efficiency != 0 { // 0: no single efficiency applies (alpha-beta collectives)
		d += fmt.Sprintf(", eff %.2f", s.Efficiency)
	}
	if s.Bound != "" {
		d += ", " + s.Bound + "-bound"
	}
	if s.Note != "" {
		d += " (" + s.Note + ")"
	}
	return d
}

// Estimate is the predicted cost of one op (or a sum of ops).
// Lo <= Time <= Hi bound the prediction; a roofline estimate carries a
// stated spread, a table estimate its leave-one-out interpolation error.
type Estimate struct {
	Time   unit.Seconds
	Lo, Hi unit.Seconds
	Bytes  unit.Bytes // bytes moved from/to DRAM (or over the fabric for collectives)
	FLOPs  unit.FLOPs
	// Kernels is the number of kernel launches behind the estimate (0 for a
	// derived quantity); sim multiplies it by the per-launch host cost to
	// fill the launch category.
	Kernels float64
	Source  Source
}

// Scale returns e repeated n times (n kernels of the same shape): time,
// interval, bytes and FLOPs multiply by n; the source is kept.
func (e Estimate) Scale(n float64) Estimate {
	e.Time *= unit.Seconds(n)
	e.Lo *= unit.Seconds(n)
	e.Hi *= unit.Seconds(n)
	e.Bytes *= unit.Bytes(n)
	e.FLOPs *= unit.FLOPs(n)
	e.Kernels *= n
	return e
}
