package gpu

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/unit"
)

// maxCopies bounds the rotated weight copies (tiny matrices need hundreds
// to total several times the L2).
const maxCopies = 2048

// Upload copies host data to a new device buffer.
func Upload[T any](host []T, elemSize int) (cuda.DevicePtr, error) {
	p, err := cuda.Alloc(int64(len(host) * elemSize))
	if err != nil {
		return 0, err
	}
	if err := cuda.CopyToDevice(p, host); err != nil {
		cuda.Free(p)
		return 0, err
	}
	return p, nil
}

// benchCase is one dense W4A16 GEMM to time.
type benchCase struct {
	Name           string
	M, N, K, Group int
	Opt            Options
}

// BenchResult is one timed case. Seconds are per call; bytes count the int4
// weights, the scales, the activations read and the output written once.
type BenchResult struct {
	Kernel        string  `json:"kernel"`
	Name          string  `json:"name"`
	M             int     `json:"m"`
	N             int     `json:"n"`
	K             int     `json:"k"`
	Group         int     `json:"group"`
	Variant       string  `json:"variant"`
	MT            int     `json:"mt"`
	Stages        int     `json:"stages"`
	WN            int     `json:"wn"`
	Units         int     `json:"units_per_block"`
	MaxParts      int     `json:"max_parts"`
	Coresident    bool    `json:"coresident,omitempty"` // cut tiles summed by all their blocks (parallel fixup)
	Blocks        int     `json:"blocks"`
	Copies        int     `json:"copies"`
	CallsPerGraph int     `json:"calls_per_graph"`
	GraphSeconds  float64 `json:"graph_s"`
	GraphMin      float64 `json:"graph_min_s"` // fastest and slowest of the timed replays
	GraphMax      float64 `json:"graph_max_s"`
	LaunchSeconds float64 `json:"launch_s"`
	Bytes         float64 `json:"bytes"`
	BytesPerSec   float64 `json:"bytes_per_s"`
	FLOPsPerSec   float64 `json:"flops_per_s"`
	Touched       float64 `json:"touched_experts,omitempty"`
	// Default marks a row timed with the plan's default options.
	Default bool `json:"default,omitempty"`
}

// Time times a list of launches (one per rotated copy) directly and inside
// a captured graph of about graphCalls calls (fewer when a replay would pass
// 5 ms, never fewer than the launches): seconds per launch, the median,
// least and most of the graph's timed replays (replay: 15 of them, fewer
// when replays are long), and the mean of one pass of direct launches (the
// sizing pass itself when the graph holds each launch once).
func Time(s cuda.Stream, launches []func() error, graphCalls int) (tm unit.Timing, err error) {
	var direct float64
	var calls int
	for _, l := range launches { // warm up, and check each launch once
		if err = l(); err != nil {
			return
		}
	}
	if err = s.Synchronize(); err != nil {
		return
	}
	e0, err := cuda.NewEvent(cuda.EventDefault)
	if err != nil {
		return
	}
	defer e0.Destroy()
	e1, err := cuda.NewEvent(cuda.EventDefault)
	if err != nil {
		return
	}
	defer e1.Destroy()
	// A first pass over the copies sizes the graph: graphCalls calls, fewer
	// when they are slow (about 5 ms a replay), never fewer than the copies.
	if err = e0.Record(s); err != nil {
		return
	}
	for _, l := range launches {
		if err = l(); err != nil {
			return
		}
	}
	if err = e1.Record(s); err != nil {
		return
	}
	if err = e1.Synchronize(); err != nil {
		return
	}
	var first float64
	if first, err = cuda.Elapsed(e0, e1); err != nil {
		return
	}
	want := min(graphCalls, max(1, int(5e-3/(first/float64(len(launches))))))
	calls = len(launches) * max(1, (want+len(launches)-1)/len(launches))

	if calls == len(launches) {
		// The graph holds each launch once: the sizing pass was that
		// direct pass already (the same launches, back to back).
		direct = first / float64(calls)
	} else {
		if err = e0.Record(s); err != nil {
			return
		}
		for i := 0; i < calls; i++ {
			if err = launches[i%len(launches)](); err != nil {
				return
			}
		}
		if err = e1.Record(s); err != nil {
			return
		}
		if err = e1.Synchronize(); err != nil {
			return
		}
		if direct, err = cuda.Elapsed(e0, e1); err != nil {
			return
		}
		direct /= float64(calls)
	}

	tm = unit.Timing{Eager: unit.Seconds(direct), Calls: calls}
	var med, lo, hi float64
	med, lo, hi, err = replay(s, e0, e1, calls, func(i int) error { return launches[i%len(launches)]() })
	tm.Median, tm.Min, tm.Max = unit.Seconds(med), unit.Seconds(lo), unit.Seconds(hi)
	return tm, err
}

// Replay counts (replay): warm-up replays until replayWarm of them or
// replayWarmSeconds of replays, then timed ones until replayTimed of them,
// or earlier once there are replayMinTimed totalling replayTimedSeconds.
// At Time's 5 ms replays that is 3 warm-up and 15 timed replays, as
// before; a replay of 15 ms or more warms up once and is timed 5 times
// (the median of 5 replays of one long graph: their spread is the
// timing's, reported as Min and Max).
const (
	replayWarm         = 3
	replayWarmSeconds  = 15e-3
	replayTimed        = 15
	replayMinTimed     = 5
	replayTimedSeconds = 75e-3
)

// ReplayRule says in words how many replays a timing's median is of, for
// provenance methods.
const ReplayRule = "15 replays (fewer for replays over 5 ms: about 75 ms of them, at least 5)"

// replayCounts is the warm-up and timed replays for replays of dt seconds
// each.
func replayCounts(dt float64) (warm, timed int) {
	for warm < replayWarm && float64(warm)*dt < replayWarmSeconds {
		warm++
	}
	for timed < replayTimed && (timed < replayMinTimed || float64(timed)*dt < replayTimedSeconds) {
		timed++
	}
	return
}

// replay captures calls launches (launch(i) for i = 0..calls-1) into one
// CUDA graph, replays it to warm up and timed with e0 and e1 (the first
// warm-up replay, timed, sets the counts: replayCounts), and gives the
// median, least and most seconds per call. A launch that fails during the
// capture ends it and destroys what was captured.
func replay(s cuda.Stream, e0, e1 cuda.Event, calls int, launch func(i int) error) (median, least, most float64, err error) {
	if err = s.BeginCapture(cuda.CaptureModeThreadLocal); err != nil {
		return
	}
	for i := 0; i < calls; i++ {
		if err = launch(i); err != nil {
			if g, cerr := s.EndCapture(); cerr == nil {
				g.Destroy()
			}
			return
		}
	}
	g, err := s.EndCapture()
	if err != nil {
		return
	}
	defer g.Destroy()
	ge, err := g.Instantiate()
	if err != nil {
		return
	}
	defer ge.Destroy()
	launch1 := func() error { return ge.Launch(s) }
	var first float64
	if first, err = span(s, e0, e1, launch1); err != nil {
		return
	}
	warm, timed := replayCounts(first)
	for i := 1; i < warm; i++ {
		if err = ge.Launch(s); err != nil {
			return
		}
	}
	times := make([]float64, 0, timed)
	for i := 0; i < timed; i++ {
		var dt float64
		if dt, err = span(s, e0, e1, launch1); err != nil {
			return
		}
		times = append(times, dt/float64(calls))
	}
	sort.Float64s(times)
	return times[len(times)/2], times[0], times[len(times)-1], nil
}

// span records e0 on s, runs run (which enqueues work on s), records e1,
// waits for it and gives the seconds between the two events.
func span(s cuda.Stream, e0, e1 cuda.Event, run func() error) (float64, error) {
	if err := e0.Record(s); err != nil {
		return 0, err
	}
	if err := run(); err != nil {
		return 0, err
	}
	if err := e1.Record(s); err != nil {
		return 0, err
	}
	if err := e1.Synchronize(); err != nil {
		return 0, err
	}
	return cuda.Elapsed(e0, e1)
}

// randomDeviceWeights fills count copies of an N x K int4 matrix in the
// kernel layout with random nibbles and nonzero scales.
func randomDeviceWeights(rng *rand.Rand, n, k, group, count int) (q, sc cuda.DevicePtr, err error) {
	qw := n * k / 8
	sw := n * k / group
	hq := make([]uint32, qw)
	for i := range hq {
		hq[i] = rng.Uint32()
	}
	hs := make([]BF16, sw)
	for i := range hs {
		hs[i] = toBF16(float32(0.004 + 0.004*rng.Float64()))
	}
	if q, err = cuda.Alloc(int64(qw) * 4 * int64(count)); err != nil {
		return
	}
	if sc, err = cuda.Alloc(int64(sw) * 2 * int64(count)); err != nil {
		return
	}
	// The first copy from the host, the others on the device (doubling):
	// the same contents, without gigabytes over the host link.
	if err = cuda.CopyToDevice(q, hq); err != nil {
		return
	}
	if err = cuda.CopyToDevice(sc, hs); err != nil {
		return
	}
	for done := 1; done < count; {
		m := min(done, count-done)
		if err = cuda.CopyDevice(q+cuda.DevicePtr(done*qw*4), q, int64(m*qw*4)); err != nil {
			return
		}
		if err = cuda.CopyDevice(sc+cuda.DevicePtr(done*sw*2), sc, int64(m*sw*2)); err != nil {
			return
		}
		done += m
	}
	err = cuda.Synchronize() // device copies run on the legacy stream, not the caller's
	return
}

// measureGEMM times one dense case with weights rotated over copies that
// total at least rotateBytes, so that each call reads HBM.
func measureGEMM(m *Module, c benchCase, rotateBytes int64, s cuda.Stream) (BenchResult, error) {
	p, err := m.PlanGEMM(c.M, c.N, c.K, c.Group, c.Opt)
	if err != nil {
		return BenchResult{}, err
	}
	rng := rand.New(rand.NewPCG(uint64(c.M*131+c.N), uint64(c.K)))
	wb := int64(c.N*c.K/2 + c.N*c.K/c.Group*2)
	copies := int(min(maxCopies, max(2, (rotateBytes+wb-1)/wb)))
	q, sc, err := randomDeviceWeights(rng, c.N, c.K, c.Group, copies)
	defer cuda.Free(q)
	defer cuda.Free(sc)
	if err != nil {
		return BenchResult{}, err
	}
	var bufs deviceBuffers
	defer bufs.free()
	alloc := bufs.alloc
	a, err := Upload(randomBF16(rng, c.M*c.K), 2)
	if err != nil {
		return BenchResult{}, err
	}
	bufs = append(bufs, a)
	out, err := alloc(int64(c.M * c.N * 2))
	if err != nil {
		return BenchResult{}, err
	}
	ws, err := alloc(p.WorkspaceBytes())
	if err != nil {
		return BenchResult{}, err
	}
	ctr, err := alloc(p.CounterBytes())
	if err != nil {
		return BenchResult{}, err
	}
	if err := cuda.Memset8(ctr, 0, max(p.CounterBytes(), 16)); err != nil {
		return BenchResult{}, err
	}
	if err := cuda.Synchronize(); err != nil {
		return BenchResult{}, err
	}
	var launches []func() error
	for i := 0; i < copies; i++ {
		args, err := p.Args(Buffers{A: a, C: out, Workspace: ws, Counters: ctr,
			W: q + cuda.DevicePtr(int64(i)*int64(c.N*c.K/2)), S: sc + cuda.DevicePtr(int64(i)*int64(c.N*c.K/c.Group*2))})
		if err != nil {
			return BenchResult{}, err
		}
		launches = append(launches, func() error { return m.LaunchArgs(p, args, s) })
	}
	tm, err := Time(s, launches, 200)
	if err != nil {
		return BenchResult{}, fmt.Errorf("%s M=%d: %w", c.Name, c.M, err)
	}
	graph, direct, calls := float64(tm.Median), float64(tm.Eager), tm.Calls
	bytes := float64(wb + int64(c.M*c.K*2) + int64(c.M*c.N*2))
	return BenchResult{Kernel: benchKernel(p, ""), Variant: p.Variant().Name(), Name: c.Name, M: c.M, N: c.N, K: c.K,
		Group: c.Group, MT: p.MT, Stages: p.Stages, WN: p.WN,
		Units: p.Units, MaxParts: p.MaxParts, Coresident: p.Coresident, Blocks: p.Blocks, Copies: copies, CallsPerGraph: calls,
		GraphSeconds: graph, GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: direct, Bytes: bytes,
		BytesPerSec: bytes / graph, FLOPsPerSec: 2 * float64(c.M) * float64(c.N) * float64(c.K) / graph}, nil
}

// benchKernel names a result's kernel: moecast_w4a16 for the default
// layout, with _s6 (6 stages), _w4 (4 warps along N), _nodq or _ldonly.
func benchKernel(p Plan, moe string) string {
	k := "moecast_w4a16" + moe
	if p.Stages != 4 {
		k += fmt.Sprintf("_s%d", p.Stages)
	}
	if p.WN == 4 && p.BN != 256 {
		k += "_w4"
	}
	switch p.Mode {
	case modeNoDQ:
		k += "_nodq"
	case modeLoadOnly:
		k += "_ldonly"
	case modeSwap:
		k += "_sw"
	}
	if p.WP {
		k += "_wp"
	}
	if p.BN == 256 {
		k += "_n256"
	}
	return k
}

// moeCase is one routed grouped GEMM to time: Tokens tokens routed top-TopK
// over Experts experts, each expert an N x K matrix. Down: A has one row per
// (token, slot) (the down projection); otherwise one per token (gate_up).
type moeCase struct {
	Name                  string
	Tokens, Experts, TopK int
	N, K, Group           int
	Down                  bool
	PowerLaw              float64 // 0: uniform routing
	Seed                  uint64
	// Local is the number of experts this rank holds (experts [0, Local)
	// of Experts, expert parallelism); 0: all of them (tensor parallelism).
	Local int
	Opt   Options // the plan's options (MT comes from the routing)
}

// measureMoE times one MoE case, rotating over routings drawn from Seed
// until their touched weights total rotateBytes (4 to 64 routings).
func measureMoE(m *Module, c moeCase, rotateBytes int64, s cuda.Stream) (BenchResult, error) {
	if err := checkShape(c.N, c.K, c.Group); err != nil {
		return BenchResult{}, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 7))
	wb := int64(c.N*c.K/2 + c.N*c.K/c.Group*2)
	local := c.Experts
	if c.Local > 0 {
		local = c.Local
	}
	q, sc, err := randomDeviceWeights(rng, c.N, c.K, c.Group, local)
	defer cuda.Free(q)
	defer cuda.Free(sc)
	if err != nil {
		return BenchResult{}, err
	}
	var bufs deviceBuffers
	defer bufs.free()
	rows := c.Tokens * c.TopK
	aRows, aDiv := c.Tokens, c.TopK
	if c.Down {
		aRows, aDiv = rows, 1
	}
	a, err := Upload(randomBF16(rng, aRows*c.K), 2)
	if err != nil {
		return BenchResult{}, err
	}
	bufs = append(bufs, a)
	out, err := cuda.Alloc(int64(rows * c.N * 2))
	if err != nil {
		return BenchResult{}, err
	}
	bufs = append(bufs, out)

	var launches []func() error
	var totalBytes, touched float64
	var plan0 Plan
	var rotated int64
	for i := 0; i < 64 && (i < 4 || rotated < rotateBytes); i++ {
		var r *Routing
		if c.PowerLaw > 0 {
			r, err = routePowerLaw(c.Seed+uint64(i), c.Tokens, c.Experts, c.TopK, c.PowerLaw)
		} else {
			r, err = routeUniform(c.Seed+uint64(i), c.Tokens, c.Experts, c.TopK)
		}
		if err != nil {
			return BenchResult{}, err
		}
		avg := float64(rows) * float64(local) / float64(c.Experts) / float64(min(rows, local))
		al, err := alignLocal(r, m.moeBlock(avg, c.Opt, c.N), 0, local)
		if err != nil {
			return BenchResult{}, err
		}
		if al.Blocks() == 0 {
			continue // no token for this rank
		}
		p, err := m.PlanMoE(al, c.N, c.K, c.Group, aDiv, c.Opt)
		if err != nil {
			return BenchResult{}, err
		}
		if plan0.MT == 0 {
			plan0 = p
		}
		sid, err := Upload(al.SortedIDs, 4)
		if err != nil {
			return BenchResult{}, err
		}
		bufs = append(bufs, sid)
		eid, err := Upload(al.ExpertIDs, 4)
		if err != nil {
			return BenchResult{}, err
		}
		bufs = append(bufs, eid)
		ws, err := cuda.Alloc(max(p.WorkspaceBytes(), 16))
		if err != nil {
			return BenchResult{}, err
		}
		bufs = append(bufs, ws)
		ctr, err := cuda.Alloc(max(p.CounterBytes(), 16))
		if err != nil {
			return BenchResult{}, err
		}
		bufs = append(bufs, ctr)
		if err := cuda.Memset8(ctr, 0, max(p.CounterBytes(), 16)); err != nil {
			return BenchResult{}, err
		}
		args, err := p.Args(Buffers{A: a, W: q, S: sc, C: out, Workspace: ws, Counters: ctr, SortedIDs: sid, ExpertIDs: eid})
		if err != nil {
			return BenchResult{}, err
		}
		launches = append(launches, func() error { return m.LaunchArgs(p, args, s) })
		rotated += int64(al.Touched) * wb
		touched += float64(al.Touched)
		totalBytes += float64(int64(al.Touched)*wb + int64(aRows*c.K*2) + int64(rows*c.N*2))
	}
	if len(launches) == 0 {
		return BenchResult{}, fmt.Errorf("%s tokens=%d: no routing sent a token to this rank", c.Name, c.Tokens)
	}
	if err := cuda.Synchronize(); err != nil {
		return BenchResult{}, err
	}
	tm, err := Time(s, launches, 200)
	if err != nil {
		return BenchResult{}, fmt.Errorf("%s tokens=%d: %w", c.Name, c.Tokens, err)
	}
	graph, direct, calls := float64(tm.Median), float64(tm.Eager), tm.Calls
	n := float64(len(launches))
	bytes := totalBytes / n
	return BenchResult{Kernel: benchKernel(plan0, "_moe"), Variant: plan0.Variant().Name(), Name: c.Name, M: c.Tokens,
		N: c.N, K: c.K, Group: c.Group, MT: plan0.MT, Stages: plan0.Stages, WN: plan0.WN, Units: plan0.Units, MaxParts: plan0.MaxParts, Coresident: plan0.Coresident, Blocks: plan0.Blocks,
		Copies:        len(launches),
		CallsPerGraph: calls, GraphSeconds: graph, GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: direct,
		Bytes: bytes, BytesPerSec: bytes / graph,
		FLOPsPerSec: 2 * float64(rows) * float64(c.N) * float64(c.K) / graph, Touched: touched / n}, nil
}

// benchShape is a weight matrix of the speed table.
type benchShape struct {
	Name        string
	N, K, Group int
}

// benchShapes are the dense shapes of the speed table: Kimi-K2.5 (DeepSeek-V3
// dimensions) expert and attention matrices, their TP8 shards, and a dense
// MLP matrix over 32 MB.
var benchShapes = []benchShape{
	{"expert gate_up", 4096, 7168, 32},
	{"expert down", 7168, 2048, 32},
	{"o_proj", 7168, 8192, 32},
	{"dense up 18432", 18432, 7168, 32},
	{"dense up 18432 g128", 18432, 7168, 128},
	{"tp8 gate_up", 512, 7168, 32},
	{"tp8 down", 7168, 256, 32},
}

// moeShapes are the routed cases: Kimi-K2.5's 384 experts top-8 at TP8
// (every rank holds a 1/8 slice of every expert) and EP8 (rank 0 holds 48
// whole experts and computes the slots routed to them).
var moeShapes = []moeCase{
	{Name: "moe tp8 gate_up", Experts: 384, TopK: 8, N: 512, K: 7168, Group: 32, Seed: 1},
	{Name: "moe tp8 down", Experts: 384, TopK: 8, N: 7168, K: 256, Group: 32, Down: true, Seed: 2},
	{Name: "moe tp8 gate_up zipf", Experts: 384, TopK: 8, N: 512, K: 7168, Group: 32, PowerLaw: 1.0, Seed: 3},
	{Name: "moe ep8 gate_up", Experts: 384, TopK: 8, Local: 48, N: 4096, K: 7168, Group: 32, Seed: 4},
	{Name: "moe ep8 down", Experts: 384, TopK: 8, Local: 48, N: 7168, K: 2048, Group: 32, Down: true, Seed: 5},
}

// MeasureCopy times moecast_copy over buffers of bytes each (read + write
// counted), inside a graph. Bytes per second count both.
func MeasureCopy(m *Module, bytes int64, s cuda.Stream) (BenchResult, error) {
	src, err := cuda.Alloc(bytes)
	if err != nil {
		return BenchResult{}, err
	}
	defer cuda.Free(src)
	dst, err := cuda.Alloc(bytes)
	if err != nil {
		return BenchResult{}, err
	}
	defer cuda.Free(dst)
	if err := cuda.Memset8(src, 1, bytes); err != nil {
		return BenchResult{}, err
	}
	if err := cuda.Synchronize(); err != nil {
		return BenchResult{}, err
	}
	args, err := copyArgs(dst, src, bytes)
	if err != nil {
		return BenchResult{}, err
	}
	tm, err := Time(s, []func() error{func() error { return m.LaunchCopy(args, s) }}, 20)
	if err != nil {
		return BenchResult{}, fmt.Errorf("copy of %d bytes: %w", bytes, err)
	}
	b := 2 * float64(bytes)
	return BenchResult{Kernel: "moecast_copy", Name: "device-to-device copy", CallsPerGraph: tm.Calls,
		GraphSeconds: float64(tm.Median), GraphMin: float64(tm.Min), GraphMax: float64(tm.Max), LaunchSeconds: float64(tm.Eager), Bytes: b,
		BytesPerSec: b / float64(tm.Median)}, nil
}

// MeasureEmpty times n launches of a kernel that does nothing: seconds per
// launch eager (back to back from the host) and replayed from a graph (the
// gap between consecutive kernels of a graph).
func MeasureEmpty(m *Module, n int, s cuda.Stream) (unit.Timing, error) {
	return Time(s, []func() error{func() error { return m.LaunchEmpty(s) }}, n)
}

// deviceBuffers allocates and frees the buffers of one measurement.
type deviceBuffers []cuda.DevicePtr

func (b *deviceBuffers) alloc(n int64) (cuda.DevicePtr, error) {
	p, err := cuda.Alloc(max(n, 256))
	if err == nil {
		*b = append(*b, p)
	}
	return p, err
}

func (b *deviceBuffers) upload(host any, n int64) (cuda.DevicePtr, error) {
	p, err := b.alloc(n)
	if err != nil {
		return 0, err
	}
	switch h := host.(type) {
	case []BF16:
		err = cuda.CopyToDevice(p, h)
	case []E4M3:
		err = cuda.CopyToDevice(p, h)
	case []float32:
		err = cuda.CopyToDevice(p, h)
	case []int32:
		err = cuda.CopyToDevice(p, h)
	default:
		err = fmt.Errorf("upload: unsupported %T", host)
	}
	return p, err
}

func (b *deviceBuffers) free() {
	for _, p := range *b {
		cuda.Free(p)
	}
	*b = nil
}
