package trace

import (
	"bytes"
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/trace/tracegen"
)

var summaryFile = flag.String("summaryfile", "", "trace file for BenchmarkAnalyzeFile (e.g. one written by bench/tracegen)")

// The synthetic vLLM decode trace (tracegen: 61 layers, TP8, batch 32, one
// graph launch per step) analyzes into one decode step per generated step,
// with its all-reduces attributed through the graph launch.
func TestAnalyzeGeneratedTrace(t *testing.T) {
	cfg := tracegen.DefaultConfig()
	cfg.Steps = 6
	var buf bytes.Buffer
	st, err := tracegen.Write(&buf, cfg)
	require.NoError(t, err)
	r, err := NewReader(&buf)
	require.NoError(t, err)
	defer r.Close()
	a := newAnalyzer(Options{})
	var ev Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		a.Add(&ev)
	}
	res := a.Finish()
	require.Len(t, res.Steps, int(st.Steps))
	assert.Equal(t, 0, res.Outside)
	var kernels int
	for _, s := range res.Steps {
		assert.Equal(t, KindDecode, s.Kind)
		assert.Equal(t, cfg.Batch, s.Batch)
		assert.Positive(t, s.ByCategory[cost.AllReduce].Us())
		assert.Positive(t, s.ByCategory[cost.MoE].Us())
		kernels += s.KernelEvents
	}
	assert.EqualValues(t, res.KernelCount, kernels, "every GPU event is in a step")
	var ar, nonCopy int
	for _, k := range res.Kernels {
		if k.Class.Category == cost.AllReduce {
			ar += k.Count
		}
		if k.Class.Op != "memcpy" {
			nonCopy += k.Count
		}
	}
	assert.EqualValues(t, st.Kernels, nonCopy)
	assert.EqualValues(t, st.AllReduces, ar)
	assert.Empty(t, res.Unclassified(), "tracegen uses trace spellings the rules know")
}

// BenchmarkAnalyzer measures the analysis alone (classification, step
// attribution, breakdown) on decoded events: events/s.
func BenchmarkAnalyzer(b *testing.B) {
	cfg := tracegen.DefaultConfig()
	cfg.Steps = 8
	var buf bytes.Buffer
	if _, err := tracegen.Write(&buf, cfg); err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		b.Fatal(err)
	}
	var evs []Event
	for {
		var ev Event
		if err := r.Next(&ev); err != nil {
			break
		}
		evs = append(evs, ev)
	}
	r.Close()
	rules := DefaultRules()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := newAnalyzer(Options{Rules: rules})
		for j := range evs {
			a.Add(&evs[j])
		}
		a.Finish()
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkAnalyzeFile reads, classifies and summarises a trace file given
// with -summaryfile (e.g. a 1 GB bench/tracegen output): MB/s of
// uncompressed JSON.
//
//	go test ./trace -run XXX -bench AnalyzeFile -benchtime 1x -summaryfile bench/out/rank0.pt.trace.json.gz
func BenchmarkAnalyzeFile(b *testing.B) {
	if *summaryFile == "" {
		b.Skip("no -summaryfile")
	}
	var size int64
	for i := 0; i < b.N; i++ {
		fr := AnalyzeFile(*summaryFile, FileOptions{})
		if fr.Err != nil {
			b.Fatal(fr.Err)
		}
		if len(fr.Result.Steps) == 0 {
			b.Fatal("no steps")
		}
		size = fr.Bytes
	}
	b.ReportMetric(float64(size)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
}
