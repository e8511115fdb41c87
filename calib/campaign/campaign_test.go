package campaign

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm/ncclrun"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/kernels/gpu"
)

func TestPlan(t *testing.T) {
	full, err := NewPlan(Options{})
	require.NoError(t, err)
	assert.True(t, full.Has(opCopy) && full.Has(opOverhead) && full.Has(opMoE) && full.Has(opElementwise) && full.Has(opComm))
	gemmSteps, err := gemmOp{}.Steps(Options{})
	require.NoError(t, err)
	// one GPU: the comm op's quick sweep, a check
	commSteps := len(ncclrun.DefaultPlan(true).Points(1)) * 2
	assert.Equal(t, len(Splits)*len(fullTokens)+2+len(MoEFP8Points(Options{}))+len(MoEMXFP4Points(Options{}))+3*len(elementwiseTokens)+3+gemmSteps+
		len(AttentionPoints(Options{}))+len(MLAModulePoints(Options{}))+len(prefillPoints(Options{}))+commSteps, full.Steps())
	quick, err := NewPlan(Options{Quick: true, Ops: []string{"moe"}})
	require.NoError(t, err)
	assert.False(t, quick.Has(opCopy) || quick.Has(opOverhead))
	assert.Equal(t, len(Splits)*len(quickTokens), quick.Steps())
	fp8, err := NewPlan(Options{Ops: []string{"moe_fp8", "moe_mxfp4"}})
	require.NoError(t, err)
	assert.Equal(t, 3*2*len(fp8Tokens)+3*len(mxfp4Tokens), fp8.Steps())
	qfp8, err := NewPlan(Options{Quick: true, Ops: []string{"moe_fp8", "moe_mxfp4"}})
	require.NoError(t, err)
	assert.Equal(t, len(quickFP8Tokens)+len(quickMXFP4Tokens), qfp8.Steps())
	for _, p := range MoEFP8Points(Options{}) { // block-fp8: 128-row scale blocks
		gu, dn := p.Model.GateUp(p.Split), p.Model.Down(p.Split)
		assert.Equal(t, 0, gu.N%128+gu.K%128+dn.N%128+dn.K%128, "%s %+v: %+v %+v", p.Model.Name, p.Split, gu, dn)
	}
	ew, err := NewPlan(Options{Quick: true, Ops: []string{"elementwise"}})
	require.NoError(t, err)
	assert.Equal(t, 3*len(quickElementwiseTokens)+1, ew.Steps())
	for _, p := range MoEPoints(Options{Quick: true}) {
		gu, dn := p.Model.GateUp(p.Split), p.Model.Down(p.Split)
		assert.Equal(t, 0, gu.N%128+gu.K%128+dn.N%128+dn.K%128, "kernel shapes: %+v %+v", gu, dn)
	}
	assert.Equal(t, Shape{512, 7168}, kimiK25.GateUp(Split{8, 1}))
	assert.Equal(t, Shape{7168, 256}, kimiK25.Down(Split{8, 1}))
	assert.Equal(t, Shape{4096, 7168}, kimiK25.GateUp(Split{1, 8}))
	assert.Equal(t, 48, kimiK25.LocalExperts(Split{1, 8}))

	cases := []struct {
		o    Options
		want string
	}{
		{Options{Ops: []string{"bogus"}}, `--ops "bogus": want some of copy, overhead, moe, moe_fp8, moe_mxfp4, elementwise, attention, prefill, gemm, comm`},
		{Options{Ops: []string{"copy"}}, "needs a table: include one of moe, moe_fp8, moe_mxfp4, elementwise, attention, prefill, gemm, comm"},
		{Options{GPUs: -1}, "--gpus -1: want 1 or more"},
	}
	if _, later := notMeasured["comm"]; later {
		cases = append(cases, struct {
			o    Options
			want string
		}{Options{GPUs: 2}, "--gpus 2: only the comm op uses several GPUs"})
	}
	for name := range notMeasured {
		cases = append(cases, struct {
			o    Options
			want string
		}{Options{Ops: []string{name}}, "--ops " + name + ": not measured yet"})
	}
	for _, tt := range cases {
		_, err := NewPlan(tt.o)
		assert.ErrorContains(t, err, tt.want, "%+v", tt.o)
		assert.ErrorAs(t, err, new(*InputError), "%+v: every refusal of the options is the caller's input", tt.o)
	}
}

// recorded is a campaign result as an H200 gives it (figures of the same
// order as bench/gpu-w4a16-runs; the test checks the file, not the GPU).
func recorded() *Result {
	r := &Result{
		Device:   Device{Name: "NVIDIA H200", UUID: "GPU-0", UUIDs: []string{"GPU-0", "GPU-1"}, SM: "sm_90", SMs: 132, L2Bytes: 60 << 20, Image: "w4a16.sm_90.cubin"},
		Versions: Versions{Driver: "580.159.04", CUDA: "13.0", NCCL: "2.28.9"},
		Outputs: []*Output{
			copyOutput(&copyResult{Bytes: 2 * copyBytes, BytesPerSec: 3.9e12, Timing: unit.Timing{Median: unit.Seconds(2 * copyBytes / 3.9e12), Min: unit.Seconds(1.1e-3), Max: unit.Seconds(1.2e-3)}}),
			overheadOutput(&unit.Timing{Median: unit.Seconds(1.1e-6), Min: unit.Seconds(1.0e-6), Max: unit.Seconds(1.3e-6), Eager: unit.Seconds(4.6e-6)}),
		},
	}
	var moe []MoEResult
	for _, p := range MoEPoints(Options{Quick: true}) {
		us := 10 + 0.2*float64(p.Tokens)/float64(p.Split.EP)
		moe = append(moe, MoEResult{Point: p, Layer: unit.Timing{Median: unit.Seconds((us + 7) * 1e-6)}, Experts: unit.Timing{Median: unit.Seconds(us * 1e-6), Min: unit.Seconds(us * 0.99e-6), Max: unit.Seconds(us * 1.02e-6)},
			Router: unit.Timing{Median: unit.Seconds(3e-6)}, Align: unit.Timing{Median: unit.Seconds(4e-6)}, GateUp: unit.Timing{Median: unit.Seconds(us * 0.5e-6)}, Act: unit.Timing{Median: unit.Seconds(2e-6)},
			Down: unit.Timing{Median: unit.Seconds(us * 0.3e-6)}, Sum: unit.Timing{Median: unit.Seconds(2.5e-6)}, Hot: unit.Timing{Median: unit.Seconds(us * 0.8e-6)},
			Touched: 8, WorkingSet: 8 * 3 * 7168 * 2048 / float64(p.Split.MoETP) * 0.5625})
	}
	r.Outputs = append(r.Outputs, MoEOutput(moe), ElementwiseOutput(recordedElementwise(Options{Quick: true}), "glue.sm_90.cubin"))
	return r
}

// recordedElementwise: 2.5 us plus the bytes at 3 TB/s.
func recordedElementwise(o Options) []ElementwiseResult {
	var out []ElementwiseResult
	for _, c := range ElementwiseCases(o) {
		b := float64(c.Bytes())
		out = append(out, ElementwiseResult{Case: c, Bytes: b, Timing: unit.Timing{Median: unit.Seconds(2.5e-6 + b/3e12)}})
	}
	return out
}

func TestFileWrittenAndUsed(t *testing.T) {
	r := recorded()
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	f, err := r.File(Options{Command: "moecast calib gpu --quick --out h200.toml", Version: "devel (commit x)"}, now)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "h200.toml")
	require.NoError(t, f.Write(path))
	got, err := calib.Load(path)
	require.NoError(t, err)
	require.Len(t, got.Tables, 2)
	tb := got.Tables[0]
	assert.Equal(t, "moe", tb.Op)
	assert.Len(t, tb.Rows, len(r.Output(opMoE).Data.([]MoEResult)))
	p := got.Effective(&tb)
	assert.Equal(t, "h200-sxm", p.GPU)
	assert.Equal(t, "2026-12-01", p.Date)
	assert.Equal(t, "cuda-graph", p.Launch)
	assert.Contains(t, p.GPULabel, "NVIDIA H200 (sm_90, 132 SMs; measured GPU-0; visible GPU-0 GPU-1)")
	assert.Contains(t, p.Method, "latency = the median of 15 replays (fewer for replays over 5 ms: about 75 ms of them, at least 5) of the same graph without the router top-k")
	assert.Contains(t, p.Method, "router top-k (moecast_router_f32")
	assert.Contains(t, p.Method, "moe_sum (top-k weighted, bf16 out)")
	assert.NotContains(t, p.Method, "not included: routing")
	fm := got.Provenance.Method
	assert.Contains(t, fm, "device copy 3.90 TB/s")
	assert.Contains(t, fm, "empty kernel 1.10 us a node of a replayed graph")
	assert.Contains(t, fm, "moe hot, not a table")
	assert.Contains(t, fm, "kimi-k2.5 tp8 ep1 (tokens:us) 1:8.2 8:9.3")
	if len(notMeasured) > 0 {
		assert.Contains(t, fm, "not measured: ")
	}
	assert.Contains(t, p.Command, "moecast devel (commit x)")
	assert.Equal(t, "580.159.04", p.Driver)

	// predict's lookups answer Kimi-K2.5's layer from this table.
	int4 := dtype.INT4G32
	for _, q := range []struct {
		tp, ep, tokens int
		want           float64
	}{{8, 1, 64, 10 + 0.2*64}, {1, 8, 512, 10 + 0.2*512/8}} {
		e, ok := got.KernelTables().MoE(kernels.MoEShape{Tokens: q.tokens, GlobalTokens: q.tokens, Hidden: 7168, Inter: 2048 / q.tp,
			Weight: int4, Experts: 384, TopK: 8, MoETP: q.tp, EP: q.ep})
		require.True(t, ok, "%+v", q)
		assert.InDelta(t, q.want*1e-6, float64(e.Time), 1e-12, "%+v", q)
		assert.Contains(t, e.Source.Table, "#moe.moecast_w4a16.int4_wo.e384.uniform")
	}

	// The elementwise table: warm, graph, rows by bytes; lookups answer
	// decode-sized norms and adds from it and leave larger kernels to the
	// roofline.
	et := got.Tables[1]
	assert.Equal(t, "elementwise", et.Op)
	ep := got.Effective(&et)
	assert.Equal(t, "warm", ep.Cache)
	assert.Equal(t, "cuda-graph", ep.Launch)
	assert.Contains(t, ep.Kernel, "glue.sm_90.cubin")
	// RMSNorm and the add of one token both move 43008 B: one row.
	assert.Len(t, et.Rows, 3*len(quickElementwiseTokens))
	assert.Equal(t, 1536.0, et.Rows[0][0], "silu_and_mul 256 wide, 1 token")
	for i := 1; i < len(et.Rows); i++ {
		assert.Less(t, et.Rows[i-1][0], et.Rows[i][0])
	}
	kt := got.KernelTables()
	for _, b := range []unit.Bytes{kernels.RMSNormBytes(8, 7168), kernels.ResidualAddBytes(64, 7168), kernels.ActivationBytes(512, 2048)} {
		e, ok := kt.Elementwise(b)
		require.True(t, ok, "%v", b)
		assert.InEpsilon(t, 2.5e-6+float64(b)/3e12, float64(e.Time), 1e-6, "%v", b)
		assert.Contains(t, e.Source.Table, "#elementwise.moecast_glue.bf16")
	}
	_, ok := kt.Elementwise(kernels.ResidualAddBytes(4096, 7168))
	assert.False(t, ok, "above the largest row the roofline answers")
}

// TestElementwiseBytes: the cases' bytes are kernels/elementwise.go's
// counts, so predict's lookups ask the table at the sizes it measured.
func TestElementwiseBytes(t *testing.T) {
	for _, c := range ElementwiseCases(Options{}) {
		var want unit.Bytes
		switch c.Kernel {
		case gpu.KernelRMSNorm:
			want = kernels.RMSNormBytes(c.Tokens, c.Width)
		case gpu.KernelAdd:
			want = kernels.ResidualAddBytes(c.Tokens, c.Width)
		case gpu.KernelSiluAndMul:
			want = kernels.ActivationBytes(c.Tokens, c.Width)
		}
		assert.Equal(t, float64(want), float64(c.Bytes()), "%+v", c)
	}
}

func TestFileErrors(t *testing.T) {
	r := recorded()
	now := time.Now()
	r.Device.Name = "NVIDIA A100-SXM4-80GB"
	_, err := r.File(Options{}, now)
	assert.ErrorContains(t, err, `device "NVIDIA A100-SXM4-80GB" matches no GPU preset: name one with --gpu`)
	assert.ErrorAs(t, err, new(*PresetError))
	assert.ErrorAs(t, err, new(*InputError))
	_, err = r.File(Options{GPU: "a100"}, now)
	assert.ErrorContains(t, err, `--gpu "a100": not a GPU preset`)
	_, err = r.File(Options{GPU: "h100-sxm", Date: "1 Dec"}, now)
	assert.ErrorContains(t, err, `--date "1 Dec": want YYYY-MM-DD`)
	r.Outputs = r.Outputs[:2] // copy and overhead: no table
	_, err = r.File(Options{GPU: "h100-sxm"}, now)
	assert.EqualError(t, err, "nothing measured for a table")
	assert.ErrorAs(t, err, new(*InputError))
}

// TestRunWithoutGPU: where no GPU is usable, Run fails with an error
// cuda.NoGPU recognises and measures nothing.
func TestRunWithoutGPU(t *testing.T) {
	if err := cuda.Init(); !cuda.NoGPU(err) {
		t.Skipf("a GPU is usable here (%v)", err)
	}
	plan, err := NewPlan(Options{Quick: true})
	require.NoError(t, err)
	_, err = Run(plan, Options{})
	require.Error(t, err)
	assert.True(t, cuda.NoGPU(err), "%v", err)
	assert.False(t, strings.Contains(err.Error(), "\n"))
}

// TestNewPlanChecksFileOptions: --date and --gpu, which only the file
// uses, are checked before anything is measured, not after the campaign.
func TestNewPlanChecksFileOptions(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{Date: "today"}, `--date "today": want YYYY-MM-DD`},
		{Options{Date: "2026-13-01"}, `--date "2026-13-01": want YYYY-MM-DD`},
		{Options{GPU: "h900"}, `--gpu "h900": not a GPU preset`},
	} {
		_, err := NewPlan(tt.o)
		assert.ErrorContains(t, err, tt.want, "%+v", tt.o)
		assert.ErrorAs(t, err, new(*InputError), "%+v", tt.o)
	}
	_, err := NewPlan(Options{Date: "2026-12-01", GPU: "h200-sxm"})
	assert.NoError(t, err)
}

// TestCheckDevice: a device no preset names fails before measuring when
// the run writes a file (the plan's tables), not after the campaign; --gpu
// names it; a run that writes no file needs no preset.
func TestCheckDevice(t *testing.T) {
	const a100 = "NVIDIA A100-SXM4-80GB"
	full, err := NewPlan(Options{})
	require.NoError(t, err)
	var pe *PresetError
	require.ErrorAs(t, full.checkDevice(Options{}, a100), &pe)
	assert.ErrorContains(t, full.checkDevice(Options{}, a100), `device "NVIDIA A100-SXM4-80GB" matches no GPU preset: name one with --gpu`)
	assert.NoError(t, full.checkDevice(Options{GPU: "h100-sxm"}, a100))
	assert.NoError(t, full.checkDevice(Options{}, "NVIDIA H200"))

	one := Options{Ops: []string{opComm}}
	check, err := NewPlan(one)
	require.NoError(t, err)
	assert.NoError(t, check.checkDevice(one, a100), "one-rank comm: a check, no file")
	two := Options{Ops: []string{opComm}, GPUs: 2}
	comm2, err := NewPlan(two)
	require.NoError(t, err)
	assert.Error(t, comm2.checkDevice(two, a100))
	r1 := Options{Comm: CommOptions{Ranks: torchrun(1, 2)}}
	job, err := NewPlan(r1)
	require.NoError(t, err)
	assert.NoError(t, job.checkDevice(r1, a100), "rank 1 writes no file")
}
