package ncclrun

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/internal/unit"
)

// Result is one point and mode over every rank of the job.
type Result struct {
	Collective Collective
	Mode       Mode
	Ranks      int
	Bytes      int64 // nccl-tests size(B)
	Count      int64 // elements
	Tokens     int   // token-sized message: its token count; else 0
	Iters      int
	// Time is the mean of the ranks' medians (nccl-tests -a 1), Min and
	// Max the least and most of any rank's batches. Seconds per call.
	Time  Timing
	Wrong int64 // wrong elements, summed over ranks
	// InPlace is nil when not measured.
	InPlace      *Timing
	InPlaceWrong int64
}

// AlgBW is nccl-tests' algbw: size(B) / time, bytes per second.
func (r Result) AlgBW(t unit.Seconds) float64 { return float64(r.Bytes) / float64(t) }

// BusBW is nccl-tests' busbw: algbw times BusFactor.
func (r Result) BusBW(t unit.Seconds) float64 { return r.AlgBW(t) * BusFactor(r.Collective, r.Ranks) }

// OK reports whether every element of every rank was right.
func (r Result) OK() bool { return r.Wrong == 0 && r.InPlaceWrong == 0 }

type key struct {
	c     Collective
	m     Mode
	bytes int64
}

// Combine merges the measurements of every rank of a job of ranks ranks
// (each rank's own, in any order) into one Result per point and mode, in
// the order of the first rank's measurements. Each point must have been
// measured by every rank exactly once.
func Combine(ranks int, ms []Measurement) ([]Result, error) {
	var order []key
	by := map[key][]Measurement{}
	for _, m := range ms {
		k := key{m.Collective, m.Mode, m.Bytes}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], m)
	}
	var out []Result
	for _, k := range order {
		g := by[k]
		seen := make([]bool, ranks)
		r := Result{Collective: k.c, Mode: k.m, Ranks: ranks, Bytes: k.bytes, Count: g[0].Count, Tokens: g[0].Tokens, Iters: g[0].Iters}
		var inp *Timing
		for _, m := range g {
			if m.Rank < 0 || m.Rank >= ranks || seen[m.Rank] {
				return nil, fmt.Errorf("ncclrun: %s %d B %s: rank %d measured twice or out of range", k.c, k.bytes, k.m, m.Rank)
			}
			seen[m.Rank] = true
			r.Wrong += m.Wrong
			r.InPlaceWrong += m.InPlaceWrong
			r.Time = merge(r.Time, m.Time, len(g))
			if m.InPlace != nil {
				if inp == nil {
					inp = &Timing{}
				}
				*inp = merge(*inp, *m.InPlace, len(g))
			}
		}
		if len(g) != ranks {
			var missing []string
			for i, s := range seen {
				if !s {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			return nil, fmt.Errorf("ncclrun: %s %d B %s: no measurement from rank %s", k.c, k.bytes, k.m, strings.Join(missing, ", "))
		}
		r.InPlace = inp
		out = append(out, r)
	}
	return out, nil
}

// merge adds one rank's timing into the running combination: the mean of
// medians, the least minimum, the largest maximum.
func merge(acc, t Timing, n int) Timing {
	acc.Median += t.Median / unit.Seconds(n)
	if acc.Min == 0 || t.Min < acc.Min {
		acc.Min = t.Min
	}
	acc.Max = max(acc.Max, t.Max)
	return acc
}

// Gather brings every rank's measurements and GPU to rank 0 of session s
// and combines them: rank 0 gets the results over all ranks and the ranks'
// GPUs in rank order, the others nil once rank 0 has theirs.
func Gather(s *rendezvous.Session, ms []Measurement, dev DeviceInfo) ([]Result, []DeviceInfo, error) {
	blob, err := json.Marshal(rankBlob{Device: dev, Measurements: ms})
	if err != nil {
		return nil, nil, err
	}
	all, err := s.Gather(blob)
	if err != nil || s.Env.Rank != 0 {
		return nil, nil, err
	}
	var every []Measurement
	var devs []DeviceInfo
	for r, b := range all {
		var rb rankBlob
		if err := json.Unmarshal(b, &rb); err != nil {
			return nil, nil, fmt.Errorf("ncclrun: rank %d's measurements: %w", r, err)
		}
		for _, m := range rb.Measurements {
			if m.Rank != r {
				return nil, nil, fmt.Errorf("ncclrun: rank %d sent a measurement of rank %d", r, m.Rank)
			}
		}
		rb.Device.Rank = r
		devs = append(devs, rb.Device)
		every = append(every, rb.Measurements...)
	}
	res, err := Combine(s.Env.World, every)
	return res, devs, err
}

// rankBlob is what one rank sends rank 0.
type rankBlob struct {
	Device       DeviceInfo    `json:"device"`
	Measurements []Measurement `json:"measurements"`
}

// binaries are nccl-tests' program names for the collectives.
var binaries = map[Collective]string{AllReduce: "all_reduce_perf", AllGather: "all_gather_perf",
	ReduceScatter: "reduce_scatter_perf", AllToAll: "alltoall_perf"}

// Report writes results as nccl-tests prints them, one block per
// collective and mode: size(B) count(elements) type redop root, then
// time(us) algbw(GB/s) busbw(GB/s) #wrong out of place and in place (N/A
// where not measured). Devices name the ranks' GPUs in the header, as
// nccl-tests' "# Rank" lines (the first ranks of a block's rank count).
func Report(w io.Writer, results []Result, devices []DeviceInfo, ncclVersion int) error {
	type block struct {
		c Collective
		m Mode
		n int
	}
	var blocks []block
	rows := map[block][]Result{}
	for _, r := range results {
		b := block{r.Collective, r.Mode, r.Ranks}
		if _, ok := rows[b]; !ok {
			blocks = append(blocks, b)
		}
		rows[b] = append(rows[b], r)
	}
	var sb strings.Builder
	for _, b := range blocks {
		rs := rows[b]
		graph := 0
		if b.m == Graph {
			graph = 1
		}
		fmt.Fprintf(&sb, "# Collective test starting: %s\n", binaries[b.c])
		fmt.Fprintf(&sb, "# moecast ncclrun: %s, %s, %d ranks, bf16; nccl-library=%d\n", b.c, b.m, rs[0].Ranks, ncclVersion)
		fmt.Fprintf(&sb, "#  nThread 1 nGpus %d minBytes %d maxBytes %d step: sizes iters: per size validation: 1 graph: %d\n",
			rs[0].Ranks, rs[0].Bytes, rs[len(rs)-1].Bytes, graph)
		for _, d := range devices[:min(len(devices), b.n)] {
			fmt.Fprintf(&sb, "#  Rank %2d Group  0 Pid 0 on %s device %2d [%s] %s\n", d.Rank, d.Host, d.Ord, d.UUID, d.Name)
		}
		sb.WriteString("#\n")
		fmt.Fprintf(&sb, "# %10s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s\n", "", "", "", "", "", "out-of-place", "", "", "", "in-place", "", "", "")
		fmt.Fprintf(&sb, "# %10s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong")
		fmt.Fprintf(&sb, "# %10s %12s %8s %6s %6s %9s %7s %7s %6s %9s %7s %7s %6s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")
		var busSum float64
		for _, r := range rs {
			redop := "sum"
			if b.c == AllGather || b.c == AllToAll {
				redop = "none"
			}
			fmt.Fprintf(&sb, "  %10d %12d %8s %6s %6d %s", r.Bytes, r.Count, "bfloat16", redop, -1, cols(r, &r.Time, r.Wrong))
			if r.InPlace != nil {
				fmt.Fprintf(&sb, " %s\n", cols(r, r.InPlace, r.InPlaceWrong))
			} else {
				fmt.Fprintf(&sb, " %9s %7s %7s %6s\n", "N/A", "N/A", "N/A", "N/A")
			}
			busSum += r.BusBW(r.Time.Median)
		}
		fmt.Fprintf(&sb, "# Out of bounds values : %d %s\n", wrongSum(rs), okWord(wrongSum(rs)))
		fmt.Fprintf(&sb, "# Avg bus bandwidth    : %.4f\n#\n", busSum/float64(len(rs))/1e9)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func cols(r Result, t *Timing, wrong int64) string {
	return fmt.Sprintf("%9.2f %7.2f %7.2f %6d", t.Median.Us(), r.AlgBW(t.Median)/1e9, r.BusBW(t.Median)/1e9, wrong)
}

func wrongSum(rs []Result) int64 {
	var n int64
	for _, r := range rs {
		n += r.Wrong + r.InPlaceWrong
	}
	return n
}

func okWord(n int64) string {
	if n == 0 {
		return "OK"
	}
	return "FAILED"
}
