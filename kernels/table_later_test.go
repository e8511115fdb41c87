package kernels

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
)

// TestDeferredTables: a deferred MoE or GQA table builds nothing until a
// query matches its key, then answers as the eager table does.
func TestDeferredTables(t *testing.T) {
	key := MoEKey{Quant: "int4_wo", Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048, Distribution: "balanced"}
	var pts []MoEPoint
	for i, tok := range []int{1, 2, 4, 8, 16, 64, 256} {
		pts = append(pts, MoEPoint{Tokens: tok, MoETP: 1, EP: 8, Latency: unit.Seconds(50+10*i+i*i) * unit.Microsecond, Row: i + 1})
	}
	eager, err := NewMoETable("t", key, pts)
	require.NoError(t, err)
	lazy, err := NewMoETableDeferred("t", key, pts)
	require.NoError(t, err)
	assert.Equal(t, eager.Raised(), lazy.Raised())
	assert.Equal(t, "t", lazy.Name())

	other := MoEShape{Tokens: 8, GlobalTokens: 8, Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, MoETP: 1, EP: 8, Weight: dtype.INT4G32}
	_, ok := lazy.Lookup(other)
	assert.False(t, ok)
	assert.NotNil(t, lazy.later.p.build, "a query for another shape builds nothing")

	for _, tok := range []int{1, 3, 8, 100, 1000} {
		s := other
		s.Experts, s.Tokens, s.GlobalTokens = 384, tok, tok
		we, wok := eager.Lookup(s)
		ge, gok := lazy.Lookup(s)
		assert.Equal(t, wok, gok, "tokens %d", tok)
		assert.Equal(t, we, ge, "tokens %d", tok)
	}
	assert.Nil(t, lazy.later.p.build, "built on the first match")
	ep, en := eager.LOOError()
	lp, ln := lazy.LOOError()
	assert.Equal(t, ep, lp)
	assert.Equal(t, en, ln)

	gkey := GQAKey{HeadDim: 128, KV: "bf16"}
	var gpts []GQAPoint
	row := 0
	for _, b := range []int{1, 8, 64} {
		for _, kv := range []int{1024, 8192, 65536} {
			row++
			gpts = append(gpts, GQAPoint{Heads: 8, KVHeads: 1, Batch: b, KVLen: kv, Latency: unit.Seconds(5+float64(b*kv)/1e4) * unit.Microsecond, Row: row})
		}
	}
	ge, err := NewGQATable("g", gkey, gpts)
	require.NoError(t, err)
	gl, err := NewGQATableDeferred("g", gkey, gpts)
	require.NoError(t, err)
	_, ok = gl.Lookup(GQAShape{HeadDim: 64, KV: dtype.KVBF16, Heads: 8, KVHeads: 1, Batch: 4, Context: 4096})
	assert.False(t, ok)
	assert.NotNil(t, gl.later.p.build)
	q := GQAShape{HeadDim: 128, KV: dtype.KVBF16, Heads: 8, KVHeads: 1, Batch: 4, Context: 4096}
	we, wok := ge.Lookup(q)
	gotE, gok := gl.Lookup(q)
	assert.True(t, wok)
	assert.Equal(t, wok, gok)
	assert.Equal(t, we, gotE)
}

// TestDeferredConcurrent: plan's goroutines share the tables; the first
// lookups of a deferred table race to build it (run with -race).
func TestDeferredConcurrent(t *testing.T) {
	key := MoEKey{Quant: "int4_wo", Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048, Distribution: "balanced"}
	var pts []MoEPoint
	for i, tok := range []int{1, 8, 64, 512} {
		pts = append(pts, MoEPoint{Tokens: tok, MoETP: 1, EP: 8, Latency: unit.Seconds(50+20*i) * unit.Microsecond, Row: i + 1})
	}
	eager, err := NewMoETable("t", key, pts)
	require.NoError(t, err)
	lazy, err := NewMoETableDeferred("t", key, pts)
	require.NoError(t, err)
	s := MoEShape{Tokens: 32, GlobalTokens: 32, Experts: 384, TopK: 8, Hidden: 7168, Inter: 2048, MoETP: 1, EP: 8, Weight: dtype.INT4G32}
	want, _ := eager.Lookup(s)
	got := make([]float64, 8)
	done := make(chan int)
	for i := range got {
		go func() {
			e, _ := lazy.Lookup(s)
			got[i] = float64(e.Time)
			_ = lazy.Name()
			done <- i
		}()
	}
	for range got {
		<-done
	}
	for _, g := range got {
		assert.Equal(t, float64(want.Time), g)
	}
}
