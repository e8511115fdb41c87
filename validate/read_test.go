package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/trace"
	"github.com/moecast/moecast/validate"
)

// ReadTraces gives the same steps as trace.AnalyzeFiles and keeps the
// trace's metadata.
func TestReadTracesMatchesAnalyzeFiles(t *testing.T) {
	files := []string{vllmGptOss, traceData + "hta_nccl_parser_config_nccl_data.json.gz"}
	ranks, err := validate.ReadTraces(files, trace.FileOptions{})
	require.NoError(t, err)
	want := trace.AnalyzeFiles(files, trace.FileOptions{})
	require.Len(t, ranks, len(want))
	for i := range want {
		require.NoError(t, want[i].Err)
		assert.Equal(t, want[i].Rank, ranks[i].Rank, files[i])
		assert.Equal(t, want[i].Result.Steps, ranks[i].Result.Steps, files[i])
		require.NotNil(t, ranks[i].Meta)
	}
	assert.Empty(t, ranks[0].Collectives, "the TP1 trace runs no collective")
	assert.NotEmpty(t, ranks[1].Collectives, "the DDP trace runs NCCL kernels")
}

func TestReadTracesBadInput(t *testing.T) {
	_, err := validate.ReadTraces([]string{"testdata/gpt-oss-20b_config.json"}, trace.FileOptions{})
	require.ErrorIs(t, err, trace.ErrInput)
	assert.Contains(t, err.Error(), "gpt-oss-20b_config.json")
}

// Two ranks, three all-reduces: rank 1 arrives 10 us late every time, so
// rank 0's kernels last 10 us longer (it waits): start spread 10 us,
// transfer 5 us (rank 1's duration), wait 10 us, rank 1 last to start.
func TestSpreads(t *testing.T) {
	us := func(x float64) unit.Seconds { return unit.Seconds(x * 1e-6) }
	at := func(x float64) trace.Time { return trace.Time(0).Add(us(x)) }
	var r0, r1 []validate.CollectiveKernel
	for j := range 3 {
		s := float64(100 * j)
		r0 = append(r0, validate.CollectiveKernel{Category: cost.AllReduce, Start: at(s), Dur: us(15)})
		r1 = append(r1, validate.CollectiveKernel{Category: cost.AllReduce, Start: at(s + 10), Dur: us(5)})
	}
	r1 = append(r1, validate.CollectiveKernel{Category: cost.AllReduce, Start: at(900), Dur: us(5)})
	sp := validate.Spreads([]validate.Rank{{Rank: 0, Collectives: r0}, {Rank: 1, Collectives: r1}})
	require.Len(t, sp, 1)
	s := sp[0]
	assert.Equal(t, cost.AllReduce, s.Category)
	assert.Equal(t, 3, s.Collectives)
	assert.Equal(t, 1, s.Unpaired)
	assert.InDelta(t, 10, s.StartSpread.Us(), 1e-9)
	assert.InDelta(t, 5, s.Transfer.Us(), 1e-9)
	assert.InDelta(t, 10, s.MaxWait.Us(), 1e-9)
	assert.InDelta(t, 5, s.MeanWait.Us(), 1e-9)
	assert.InDelta(t, 15, s.TotalWait.Us(), 1e-9)
	assert.Equal(t, 1, s.LastRank)
	assert.Equal(t, 3, s.LastRankRuns)
	assert.Nil(t, validate.Spreads([]validate.Rank{{Collectives: r0}}), "one rank: no spread")
}
