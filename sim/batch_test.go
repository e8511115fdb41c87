package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"

	"github.com/moecast/moecast/model"
)

func decodes(n, ctx, query int) []Seq {
	out := make([]Seq, n)
	for i := range out {
		out[i] = Seq{Query: query, Context: ctx}
	}
	return out
}

func stepBatch(t *testing.T, s *Sim, seqs []Seq) BatchResult {
	t.Helper()
	var r BatchResult
	require.NoError(t, s.StepBatch(seqs, &r))
	return r
}

// TestStepBatchDecodesEqualStep: a batch of n decodes at context c is
// Step(n, c) exactly, in every setup, with Query 1 or K+1 under
// speculative decoding.
func TestStepBatchDecodesEqualStep(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		for _, b := range []int{1, 7, 64, 300} {
			for _, ctx := range []int{1, 2048, 100000} {
				p, err := s.Step(b, ctx)
				require.NoError(t, err)
				for _, q := range []int{1, s.queries} {
					r := stepBatch(t, s, decodes(b, ctx, q))
					require.Equal(t, p.Step, r.Step, "%s batch %d ctx %d", st.name, b, ctx)
					require.Equal(t, p.Breakdown, r.Breakdown, "%s batch %d ctx %d", st.name, b, ctx)
					assert.Equal(t, b*s.queries, r.Tokens)
				}
			}
		}
	}
}

// compute floor: the step's FLOPs at the GPU's largest dense peak.
func computeFloor(s *Sim, r BatchResult) unit.Seconds {
	peak := s.cfg.GPU.Peak[dtype.BF16]
	for _, p := range s.cfg.GPU.Peak {
		peak = max(peak, p)
	}
	return unit.ComputeTime(r.Step.FLOPs, peak)
}

// TestPrefillInvariants holds prefill and mixed steps to bounds that a
// wrong cost model breaks: roofline floors (weights streamed once, FLOPs
// at the best peak), monotone in chunk tokens and in context, a chunk of
// N tokens dearer than one decode step and cheaper than N of them, a mixed
// step at least each of its parts and at most their sum (weights read
// once), and the parts adding up.
func TestPrefillInvariants(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			c := st.config(t)
			s := st.sim(t)
			one, err := s.Step(1, 2048)
			require.NoError(t, err)
			var prev BatchResult
			for i, n := range []int{16, 128, 512, 2048, 8192, 16384} {
				r := stepBatch(t, s, []Seq{{Query: n, Context: 2048, Prefill: true}})
				what := fmt.Sprintf("chunk %d", n)
				assert.Greater(t, r.Step.Time, one.Step.Time, "%s: above one decode step", what)
				assert.Less(t, float64(r.Step.Time), float64(n)*float64(one.Step.Time), "%s: below %d decode steps", what, n)
				tokens := n * c.GPUs / c.Layout.AttentionTP() // every attention group pads to the busiest
				assert.GreaterOrEqual(t, float64(r.Step.Time), float64(weightFloor(t, c, tokens)), "%s: weight floor", what)
				assert.GreaterOrEqual(t, float64(r.Step.Time), float64(computeFloor(s, r)), "%s: compute floor", what)
				var sum unit.Seconds
				for _, e := range r.Breakdown {
					sum += e.Time
				}
				assert.InEpsilon(t, float64(r.Step.Time), float64(sum), 1e-9, "%s: breakdown adds up", what)
				if i > 0 {
					assert.Greater(t, r.Step.Time, prev.Step.Time, "%s: monotone in tokens", what)
					for cat := range r.Breakdown {
						// Collectives switch algorithm by size; the launch
						// gap of eager mode shrinks as ops grow.
						if cost.Category(cat).IsCollective() || cost.Category(cat) == cost.Launch {
							continue
						}
						assert.GreaterOrEqual(t, float64(r.Breakdown[cat].Time), float64(prev.Breakdown[cat].Time)*(1-1e-12),
							"%s: %s monotone in tokens", what, cost.Category(cat))
					}
				}
				prev = r
			}
			// Monotone in context: of the chunk and of the decodes.
			var lastP, lastD unit.Seconds
			for _, ctx := range []int{0, 1000, 8000, 64000} {
				p := stepBatch(t, s, []Seq{{Query: 1024, Context: ctx, Prefill: true}})
				d := stepBatch(t, s, append(decodes(16, ctx+1, 1), Seq{Query: 512, Context: ctx, Prefill: true}))
				assert.GreaterOrEqual(t, p.Step.Time, lastP, "prefill context %d", ctx)
				assert.GreaterOrEqual(t, d.Step.Time, lastD, "mixed context %d", ctx)
				lastP, lastD = p.Step.Time, d.Step.Time
			}
			// A mixed step costs at least each part and less than both run
			// apart (the weights are read once).
			dec := decodes(32, 4096, 1)
			chunk := []Seq{{Query: 2048, Context: 1024, Prefill: true}}
			rd, rp := stepBatch(t, s, dec), stepBatch(t, s, chunk)
			rm := stepBatch(t, s, append(dec, chunk...))
			assert.GreaterOrEqual(t, rm.Step.Time, rd.Step.Time)
			assert.GreaterOrEqual(t, rm.Step.Time, rp.Step.Time)
			assert.Less(t, rm.Step.Time, rd.Step.Time+rp.Step.Time)
			assert.Equal(t, 32*s.queries+2048, rm.Tokens)
			assert.Equal(t, 32, rm.Decodes)
			assert.Equal(t, 1, rm.Prefills)
			// Attention splits: the mixed step's attention is at least the
			// decode step's and the prefill's.
			assert.GreaterOrEqual(t, rm.Breakdown[cost.Attention].Time, rd.Breakdown[cost.Attention].Time)
			assert.GreaterOrEqual(t, rm.Breakdown[cost.Attention].Time, rp.Breakdown[cost.Attention].Time)
		})
	}
}

// TestPrefillOps: a prefill chunk's ops have the engine's form: MLA runs
// un-absorbed (kv_b_proj over chunk and prefix, attention with q/k
// nope+rope and v v_head_dim per head, causal FLOPs), the absorbed
// W_UK/W_UV bmm's run on the decode tokens only, and the KV-cache write
// covers every new token.
func TestPrefillOps(t *testing.T) {
	st := setups[1] // kimi-k2.5 h200 tp8 ep8
	s := st.sim(t)
	a := s.cfg.Model.Attn
	seqs := append(decodes(3, 4096, 1), Seq{Query: 1000, Context: 500, Prefill: true})
	ops, err := s.ExplainBatch(seqs)
	require.NoError(t, err)
	h := a.Heads / 8
	found := map[string]bool{}
	for _, o := range ops {
		if o.Layer != "moe" {
			continue
		}
		switch {
		case strings.HasPrefix(o.Name, "mla prefill attention"):
			pairs := kernels.CausalPairs(1000, 500, 0)
			want := 2 * pairs * float64(h) * float64(a.QKNopeDim+a.QKRopeDim+a.VHeadDim)
			assert.InEpsilon(t, want, float64(o.Estimate.FLOPs), 1e-9, o.Name)
			found["attn"] = true
		case strings.HasPrefix(o.Name, "kv_b_proj (prefill"):
			assert.Contains(t, o.Shape, "M=1500 ", "chunk + prefix tokens")
			found["kvb"] = true
		case strings.HasPrefix(o.Name, "kv_b_proj W_UK"):
			assert.Contains(t, o.Shape, "M=3 ", "decode tokens only")
			found["uk"] = true
		case strings.HasPrefix(o.Name, "kv_cache write"):
			assert.True(t, strings.HasPrefix(o.Shape, "1003 tokens"), o.Shape)
			found["kv"] = true
		case o.Name == "mla decode attention":
			assert.Contains(t, o.Shape, "batch=3 ctx=4096")
			found["dec"] = true
		}
	}
	assert.Len(t, found, 5, "ops seen: %v", found)
	// A decode step lists no prefill op.
	ops, err = s.Explain(8, 2048)
	require.NoError(t, err)
	for _, o := range ops {
		assert.NotContains(t, o.Name, "prefill", o.Layer)
	}
}

// TestStepBatchContexts: decodes at different contexts cost as many at
// their mean context (KV read linear in the contexts summed) when the
// mean is whole and no context is capped (DSA top-k, sliding window:
// each sequence's keys are capped on its own, so the mix is cheaper),
// and between the cheapest and dearest uniform batch.
func TestStepBatchContexts(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		seqs := append(decodes(8, 1000, 1), decodes(8, 9000, 1)...)
		r := stepBatch(t, s, seqs)
		mean, err := s.Step(16, 5000)
		require.NoError(t, err)
		if s.idxCap() == 0 && s.cfg.Model.Attn.SlidingWindow == 0 {
			assert.Equal(t, mean.Step.Time, r.Step.Time, st.name)
		} else {
			assert.LessOrEqual(t, r.Step.Time, mean.Step.Time, st.name)
		}
		lo, _ := s.Step(16, 1000)
		hi, _ := s.Step(16, 9000)
		assert.True(t, lo.Step.Time <= r.Step.Time && r.Step.Time <= hi.Step.Time, st.name)
	}
}

func TestStepBatchErrors(t *testing.T) {
	s := setups[0].sim(t)
	for _, c := range []struct {
		name string
		seqs []Seq
		want string
	}{
		{"empty", nil, "no sequences"},
		{"decode query", []Seq{{Query: 2, Context: 10}}, "decode query must be 1"},
		{"decode context", []Seq{{Query: 1, Context: 0}}, "decode context"},
		{"prefill query", []Seq{{Query: 0, Prefill: true}}, "prefill query"},
		{"prefill context", []Seq{{Query: 4, Context: -1, Prefill: true}}, "prefill context"},
		{"prefill too long", []Seq{{Query: 4, Context: MaxContext, Prefill: true}}, "prefill context"},
	} {
		var r BatchResult
		err := s.StepBatch(c.seqs, &r)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

func TestStepBatchDoesNotAllocate(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		seqs := append(decodes(31, 2048, 1), Seq{Query: 2048, Context: 4096, Prefill: true})
		var r BatchResult
		allocs := testing.AllocsPerRun(20, func() {
			if err := s.StepBatch(seqs, &r); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, st.name)
	}
}

// TestMixedStepLaunch: with CUDA graphs a decode step pays no host
// launch; a mixed step up to CaptureTokens launches its attention
// eagerly (piecewise graphs) and one above it launches every kernel.
func TestMixedStepLaunch(t *testing.T) {
	st := setups[1] // kimi-k2.5 h200 tp8 ep8, graphs
	s := st.sim(t)
	require.True(t, s.cfg.Graphs)
	launched := func(seqs []Seq) (attn, other int) {
		ops, err := s.ExplainBatch(seqs)
		require.NoError(t, err)
		for _, o := range ops {
			if o.Launch > 0 {
				if o.Category == cost.Attention {
					attn++
				} else {
					other++
				}
			}
		}
		return
	}
	a, o := launched(decodes(64, 2048, 1))
	assert.Zero(t, a+o, "decode step: full graph")
	a, o = launched(append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true}))
	assert.Positive(t, a, "piecewise: attention eager")
	assert.Zero(t, o, "piecewise: the rest in graphs")
	small := stepBatch(t, s, append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true}))
	assert.Positive(t, small.Breakdown[cost.Launch].Time)
	_, o = launched(append(decodes(8, 2048, 1), Seq{Query: CaptureTokens, Prefill: true}))
	assert.Positive(t, o, "above the capture size: eager")
}

// TestCaptureSize: a decode step above Config.CaptureSize tokens per rank
// runs eagerly (every kernel launched from the host) and costs more than
// the same step replayed from a graph; at or below it, a graph; a mixed
// step within it runs piecewise.
func TestCaptureSize(t *testing.T) {
	st := setups[1] // kimi-k2.5 h200 tp8 ep8, graphs
	cases := []struct {
		name      string
		capture   int
		seqs      []Seq
		wantEager bool
	}{
		{"no limit", 0, decodes(600, 2048, 1), false},
		{"at the size", 512, decodes(512, 2048, 1), false},
		{"above the size", 512, decodes(513, 2048, 1), true},
		{"small capture", 64, decodes(65, 2048, 1), true},
		{"mixed within, piecewise", 512, append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true}), false},
		{"mixed above, eager", 64, append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true}), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := st.config(t)
			cfg.CaptureSize = tc.capture
			s, err := New(cfg)
			require.NoError(t, err)
			ops, err := s.ExplainBatch(tc.seqs)
			require.NoError(t, err)
			nonAttn := 0
			for _, o := range ops {
				if o.Launch > 0 && o.Category != cost.Attention {
					nonAttn++
				}
			}
			assert.Equal(t, tc.wantEager, nonAttn > 0, "kernels beyond attention launched eagerly")
			if tc.wantEager {
				cfg.CaptureSize = 0
				g, err := New(cfg)
				require.NoError(t, err)
				assert.Greater(t, stepBatch(t, s, tc.seqs).Step.Time, stepBatch(t, g, tc.seqs).Step.Time, "eager costs more than the graph")
			}
		})
	}
	cfg := st.config(t)
	cfg.CaptureSize = -1
	_, err := New(cfg)
	var fe *model.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "CaptureSize", fe.Field)
}

// TestCaptureBatchesPad: with a capture list, a decode-only step of n
// sequences below the largest size costs what the next captured size
// costs with the padding rows at context 1 (SGLang's replay_prepare); a
// captured size, a step above the largest and a mixed step are priced as
// they are, and so is every step without CUDA graphs; the list must
// ascend.
func TestCaptureBatchesPad(t *testing.T) {
	st := setups[1] // kimi-k2.5 h200 tp8 ep8, graphs
	cfg := st.config(t)
	plain, err := New(cfg)
	require.NoError(t, err)
	cfg.CaptureBatches = []int{1, 2, 4, 8, 16}
	padded, err := New(cfg)
	require.NoError(t, err)

	got := stepBatch(t, padded, decodes(5, 2048, 1)).Step.Time
	want := stepBatch(t, plain, append(decodes(5, 2048, 1), decodes(3, 1, 1)...)).Step.Time
	assert.InDelta(t, float64(want), float64(got), 1e-12, "5 decodes run the graph of 8")
	assert.Greater(t, got, stepBatch(t, plain, decodes(5, 2048, 1)).Step.Time, "padding costs")

	for _, seqs := range [][]Seq{decodes(8, 2048, 1), decodes(17, 2048, 1), append(decodes(5, 2048, 1), Seq{Query: 100, Prefill: true})} {
		assert.Equal(t, stepBatch(t, plain, seqs).Step.Time, stepBatch(t, padded, seqs).Step.Time, "%d seqs: not padded", len(seqs))
	}
	k1, err := padded.Key(decodes(5, 2048, 1))
	require.NoError(t, err)
	k2, err := padded.Key(decodes(6, 2048, 1))
	require.NoError(t, err)
	assert.NotEqual(t, k1, k2, "the key keeps the padded mean context apart")

	cfg.Graphs = false
	eager, err := New(cfg)
	require.NoError(t, err)
	cfg.CaptureBatches = nil
	eagerPlain, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, stepBatch(t, eagerPlain, decodes(5, 2048, 1)).Step.Time, stepBatch(t, eager, decodes(5, 2048, 1)).Step.Time,
		"without CUDA graphs nothing is padded")
	cfg.Graphs = true
	cfg.CaptureBatches = []int{1, 4, 2}
	_, err = New(cfg)
	var fe *model.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "CaptureBatches", fe.Field)
}

// TestEagerPrefill: with Config.EagerPrefill (SGLang) a step with a
// prefill chunk launches every kernel from the host, not only attention,
// and costs more than its piecewise-graph pricing; decode steps still
// replay their graph.
func TestEagerPrefill(t *testing.T) {
	st := setups[1]
	cfg := st.config(t)
	piecewise, err := New(cfg)
	require.NoError(t, err)
	cfg.EagerPrefill = true
	eager, err := New(cfg)
	require.NoError(t, err)
	launched := func(s *Sim, seqs []Seq) (attn, other int) {
		ops, err := s.ExplainBatch(seqs)
		require.NoError(t, err)
		for _, o := range ops {
			if o.Launch > 0 {
				if o.Category == cost.Attention {
					attn++
				} else {
					other++
				}
			}
		}
		return attn, other
	}
	mixed := append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true})
	_, other := launched(piecewise, mixed)
	assert.Zero(t, other, "piecewise: only attention launched eagerly")
	_, other = launched(eager, mixed)
	assert.Positive(t, other, "eager prefill: every kernel launched")
	assert.Greater(t, stepBatch(t, eager, mixed).Step.Time, stepBatch(t, piecewise, mixed).Step.Time)
	dec := decodes(8, 2048, 1)
	assert.Equal(t, stepBatch(t, piecewise, dec).Step.Time, stepBatch(t, eager, dec).Step.Time, "decode steps replay the graph")
}

// TestDecodePiecewise: with Config.DecodePiecewise (vLLM's PIECEWISE) a
// decode step within the capture size launches its attention from the
// host and nothing else, and costs more than the full graph by exactly
// that launch time; above the capture size it is eager either way; mixed
// steps are priced as before; without CUDA graphs it changes nothing.
func TestDecodePiecewise(t *testing.T) {
	st := setups[1]
	cfg := st.config(t)
	cfg.CaptureSize = 512
	full, err := New(cfg)
	require.NoError(t, err)
	cfg.DecodePiecewise = true
	pw, err := New(cfg)
	require.NoError(t, err)
	dec := decodes(8, 2048, 1)
	ops, err := pw.ExplainBatch(dec)
	require.NoError(t, err)
	var attnLaunch unit.Seconds
	for _, o := range ops {
		if o.Launch > 0 {
			assert.Equal(t, cost.Attention, o.Category, "%s launched eagerly", o.Name)
			attnLaunch += o.Launch * unit.Seconds(o.Count)
		}
	}
	require.Positive(t, attnLaunch, "piecewise decode: attention eager")
	f, p := stepBatch(t, full, dec).Step.Time, stepBatch(t, pw, dec).Step.Time
	assert.InDelta(t, float64(f+attnLaunch), float64(p), 1e-12, "the attention launches are the difference")
	for _, seqs := range [][]Seq{decodes(513, 2048, 1), append(decodes(8, 2048, 1), Seq{Query: 100, Prefill: true})} {
		assert.Equal(t, stepBatch(t, full, seqs).Step.Time, stepBatch(t, pw, seqs).Step.Time, "%d seqs: priced as before", len(seqs))
	}
	cfg.Graphs = false
	eagerPW, err := New(cfg)
	require.NoError(t, err)
	cfg.DecodePiecewise = false
	eager, err := New(cfg)
	require.NoError(t, err)
	assert.Equal(t, stepBatch(t, eager, dec).Step.Time, stepBatch(t, eagerPW, dec).Step.Time, "no graphs: nothing to split")
}

// TestPrefillMoEEqualsDecodeAtSameTokens: the MoE layer sees tokens, not
// sequences: a prefill chunk of N tokens from an empty cache and a decode
// step of N sequences route the same tokens, so their MoE time is equal
// (setups without speculative decoding, whose draft passes differ). With
// G attention groups, G chunks of N/G tokens against N decodes.
func TestPrefillMoEEqualsDecodeAtSameTokens(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		if s.cfg.Spec.Active() {
			continue
		}
		for _, n := range []int{1, 64, 1000, 4096} {
			p, err := s.Step(n, 3000)
			require.NoError(t, err)
			g := s.sh.groups
			var chunks []Seq
			for range g {
				chunks = append(chunks, Seq{Query: ceilDiv(n, g), Prefill: true})
			}
			r := stepBatch(t, s, chunks)
			assert.InEpsilon(t, float64(p.Breakdown[cost.MoE].Time), float64(r.Breakdown[cost.MoE].Time), 1e-12, "%s N=%d", st.name, n)
		}
	}
}

// TestMixedStepWithMLATable: with a calibrated MLA module (a decode
// measurement) a mixed step keeps the table for its decodes and adds the
// prefill tokens' own cost: never below the decode step, tending to it as
// the chunk shrinks, and below the two steps run apart.
func TestMixedStepWithMLATable(t *testing.T) {
	for _, table := range []unit.Seconds{50 * unit.Microsecond, 400 * unit.Microsecond, 3 * unit.Millisecond} {
		c := kimiRTX.config(t)
		c.KernelTables = mlaTable{t: table}
		s, err := New(c)
		require.NoError(t, err)
		dec := decodes(16, 2048, 1)
		d := stepBatch(t, s, dec)
		prev := d.Step.Time
		for _, n := range []int{1, 16, 256, 4096} {
			chunk := Seq{Query: n, Context: 100, Prefill: true}
			m := stepBatch(t, s, append(dec, chunk))
			p := stepBatch(t, s, []Seq{chunk})
			assert.GreaterOrEqual(t, m.Step.Time, prev, "table %v chunk %d: monotone, at least the decode step", table, n)
			assert.Less(t, m.Step.Time, d.Step.Time+p.Step.Time, "table %v chunk %d", table, n)
			prev = m.Step.Time
		}
		// Above the table's DRAM floor the chunk adds what it adds
		// without the table (launch aside: it depends on op times).
		if table < 400*unit.Microsecond {
			continue
		}
		plain := kimiRTX.sim(t)
		noLaunch := func(r BatchResult) unit.Seconds { return r.Step.Time - r.Breakdown[cost.Launch].Time }
		for _, n := range []int{1, 512, 4096} {
			seqs := append(decodes(16, 2048, 1), Seq{Query: n, Context: 100, Prefill: true})
			got := noLaunch(stepBatch(t, s, seqs)) - noLaunch(d)
			want := noLaunch(stepBatch(t, plain, seqs)) - noLaunch(stepBatch(t, plain, dec))
			assert.InEpsilon(t, float64(want), float64(got), 1e-9, "table %v chunk %d", table, n)
		}
	}
}

// TestStepBatchMemoEqual: a run of steps priced through one OpMemo (decode
// batches whose contexts change step to step, batch sizes going up and
// down, steps with prefill chunks between them, speculative queries)
// equals StepBatch bit for bit in every setup, and the memo is used (its
// decode entries fill); a memo of another Sim is ignored.
func TestStepBatchMemoEqual(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		memo := s.NewOpMemo()
		var steps [][]Seq
		for _, b := range []int{1, 64, 7, 64, 300, 1} {
			for ctx := 1000; ctx < 1010; ctx++ {
				steps = append(steps, decodes(b, ctx, s.queries))
			}
			steps = append(steps, append(decodes(b, 2000, s.queries), Seq{Query: 512, Context: 1024, Prefill: true}),
				append(decodes(b, 2001, s.queries), Seq{Query: 512, Context: 1536, Prefill: true}),
				[]Seq{{Query: 300, Prefill: true}, {Query: 40, Context: 8, Prefill: true}})
		}
		for i, seqs := range steps {
			var got BatchResult
			require.NoError(t, s.StepBatchMemo(seqs, &got, memo))
			require.Equal(t, stepBatch(t, s, seqs), got, "%s step %d", st.name, i)
		}
		filled := 0
		for _, e := range memo.ents {
			if e.ok {
				filled++
			}
		}
		assert.Positive(t, filled, st.name)
		other := setups[0].sim(t).NewOpMemo()
		var got BatchResult
		require.NoError(t, s.StepBatchMemo(steps[0], &got, other))
		require.Equal(t, stepBatch(t, s, steps[0]), got, st.name)
	}
}

func TestStepBatchMemoDoesNotAllocate(t *testing.T) {
	for _, st := range setups {
		s := st.sim(t)
		memo := s.NewOpMemo()
		seqs := append(decodes(31, 2048, 1), Seq{Query: 2048, Context: 4096, Prefill: true})
		var r BatchResult
		allocs := testing.AllocsPerRun(20, func() {
			seqs[0].Context++
			if err := s.StepBatchMemo(seqs, &r, memo); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, st.name)
	}
}
