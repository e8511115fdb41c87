package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
)

// Kernels is the report of `moecast trace kernels`: the kernels of one trace
// by total GPU time, with the category and op the rules give them.
type Kernels struct {
	File   string
	Result *trace.Result
	Top    int // the N kernels with the most time; 0: all
}

// Total is the summed GPU time of all the trace's kernels.
func (k *Kernels) Total() unit.Seconds {
	var total unit.Seconds
	for _, ks := range k.Result.Kernels {
		total += ks.Total
	}
	return total
}

// Table builds the kernel table; full adds the full kernel name (JSON, CSV).
func (k *Kernels) Table(full bool) *Table {
	total := k.Total()
	cols := []Column{{Name: "name", Left: true}, {Name: "category"}, {Name: "op"}, {Name: "count"},
		{Name: "total_ms", Text: "%.3f"}, {Name: "mean_us", Text: "%.1f"}, {Name: "share_%", Text: "%.1f"}, {Name: "collective", Left: true}}
	if full {
		cols = append(cols, Column{Name: "kernel"})
	}
	t := &Table{Columns: cols}
	for i, ks := range k.Result.Kernels {
		if k.Top > 0 && i == k.Top {
			break
		}
		var coll any
		if c := commonCollective(ks.Collectives); c != "" {
			coll = c
		}
		share := 0.0 // kernels all of zero duration: no share rather than 0/0
		if total > 0 {
			share = 100 * float64(ks.Total) / float64(total)
		}
		row := []any{shortKernelName(ks.Name), ks.Class.Category.String(), ks.Class.Op, ks.Count,
			ms(ks.Total), (ks.Total / unit.Seconds(ks.Count)).Us(), share, coll}
		if full {
			row = append(row, ks.Name)
		}
		t.Add(row...)
	}
	return t
}

// Render writes the kernel list in format f: text with a header line and
// shortened names; JSON and CSV also carry the full name.
func (k *Kernels) Render(w io.Writer, f Format) error {
	if f != JSON && f != CSV {
		fmt.Fprintf(w, "%s: %d kernel events, %d names, %.3f ms of GPU time\n", k.File, k.Result.KernelCount, len(k.Result.Kernels), ms(k.Total()))
		return k.Table(false).Render(w, Text)
	}
	return k.Table(true).Render(w, f)
}

// CheckFinite checks that every number of fr that the summary and kernels
// outputs show is finite. The reader rejects an infinite, negative or
// absurd ts or dur as a malformed event, so a NaN or Inf cannot arise from
// a trace; this check stands behind it, so that no output (JSON cannot
// encode NaN, and text and CSV would print it as a number) shows one.
func CheckFinite(fr trace.FileResult) error {
	var what string
	var val float64
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	find := func() bool { // sets what and val to the first non-finite number
		if r := fr.Result; r != nil {
			for _, st := range r.Steps {
				for k, v := range [...]unit.Seconds{st.Wall, st.Busy, st.Idle} {
					if !ok(float64(v)) {
						what, val = fmt.Sprintf("step %d %s time", st.Index, [...]string{"wall", "busy", "idle"}[k]), float64(v)
						return true
					}
				}
				for _, c := range traceCategories() {
					if !ok(float64(st.ByCategory[c])) || !ok(float64(st.Exposed[c])) {
						what, val = fmt.Sprintf("step %d %s time", st.Index, c), float64(st.ByCategory[c]+st.Exposed[c])
						return true
					}
				}
			}
			for _, k := range r.Kernels {
				if !ok(float64(k.Total)) {
					what, val = fmt.Sprintf("total time of kernel %q", k.Name), float64(k.Total)
					return true
				}
			}
		}
		sm := fr.Summary
		for _, v := range []unit.Seconds{sm.Median, sm.P10, sm.P90} {
			if !ok(float64(v)) {
				what, val = "step time percentile", float64(v)
				return true
			}
		}
		for _, c := range traceCategories() {
			if !ok(float64(sm.ByCategory[c])) || !ok(float64(sm.Exposed[c])) || !ok(sm.Share[c]) {
				what, val = c.String()+" summary", float64(sm.ByCategory[c]+sm.Exposed[c])+sm.Share[c]
				return true
			}
		}
		return false
	}
	if find() {
		return &NonFiniteError{File: fr.File, What: what, Value: val}
	}
	return nil
}

// NonFiniteError is CheckFinite's error: a figure of a trace's analysis
// that is not a finite number, a fault of the trace (its input), not of
// moecast.
type NonFiniteError struct {
	File  string  // the trace file
	What  string  // the figure: "step 3 wall time", "total time of kernel ..."
	Value float64 // NaN or ±Inf
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("%s: %s is %v, not a finite number: the trace holds times the analysis cannot use", e.File, e.What, e.Value)
}

// commonCollective describes the most frequent collective size of a kernel:
// "allreduce 6637568 Float x2" (+N sizes when there are several).
func commonCollective(cs []trace.CollectiveSize) string {
	if len(cs) == 0 {
		return ""
	}
	best := cs[0]
	for _, c := range cs[1:] {
		if c.Count > best.Count {
			best = c
		}
	}
	s := fmt.Sprintf("%s %d %s x%d", best.Collective, best.InMsgNelems, best.DType, best.GroupSize)
	if len(cs) > 1 {
		s += fmt.Sprintf(" (+%d sizes)", len(cs)-1)
	}
	return s
}

// maxKernelName bounds shortened kernel names.
const maxKernelName = 80

// shortKernelName shortens a demangled kernel name for a table: it drops a
// leading "void " (and a std::enable_if<...>::type return type), the
// argument list, and template arguments nested deeper than one level, then
// cuts to maxKernelName runes. "void vllm::act_and_mul_kernel<c10::BFloat16,
// &vllm::silu_kernel<c10::BFloat16>, true>(...)" becomes
// "vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<…>, true>".
func shortKernelName(name string) string {
	if strings.HasPrefix(name, "Memcpy") || strings.HasPrefix(name, "Memset") {
		return name
	}
	s := strings.TrimPrefix(name, "void ")
	if strings.HasPrefix(s, "std::enable_if<") {
		if i := strings.Index(s, ">::type "); i >= 0 {
			s = s[i+len(">::type "):]
		}
	}
	// drop the argument list: the last top-level "(...)" at the end
	if strings.HasSuffix(s, ")") {
		depth := 0
		for i := len(s) - 1; i >= 0; i-- {
			switch s[i] {
			case ')':
				depth++
			case '(':
				depth--
			}
			if depth == 0 {
				if i > 0 {
					s = s[:i]
				}
				break
			}
		}
	}
	// collapse templates nested deeper than one level
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<':
			depth++
			if depth == 2 {
				b.WriteString("<…")
				continue
			}
		case '>':
			depth--
			if depth == 1 {
				b.WriteString(">")
				continue
			}
		}
		if depth < 2 {
			b.WriteRune(r)
		}
	}
	out := b.String()
	if r := []rune(out); len(r) > maxKernelName {
		out = string(r[:maxKernelName-1]) + "…"
	}
	return out
}

// Views of the kernel table: it renders every format; the trace's
// warnings, each after the file's name, go to stderr before the text
// form only.
func (k *Kernels) Views() Views {
	warns := make([]string, len(k.Result.Warnings))
	for i, w := range k.Result.Warnings {
		warns[i] = k.File + ": " + w
	}
	return Views{Render: k.Render, Warnings: warns, WarnOn: []Format{Text}}
}
