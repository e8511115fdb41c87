package kernels

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
)

// moePoint is one row of testdata/perfdb_moe_int4_kimi.csv: a measured
// W4A16 Marlin MoE layer (Kimi-K2.5 dims) copied from aiconfigurator's
// perfdb (testdata/README.md).
type moePoint struct {
	system    string
	tokens    int
	moeTP, ep int
	latencyMs float64
	row       int
}

func readMoEPerfdb(t *testing.T) []moePoint {
	t.Helper()
	var pts []moePoint
	for _, r := range readTestCSV(t, "perfdb_moe_int4_kimi.csv") {
		f := r.fields
		require.Equal(t, "7168", f[3])
		require.Equal(t, "2048", f[4])
		require.Equal(t, "384", f[6])
		pts = append(pts, moePoint{f[0], r.atoi(t, 2), r.atoi(t, 7), r.atoi(t, 8), r.float(t, 10), r.line})
	}
	return pts
}

// perfdbShape is the MoEShape of a perfdb point on one rank, with the
// routing perfdb's "balanced" distribution produces: token t goes to experts
// (t*48/T + 48k) mod 384, k < 8 (the balanced distribution of the MoE rows of
// ai-dynamo/aiconfigurator @ 095f58a,
// aic-core/src/aiconfigurator_core/systems/data/<system>/moe/, as in
// testdata/perfdb_moe_int4_kimi.csv). With expert-TP
// every rank computes all 8T pairs of min(8T, 384) experts on a 1/TP slice;
// with EP8 each token sends exactly one pair to each rank (one expert per
// block of 48), so a rank computes T pairs over min(T, 48) experts.
func perfdbShape(p moePoint) MoEShape {
	s := MoEShape{Tokens: p.tokens, Hidden: 7168, Inter: 2048 / p.moeTP, Weight: dtype.INT4G32,
		GlobalTokens: p.tokens, Experts: 384, TopK: 8, MoETP: p.moeTP, EP: p.ep}
	T := float64(p.tokens)
	if p.ep == 1 {
		s.Pairs = 8 * T
		s.ExpertsTouched = math.Min(8*T, 384)
	} else {
		s.Pairs = T
		s.ExpertsTouched = math.Min(T, 48)
	}
	return s
}

// TestMoERooflineAgainstPerfdb compares the roofline MoE layer with
// aiconfigurator's measured W4A16 Marlin layers (Kimi-K2.5 dims, vLLM
// 0.24.0, TP8 and EP8, 1-16384 tokens, balanced routing) on RTX PRO 6000
// and H200. Stated agreement:
//
//   - within x0.75-x1.25 everywhere except the two cases below;
//   - points whose per-GPU expert bytes fit in L2 (RTX PRO 6000: 128 MB, so
//     1-4 tokens = 25-99 MB): perfdb replays one layer from a CUDA graph
//     without flushing, so the weights come from L2 and the measurement is
//     up to 2x faster than streaming from DRAM, which a real 60-layer step
//     must do; the roofline (DRAM) may be slower there, by up to x2.1;
//   - near the ridge (768-1536 tokens) the kernels reach neither ceiling and
//     the roofline max(memory, compute) is optimistic: at least x0.65;
//   - H200 EP8 at 128-1024 tokens (3-21 tokens per expert): measured time
//     rises in steps (0.42 -> 1.03 ms) while the expert bytes are constant,
//     Marlin tiling effects on Hopper that the roofline does not model: at
//     least x0.45.
func TestMoERooflineAgainstPerfdb(t *testing.T) {
	gpus := map[string]string{"rtx_pro_6000_server": "rtx-pro-6000-server", "h200_sxm": "h200-sxm"}
	n := 0
	for _, p := range readMoEPerfdb(t) {
		g, ok := LookupGPU(gpus[p.system])
		require.True(t, ok)
		c := newCosts(g, true)
		s := perfdbShape(p)
		e := c.MoE(s)
		r := e.Time.Ms() / p.latencyMs
		lo, hi := 0.75, 1.25
		w := MoEWeightBytes(s)
		switch {
		case w <= g.L2:
			hi = 2.1
		case p.system == "h200_sxm" && p.ep == 8 && p.tokens >= 128 && p.tokens <= 1024:
			lo = 0.45
		case p.tokens >= 768 && p.tokens <= 1536:
			lo = 0.65
		}
		assert.True(t, r >= lo && r <= hi,
			"row %d %s tp%d ep%d T=%d (%.1f MB of experts): model %.3f ms, measured %.3f ms, ratio %.2f outside [%.2f, %.2f]",
			p.row, p.system, p.moeTP, p.ep, p.tokens, float64(w)/1e6, e.Time.Ms(), p.latencyMs, r, lo, hi)
		n++
	}
	assert.Equal(t, 108, n)
}
