package sim

import (
	"fmt"
	"testing"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/stretchr/testify/require"
)

// ctxMLATable is a calibrated MLA module whose time grows with the
// batch's KV read (batch x context), so that the module's split over its
// ops changes from step to step.
type ctxMLATable struct{ mlaTable }

func (ctxMLATable) MLAModule(s kernels.MLAShape) (cost.Estimate, bool) {
	t := 30*unit.Microsecond + unit.Seconds(float64(s.Batch*s.Context))*2*unit.Nanosecond
	return cost.Estimate{Time: t, Lo: t * 0.8, Hi: t * 1.3, Kernels: 3,
		Source: cost.Source{Kind: cost.Table, Table: "test mla module"}}, true
}

// timesSteps is a serving run's steps in miniature: decode runs whose
// contexts grow step by step (the template's replays), the batch going up
// and down (new templates), mixed and prefill-only steps between them,
// and a decode run at mixed contexts.
func timesSteps(queries int) [][]Seq {
	var steps [][]Seq
	for _, b := range []int{1, 64, 7, 64, 300, 600, 1} {
		for ctx := 1000; ctx < 1012; ctx++ {
			steps = append(steps, decodes(b, ctx, queries))
		}
		mixed := decodes(b, 3000, queries)
		for i := range mixed {
			mixed[i].Context += 37 * i
		}
		steps = append(steps, mixed,
			append(decodes(b, 2000, queries), Seq{Query: 512, Context: 1024, Prefill: true}),
			[]Seq{{Query: 300, Prefill: true}, {Query: 40, Context: 8, Prefill: true}})
	}
	return steps
}

// TestKeyTimesEqual: KeyTimes through one OpMemo gives StepBatch's step
// and category times bit for bit over a run of steps, in every setup, with
// graphs and eager, launch ahead or per kernel, with a calibrated MLA
// module whose time depends on the context, and the decode-step template
// is replayed (most decode steps do not record it again).
func TestKeyTimesEqual(t *testing.T) {
	type variant struct {
		name string
		set  func(*Config)
	}
	variants := []variant{
		{"", func(*Config) {}},
		{"launch ahead", func(c *Config) { c.EngineLaunch, c.LaunchAhead = true, true }},
		{"eager", func(c *Config) { c.Graphs = false }},
		{"eager launch ahead", func(c *Config) { c.Graphs, c.EngineLaunch, c.LaunchAhead = false, true, true }},
		{"mla table", func(c *Config) { c.KernelTables = ctxMLATable{} }},
		{"mla table eager", func(c *Config) { c.KernelTables, c.Graphs = ctxMLATable{}, false }},
		{"capture 64", func(c *Config) { c.KernelTables, c.CaptureSize = ctxMLATable{}, 64 }},
	}
	for _, st := range setups {
		for _, v := range variants {
			c := st.config(t)
			v.set(&c)
			s, err := New(c)
			require.NoError(t, err, "%s %s", st.name, v.name)
			memo := s.NewOpMemo()
			steps := timesSteps(s.queries)
			records := 0
			for i, seqs := range steps {
				var k StepKey
				require.NoError(t, s.KeyMemo(seqs, memo, &k))
				was := memo.tmpl.ok && memo.tmpl.key == tmplKeyOf(&k.passes)
				if k.md == modeDecode && !was {
					records++
				}
				var got StepTimes
				s.KeyTimes(&k, memo, &got)
				want := stepBatch(t, s, seqs)
				require.Equal(t, want.Step.Time, got.Step, "%s %s step %d", st.name, v.name, i)
				for cat := range want.Breakdown {
					require.Equal(t, want.Breakdown[cat].Time, got.Cats[cat], "%s %s step %d %s", st.name, v.name, i, cost.Category(cat))
				}
				var plain StepTimes
				s.KeyTimes(&k, nil, &plain)
				require.Equal(t, got, plain, "%s %s step %d without memo", st.name, v.name, i)
			}
			// 7 batches x 13 decode steps: one record per batch, and the
			// mixed-context run after it.
			require.Less(t, records, 7*4, "%s %s: the template is replayed", st.name, v.name)
		}
	}
}

// TestKeyMemoEqualsKey: KeyMemo's routing loads from the memo give Key's
// keys.
func TestKeyMemoEqualsKey(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		memo := s.NewOpMemo()
		for i, seqs := range timesSteps(s.queries) {
			want, err := s.Key(seqs)
			require.NoError(t, err)
			var got StepKey
			require.NoError(t, s.KeyMemo(seqs, memo, &got))
			require.Equal(t, want, got, "%s step %d", st.name, i)
		}
	}
}

// TestKeyMemoNEqualsRepeated: KeyMemoN of n copies of a batch is Key of
// the copies written out (decodes, prefill chunks whose pair sums are
// floats, speculative queries), and over the batch limit it fails as Key
// does.
func TestKeyMemoNEqualsRepeated(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		memo := s.NewOpMemo()
		for i, seqs := range timesSteps(s.queries) {
			for _, n := range []int{1, 2, 3, 8} {
				var rep []Seq
				for range n {
					rep = append(rep, seqs...)
				}
				want, err := s.Key(rep)
				require.NoError(t, err)
				var got StepKey
				require.NoError(t, s.KeyMemoN(seqs, n, memo, &got))
				require.Equal(t, want, got, "%s step %d x%d", st.name, i, n)
			}
		}
		var k StepKey
		err := s.KeyMemoN(decodes(3, 100, 1), MaxBatchSize/2, memo, &k)
		require.ErrorContains(t, err, fmt.Sprintf("%d sequences exceed", 3*(MaxBatchSize/2)))
		bad := []Seq{{Query: 1, Context: 10}, {Query: 0, Context: 10, Prefill: true}}
		_, want := s.Key(append(append([]Seq(nil), bad...), bad...))
		require.Error(t, want)
		require.EqualError(t, s.KeyMemoN(bad, 2, memo, &k), want.Error())
	}
}
