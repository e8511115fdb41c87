package campaign

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/comm/ncclrun"
	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/kernels"
)

// opComm is the NCCL collectives op.
const opComm = "comm"

// CommOptions configure the comm op.
type CommOptions struct {
	// Fabric is the comm fabric preset the collective tables are for
	// ("nvlink4"); empty: the GPU preset's usual interconnect.
	Fabric string
	// Ranks is the job from the launcher's environment
	// (rendezvous.FromEnv); World 1 (or zero): this process alone, on
	// Options.GPUs GPUs.
	Ranks rendezvous.Env
	// Timeout bounds each wait on the GPUs (a hung collective is aborted
	// after it) and the rendezvous (the join of every rank, each exchange);
	// 0: a minute on the GPUs, rendezvous.DefaultTimeout for the rendezvous.
	Timeout time.Duration
	// Plan replaces ncclrun.DefaultPlan(Quick) (tests, short runs).
	Plan *ncclrun.Plan
}

// commPlan is the sweep: the full or quick default, and the quick one on
// a single rank (a check of the NCCL path needs no more).
func (o Options) commPlan() ncclrun.Plan {
	p := ncclrun.DefaultPlan(o.Quick || o.commRanks() == 1)
	if o.Comm.Plan != nil {
		p = *o.Comm.Plan
	}
	if o.Comm.Timeout > 0 {
		p.Timeout = o.Comm.Timeout
	}
	return p
}

// commRanks is the rank count of the comm op: the launcher's world, else
// --gpus (at least one).
func (o Options) commRanks() int {
	if o.Comm.Ranks.Multi() {
		return o.Comm.Ranks.World
	}
	return max(1, o.GPUs)
}

// commRankCounts are the rank counts the comm op measures: the
// launcher's world; in one process over N GPUs, 2, 4, ... below N and N
// (a box's tensor-parallel sizes), each on devices 0..k-1.
func (o Options) commRankCounts() []int {
	n := o.commRanks()
	if o.multiProcess() || n <= 2 {
		return []int{n}
	}
	var out []int
	for k := 2; k < n; k *= 2 {
		out = append(out, k)
	}
	return append(out, n)
}

// multiProcess reports whether a launcher started several ranks.
func (o Options) multiProcess() bool { return o.Comm.Ranks.Multi() }

// DeviceFor is the device ordinal a campaign measures on: under a
// multi-process launcher LOCAL_RANK's GPU, or device 0 when it is the only
// one visible (the launcher gave each rank its own GPU through
// CUDA_VISIBLE_DEVICES); else device 0.
func (o Options) DeviceFor(visible int) int {
	if !o.multiProcess() || visible == 1 {
		return 0
	}
	return o.Comm.Ranks.LocalRank
}

// commOp measures NCCL all-reduce, all-gather, reduce-scatter and
// all-to-all (comm/ncclrun). With two or more ranks it writes one
// collective table per collective and mode; with one rank (one GPU
// visible, no launcher) it runs the sweep as a check of the NCCL path and
// writes no table: a one-rank collective moves nothing, and the cost model
// prices collectives of two or more ranks only.
type commOp struct{}

func (commOp) Name() string { return opComm }
func (commOp) Tables() bool { return true }

func (commOp) Steps(o Options) (int, error) {
	if o.Comm.Fabric != "" {
		if _, ok := comm.LookupFabric(o.Comm.Fabric); !ok {
			return 0, fmt.Errorf("--fabric %q: not a fabric preset (%s)", o.Comm.Fabric, strings.Join(comm.FabricNames(), ", "))
		}
	}
	if o.multiProcess() && o.GPUs > 1 && o.GPUs != o.Comm.Ranks.World {
		return 0, fmt.Errorf("--gpus %d under %s with %d ranks: each process drives one GPU; leave --gpus out or give %d",
			o.GPUs, o.Comm.Ranks.Launcher, o.Comm.Ranks.World, o.Comm.Ranks.World)
	}
	p := o.commPlan()
	if err := p.Check(); err != nil {
		return 0, err
	}
	steps := 0
	for _, k := range o.commRankCounts() {
		steps += len(p.Points(k)) * len(p.Modes)
	}
	return steps, nil
}

// commResult is what the comm op measured: the results over every rank
// (nil on ranks other than 0 of a multi-process job), the ranks' GPUs and
// the fabric the tables are for.
type commResult struct {
	Results []ncclrun.Result // each with its rank count
	Devices []ncclrun.DeviceInfo
	Ranks   int // the most ranks measured
	Fabric  string
	NCCL    int
	Process string // "one process" or "torchrun, one process per GPU"
}

func (commOp) Run(e *Env) (*Output, error) {
	o := e.Options
	p := o.commPlan()
	ranks := o.commRanks()
	nccl, _ := cuda.NCCLVersion()
	preset := o.GPU
	if preset == "" {
		preset, _ = kernels.DevicePreset(e.Device.Name)
	}
	fabric := o.Comm.Fabric
	if fabric == "" && ranks > 1 {
		g, ok := kernels.LookupGPU(preset)
		if !ok {
			return nil, fmt.Errorf("device %q matches no GPU preset, so its fabric is unknown: name it with --fabric (%s) or the GPU with --gpu",
				e.Device.Name, strings.Join(comm.FabricNames(), ", "))
		}
		fabric = g.Fabric
	}
	defer restore(e.Dev)
	current := ranks
	say := func(ms []ncclrun.Measurement) {
		m := ms[0]
		line := fmt.Sprintf("comm %s %d B %s, %d ranks: %.2f us", m.Collective, m.Bytes, m.Mode, current, m.Time.Median.Us())
		if m.InPlace != nil {
			line += fmt.Sprintf(" (in place %.2f us)", m.InPlace.Median.Us())
		}
		var wrong int64
		for _, x := range ms {
			wrong += x.Wrong + x.InPlaceWrong
		}
		if wrong > 0 {
			line += fmt.Sprintf(", %d WRONG", wrong)
		}
		if o.multiProcess() {
			line = fmt.Sprintf("rank %d: %s", o.Comm.Ranks.Rank, line)
		}
		e.Say("%s", line)
	}
	res := &commResult{Ranks: ranks, Fabric: fabric, NCCL: nccl, Process: "one process"}
	if o.multiProcess() {
		env := o.Comm.Ranks
		res.Process = fmt.Sprintf("%s, one process per GPU", env.Launcher)
		s, err := rendezvous.Join(env, rendezvous.Options{Timeout: o.Comm.Timeout})
		if err != nil {
			return nil, err
		}
		defer s.Close()
		ord, err := deviceOrdinal(e.Dev)
		if err != nil {
			return nil, err
		}
		g, err := ncclrun.OpenRank(s, ord, p.Timeout)
		if err != nil {
			return nil, err
		}
		ms, err := g.Sweep(p, say)
		devs := g.Devices()
		g.Close()
		if err != nil {
			return nil, err
		}
		results, devices, err := ncclrun.Gather(s, ms, devs[0])
		if err != nil {
			return nil, err
		}
		if env.Rank != 0 {
			return &Output{Op: opComm, Data: res,
				Lines: []string{fmt.Sprintf("comm: %s measured %d points; rank 0 gathers them and writes the file", env, len(ms))}}, nil
		}
		res.Results, res.Devices = results, devices
	} else {
		n, err := cuda.DeviceCount()
		if err != nil {
			return nil, err
		}
		if ranks > n {
			return nil, fmt.Errorf("--gpus %d: %d GPU(s) visible", ranks, n)
		}
		for _, k := range o.commRankCounts() {
			current = k
			devices := make([]int, k)
			for i := range devices {
				devices[i] = i
			}
			g, err := ncclrun.OpenDevices(devices, p.Timeout)
			if err != nil {
				return nil, err
			}
			ms, err := g.Sweep(p, say)
			res.Devices = g.Devices()
			g.Close()
			if err != nil {
				return nil, err
			}
			rs, err := ncclrun.Combine(k, ms)
			if err != nil {
				return nil, err
			}
			res.Results = append(res.Results, rs...)
		}
	}
	return commOutput(res)
}

// restore makes the campaign's device context current again (ncclrun
// released the contexts it retained).
func restore(dev cuda.Device) {
	if ctx, err := dev.Retain(); err == nil {
		ctx.SetCurrent()
		dev.Release()
	}
}

// deviceOrdinal is the ordinal of dev (a CUdevice is its ordinal).
func deviceOrdinal(dev cuda.Device) (int, error) {
	n, err := cuda.DeviceCount()
	if err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		if d, err := cuda.GetDevice(i); err == nil && d == dev {
			return i, nil
		}
	}
	return 0, fmt.Errorf("device %d is not visible", dev)
}

// commOutput makes the collective tables (two or more ranks; none for one
// rank), the method sentence and the nccl-tests-style report. Wrong
// results are an error: no table is written from them.
func commOutput(c *commResult) (*Output, error) {
	out := &Output{Op: opComm, Data: c}
	var bad []string
	for _, r := range c.Results {
		if !r.OK() {
			bad = append(bad, fmt.Sprintf("%s %d B %s: %d wrong elements (%d in place)", r.Collective, r.Bytes, r.Mode, r.Wrong, r.InPlaceWrong))
		}
	}
	var buf bytes.Buffer
	ncclrun.Report(&buf, c.Results, c.Devices, c.NCCL)
	out.Lines = strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(bad) > 0 {
		return nil, fmt.Errorf("comm: NCCL returned wrong results (%d of %d points): %s", len(bad), len(c.Results), strings.Join(bad[:min(len(bad), 3)], "; "))
	}
	var uuids []string
	for _, d := range c.Devices {
		uuids = append(uuids, d.UUID)
	}
	how := fmt.Sprintf("NCCL %s collectives (comm/ncclrun, %s, NCCL_NVLS_ENABLE=0): bf16 sum, sizes as nccl-tests' size(B) "+
		"(all-reduce: one rank's buffer; all-gather/reduce-scatter: the whole array; all-to-all: what one rank sends, grouped ncclSend/ncclRecv); "+
		"each point the mean over ranks of the median of 15 timed batches (eager: back-to-back launches between events; graph: one replay of a captured graph), "+
		"every output checked exactly on the host; ranks %s (%s)", ncclString(c.NCCL), c.Process, rankCounts(c.Results), strings.Join(uuids, " "))
	if c.Ranks < 2 {
		out.Method = []string{fmt.Sprintf("comm: a one-rank check of NCCL (%d points exact, no table: a one-rank collective moves nothing)", len(c.Results))}
		out.Lines = append(out.Lines, fmt.Sprintf("comm      1 rank: %d points, every result exact; a check only: no collective table (the cost model prices collectives of 2+ ranks)", len(c.Results)))
		return out, nil
	}
	type tkey struct {
		c ncclrun.Collective
		m ncclrun.Mode
	}
	var order []tkey
	rows := map[tkey][]ncclrun.Result{}
	for _, r := range c.Results {
		k := tkey{r.Collective, r.Mode}
		if _, ok := rows[k]; !ok {
			order = append(order, k)
		}
		rows[k] = append(rows[k], r)
	}
	for _, k := range order {
		rs := rows[k]
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Ranks != rs[j].Ranks {
				return rs[i].Ranks < rs[j].Ranks
			}
			return rs[i].Bytes < rs[j].Bytes
		})
		inplace := true
		for _, r := range rs {
			inplace = inplace && r.InPlace != nil
		}
		cols := []string{"ranks", "bytes", "latency_us"}
		if inplace {
			cols = append(cols, "inplace_latency_us")
		}
		launch := "eager"
		if k.m == ncclrun.Graph {
			launch = "cuda-graph"
		}
		t := calib.Table{Name: fmt.Sprintf("nccl.%s.%s", k.c, k.m), Op: string(k.c),
			Keys: calib.Keys{Impl: "nccl", Mode: string(k.m)}, Columns: cols,
			Provenance: calib.Provenance{Fabric: c.Fabric, GPUCount: c.Ranks, Launch: launch, Cache: "warm",
				Kernel: "NCCL " + ncclString(c.NCCL), Method: how}}
		for _, r := range rs {
			row := []float64{float64(r.Ranks), float64(r.Bytes), roundPS(r.Time.Median.Us())}
			if inplace {
				row = append(row, roundPS(r.InPlace.Median.Us()))
			}
			t.Rows = append(t.Rows, row)
		}
		out.Tables = append(out.Tables, t)
	}
	out.Method = []string{fmt.Sprintf("comm: NCCL collectives on %s ranks over %s (%d tables)", rankCounts(c.Results), c.Fabric, len(out.Tables))}
	out.Lines = append(out.Lines, fmt.Sprintf("comm      %s ranks over %s: %d points, every result exact, %d tables", rankCounts(c.Results), c.Fabric, len(c.Results), len(out.Tables)))
	return out, nil
}

// rankCounts is "2, 4, 8": the rank counts of the results.
func rankCounts(rs []ncclrun.Result) string {
	var ks []string
	seen := map[int]bool{}
	for _, r := range rs {
		if !seen[r.Ranks] {
			seen[r.Ranks] = true
			ks = append(ks, fmt.Sprint(r.Ranks))
		}
	}
	return strings.Join(ks, ", ")
}

func ncclString(v int) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

// TableCount is the number of calibration tables the ops wrote.
func (r *Result) TableCount() int {
	n := 0
	for _, o := range r.Outputs {
		n += len(o.Tables)
	}
	return n
}
