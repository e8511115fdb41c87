package plan

import "fmt"

// Axis is one named dimension of a sweep. plan does not interpret names or
// values: the apply function passed to Sweep does.
type Axis struct {
	Name   string
	Values []string
}

// Setting is one axis at one of its values.
type Setting struct {
	Name, Value string
}

// MaxSweepPoints bounds the product of the axes' lengths.
const MaxSweepPoints = 1 << 20

// SweepPoint is the value apply returned for one combination.
type SweepPoint[T any] struct {
	Index int // position in the product order (see Sweep)
	Value T
}

// Skip is a combination apply refused, with its reason.
type Skip struct {
	Index  int
	Reason string
}

// SweepResult holds a sweep's points and skips, each in product order.
type SweepResult[T any] struct {
	Axes    []Axis
	Points  []SweepPoint[T]
	Skipped []Skip
	// Reasons counts the distinct skip reasons, in order of first
	// appearance (product order).
	Reasons []ReasonCount
}

// Settings returns the combination at product index i.
func (r *SweepResult[T]) Settings(i int) []Setting { return settings(r.Axes, i) }

// Sweep evaluates apply at every combination of one value per axis, in
// product order: the first axis varies slowest, the last fastest, each in
// the order of its values (index i = sum over axes of pick_a x product of
// the later axes' lengths). A combination apply returns an error for is
// skipped with err.Error() as its reason. apply runs on workers goroutines
// (0: GOMAXPROCS) and must be safe for concurrent use; set is its own to
// keep. The result does not depend on workers. No axes: one combination
// with no settings.
func Sweep[T any](axes []Axis, apply func(set []Setting) (T, error), workers int) (_ *SweepResult[T], err error) {
	defer asInput(&err)
	n, err := sweepSize(axes)
	if err != nil {
		return nil, err
	}
	vals := make([]T, n)
	errs := make([]error, n)
	_ = forEach(n, workers, func(i int) error {
		vals[i], errs[i] = apply(settings(axes, i))
		return nil
	})
	r := &SweepResult[T]{Axes: axes}
	var reasons []string
	for i := range n {
		if errs[i] != nil {
			r.Skipped = append(r.Skipped, Skip{Index: i, Reason: errs[i].Error()})
			reasons = append(reasons, errs[i].Error())
			continue
		}
		r.Points = append(r.Points, SweepPoint[T]{Index: i, Value: vals[i]})
	}
	r.Reasons = countReasons(reasons)
	return r, nil
}

func sweepSize(axes []Axis) (int, error) {
	n := 1
	seen := map[string]bool{}
	for _, a := range axes {
		if a.Name == "" {
			return 0, fmt.Errorf("sweep: an axis has no name")
		}
		if seen[a.Name] {
			return 0, fmt.Errorf("sweep: axis %q given twice", a.Name)
		}
		seen[a.Name] = true
		if len(a.Values) == 0 {
			return 0, fmt.Errorf("sweep: axis %q has no values", a.Name)
		}
		if n > MaxSweepPoints/len(a.Values) {
			return 0, fmt.Errorf("sweep: more than %d combinations (axis %q makes it %g)", MaxSweepPoints, a.Name,
				float64(n)*float64(len(a.Values)))
		}
		n *= len(a.Values)
	}
	return n, nil
}

// settings decodes product index i (mixed radix, last axis fastest).
func settings(axes []Axis, i int) []Setting {
	set := make([]Setting, len(axes))
	for a := len(axes) - 1; a >= 0; a-- {
		k := len(axes[a].Values)
		set[a] = Setting{Name: axes[a].Name, Value: axes[a].Values[i%k]}
		i /= k
	}
	return set
}
