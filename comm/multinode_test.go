package comm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

// TestAcrossNodes: 16 ranks on nvlink4 (8 GPUs a node) with an ib-400
// NIC are priced across nodes, each collective slower than the one-node
// pricing and its source naming the NIC; within a node, or without a
// NIC, nothing changes.
func TestAcrossNodes(t *testing.T) {
	nvl, ok := LookupFabric("nvlink4")
	require.True(t, ok)
	nic, ok := LookupNIC("ib-400")
	require.True(t, ok)
	one := Comm{Fabric: nvl, Graphs: true}
	two := Comm{Fabric: nvl, Graphs: true, NIC: nic}
	b := unit.Bytes(64 << 20)
	for _, tc := range []struct {
		name      string
		one       func(c *Comm, ranks int) (unit.Seconds, string)
		wantInFml string
	}{
		{"all-to-all", func(c *Comm, n int) (unit.Seconds, string) { e := c.AllToAll(n, b); return e.Time, e.Source.Describe() }, "all-to-all across nodes"},
		{"all-reduce", func(c *Comm, n int) (unit.Seconds, string) {
			e := c.AllReduce(NCCL, n, b)
			return e.Time, e.Source.Describe()
		}, "hierarchical all-reduce"},
		{"all-gather", func(c *Comm, n int) (unit.Seconds, string) {
			e := c.AllGather(n, b)
			return e.Time, e.Source.Describe()
		}, "ring across nodes"},
		{"reduce-scatter", func(c *Comm, n int) (unit.Seconds, string) {
			e := c.ReduceScatter(n, b)
			return e.Time, e.Source.Describe()
		}, "ring across nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t1, s1 := tc.one(&one, 16)
			t2, s2 := tc.one(&two, 16)
			assert.Greater(t, float64(t2), float64(t1), "across the NIC is slower")
			assert.Contains(t, s2, tc.wantInFml)
			assert.Contains(t, s2, "across 2 nodes of 8 GPUs: NIC ib-400")
			assert.NotContains(t, s1, "NIC")
			in1, _ := tc.one(&one, 8)
			in2, _ := tc.one(&two, 8)
			assert.Equal(t, in1, in2, "within one node the NIC plays no part")
		})
	}
}

// TestEPAcrossNodes: an EP dispatch across nodes is read from an EP table
// that covers its rank count, else priced on the NIC roofline; within a
// node it is the all-to-all of its bytes.
func TestEPAcrossNodes(t *testing.T) {
	nvl, _ := LookupFabric("nvlink4")
	nic, _ := LookupNIC("ib-400")
	var pts []EPPoint
	for i, tok := range []int{64, 128, 256} {
		pts = append(pts, EPPoint{Hidden: 7168, TopK: 8, Experts: 256, Ranks: 16, TokensPerRank: tok,
			Latency: unit.Seconds(100+100*i) * unit.Microsecond, Row: i + 1})
	}
	tb, err := NewEPTable("ep16.toml#deepep", EPKey{Phase: "dispatch", Impl: "deepep_ll"}, pts)
	require.NoError(t, err)
	shape := EPShape{Phase: "dispatch", Ranks: 16, TokensPerRank: 128, Hidden: 7168, TopK: 8, Experts: 256, BytesPerRank: 8 << 20}

	withTable := Comm{Fabric: nvl, NIC: nic, Tables: &Tables{EPs: []*EPTable{tb}}}
	e := withTable.EP(shape)
	assert.InDelta(t, 200e-6, float64(e.Time), 1e-9)
	assert.Contains(t, e.Source.Describe(), "ep16.toml#deepep")

	roof := Comm{Fabric: nvl, NIC: nic}
	e = roof.EP(shape)
	assert.Contains(t, e.Source.Describe(), "NIC ib-400")

	other := shape
	other.Experts = 128 // no table of this shape: the roofline
	e = withTable.EP(other)
	assert.Contains(t, e.Source.Describe(), "NIC ib-400")

	in := shape
	in.Ranks = 8
	assert.Equal(t, roof.AllToAll(8, in.BytesPerRank), roof.EP(in), "within a node: the all-to-all")
}

// TestEPDeepEPInNode: within one node an engine running DeepEP gets the
// DeepEP table of its kernel set where one covers the ranks and shape, else
// the NCCL all-to-all model with a note saying no table answered; an engine
// without DeepEP keeps the all-to-all.
func TestEPDeepEPInNode(t *testing.T) {
	nvl, _ := LookupFabric("nvlink4")
	var pts []EPPoint
	for i, tok := range []int{1, 8, 64} {
		pts = append(pts, EPPoint{Hidden: 7168, TopK: 8, Experts: 256, Ranks: 8, TokensPerRank: tok,
			Latency: unit.Seconds(12+i) * unit.Microsecond, Row: i + 1})
	}
	tb, err := NewEPTable("h200.toml#deepep_ll", EPKey{Phase: "combine", Impl: DeepEPLowLatency}, pts)
	require.NoError(t, err)
	c := Comm{Fabric: nvl, Tables: &Tables{EPs: []*EPTable{tb}}}
	shape := EPShape{Phase: "combine", Impl: DeepEPLowLatency, Ranks: 8, TokensPerRank: 8, Hidden: 7168, TopK: 8, Experts: 256, BytesPerRank: 1 << 20}

	e := c.EP(shape)
	assert.InDelta(t, 13e-6, float64(e.Time), 1e-12)
	assert.Contains(t, e.Source.Describe(), "h200.toml#deepep_ll")

	for _, tc := range []struct {
		name string
		edit func(*EPShape)
		note string
	}{
		{"normal kernels, no table", func(s *EPShape) { s.Impl = DeepEPNormal }, noteNoDeepEPNormal},
		{"other rank count", func(s *EPShape) { s.Ranks = 4 }, noteNoDeepEPLL},
		{"other phase", func(s *EPShape) { s.Phase = "dispatch" }, noteNoDeepEPLL},
		{"no DeepEP", func(s *EPShape) { s.Impl = "" }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shape
			tc.edit(&s)
			e := c.EP(s)
			want := c.AllToAll(s.Ranks, s.BytesPerRank)
			assert.Equal(t, want.Time, e.Time, "the NCCL all-to-all model")
			assert.Equal(t, tc.note, e.Source.Note)
		})
	}
}
