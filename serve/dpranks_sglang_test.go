package serve

import (
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sglangTrace is SGLang with DP attention over ranks ranks serving the
// requests of lens ({input, output} tokens), all sent at t = 0.
func sglangTrace(ranks int, lens [][2]int) Config {
	tr := make([]TraceRequest, len(lens))
	for i, l := range lens {
		tr[i] = TraceRequest{InputTokens: l[0], OutputTokens: l[1]}
	}
	cfg := point(SGLang, len(lens), len(lens), 16, 4)
	cfg.Workload.Trace = tr
	cfg.Memory.Groups = ranks
	return cfg
}

// TestSGLangDPRanksOwnQueues: SGLang's DataParallelController deals the
// requests to the DP-attention ranks round robin and each rank's
// scheduler prefills its own queue under its own budget
// (chunked_prefill_size / dp_size). Prompts of 4096, 16, 4096, 16 tokens
// with a budget of 8192 over two ranks: rank 0 gets both long prompts
// and prefills one per step, rank 1 both short ones in the first step;
// the first step costs rank 0's 4096-token batch on every rank (the
// slowest rank sets the step). Pooled under one scheduler the ranks
// share one queue: the second long prompt takes rank 1's budget in the
// first step and the last short prompt waits.
func TestSGLangDPRanksOwnQueues(t *testing.T) {
	cfg := sglangTrace(2, [][2]int{{4096, 4}, {16, 4}, {4096, 4}, {16, 4}})
	cfg.MaxNumBatchedTokens, cfg.MaxPrefillTokens = 8192, 16384

	rec := &stepRecorder{linear: realistic}
	e, err := simulate(cfg, rec)
	require.NoError(t, err)
	require.NotNil(t, e.dp, "per-rank schedulers")
	q := e.reqs
	assert.Equal(t, []int{4096, 4096}, rec.first, "first step: rank 0's batch, once per rank")
	assert.Equal(t, q[0].ttft, q[1].ttft, "rank 1's prompt prefilled in the same step")
	assert.Equal(t, q[0].ttft, q[3].ttft, "rank 1 prefills both of its prompts at once")
	assert.Greater(t, q[2].ttft, q[0].ttft, "rank 0's second long prompt waits for its own budget")

	cfg.PooledSGLangDP = true
	rec = &stepRecorder{linear: realistic}
	p, err := simulate(cfg, rec)
	require.NoError(t, err)
	assert.Nil(t, p.dp)
	assert.Equal(t, []int{4096, 16, 4080}, rec.first, "pooled: one queue over both ranks' budgets")
	assert.Greater(t, p.reqs[3].ttft, p.reqs[0].ttft, "pooled: the last short prompt waits")
}

// TestSGLangDPRanksOwnKV: each DP-attention rank has its own KV pool of
// KVCapacity per GPU. Three requests of 1000 + 200 tokens on two ranks of
// 2000 tokens each: round robin puts the first and the third on rank 0,
// whose pool cannot admit the third (new-token-ratio admission) until the
// first finishes, though rank 1 has room; pooled, the 4000 tokens admit
// all three at once. The same holds for a disaggregated decode pool's
// ranks.
func TestSGLangDPRanksOwnKV(t *testing.T) {
	lens := [][2]int{{1000, 200}, {1000, 200}, {1000, 200}}
	tokens := unit.Bytes(2000)
	t.Run("aggregated", func(t *testing.T) {
		run := func(pooled bool) []request {
			cfg := sglangTrace(2, lens)
			cfg.Memory.KVCapacity = tokens * cfg.Memory.KVBytesPerToken
			cfg.PooledSGLangDP = pooled
			e, _ := simRun(t, cfg, realistic)
			for _, q := range e.reqs {
				require.Equal(t, int32(200), q.gen)
			}
			return e.reqs
		}
		own, pooled := run(false), run(true)
		assert.GreaterOrEqual(t, own[2].ttft, own[0].e2e, "rank 0's pool holds one request: the third waits for the first")
		assert.Less(t, pooled[2].ttft, pooled[0].e2e/4, "pooled: all three admitted at once")
	})
	t.Run("disaggregated decode", func(t *testing.T) {
		run := func(pooled bool) []request {
			cfg := disagg(sglangTrace(1, lens), 1, 1, 1e12, 0)
			cfg.Disagg.Decode.Memory.Groups = 2
			cfg.Disagg.Decode.Memory.KVCapacity = tokens * cfg.Memory.KVBytesPerToken
			cfg.PooledSGLangDP = pooled
			e, r := simRun(t, cfg, realistic)
			assert.Equal(t, 3, r.Completed)
			assert.Equal(t, pooled, e.cl.decode[0].dp == nil)
			return e.reqs
		}
		own, pooled := run(false), run(true)
		dec := own[0].e2e - own[0].ttft
		assert.Greater(t, own[2].e2e, own[0].e2e+0.8*dec, "the third request decodes after the first on rank 0")
		assert.Less(t, pooled[2].e2e, pooled[0].e2e+0.5*dec, "pooled: the three decode together")
	})
}

// TestSGLangBootstrapBalance: a PD prefill server's ranks are picked by
// the request's bootstrap room, a fixed function of the seed and the
// request, spread over every rank; the decode server's are dealt round
// robin.
func TestSGLangBootstrapBalance(t *testing.T) {
	d := &dpRanks{in: make([]*instance, 4)}
	pick := sglangBootstrapBalance(7)
	seen := map[int]int{}
	for r := range int32(400) {
		i := pick(d, r)
		require.Equal(t, i, pick(d, r), "the same room for the same request")
		seen[i]++
	}
	for i := range 4 {
		assert.Greater(t, seen[i], 60, "rank %d gets its share", i)
	}
	assert.NotEqual(t, []int{pick(d, 0), pick(d, 1), pick(d, 2), pick(d, 3)}, []int{0, 1, 2, 3}, "not round robin")
	var rr []int
	for r := range int32(6) {
		rr = append(rr, sglangBalance(d, r))
	}
	assert.Equal(t, []int{0, 1, 2, 3, 0, 1}, rr)
}

// TestSGLangDPRanksMaxRunning: --max-running-requests is split over the
// DP-attention ranks (max_running_requests // dp_size per rank).
func TestSGLangDPRanksMaxRunning(t *testing.T) {
	cfg := sglangTrace(2, [][2]int{{16, 50}, {16, 50}, {16, 50}, {16, 50}})
	cfg.MaxNumSeqs = 2
	e, _ := simRun(t, cfg, realistic)
	for i, in := range e.dp.in {
		assert.Equal(t, 1, in.sched.(*sglangScheduler).maxSeqs, "rank %d", i)
	}
	// Rank 0 runs requests 0 and 2 one after the other.
	assert.GreaterOrEqual(t, e.reqs[2].ttft, e.reqs[0].e2e)
}
