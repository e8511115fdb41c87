package campaign

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/kernels"
)

// File turns r into a calibration file: one MoE table per model (rows per
// split and token count), with the file's provenance naming the device,
// the software, the command, the method and what was not measured.
func (r *Result) File(o Options, now time.Time) (*calib.File, error) {
	preset := o.GPU
	if preset == "" {
		preset = PresetFor(r.Device.Name)
	}
	if preset == "" {
		return nil, fmt.Errorf("device %q matches no GPU preset: name one with --gpu (%s)", r.Device.Name,
			strings.Join(kernels.GPUNames(), ", "))
	}
	if _, ok := kernels.LookupGPU(preset); !ok {
		return nil, fmt.Errorf("--gpu %q: not a GPU preset (%s)", preset, strings.Join(kernels.GPUNames(), ", "))
	}
	date, err := o.date(now)
	if err != nil {
		return nil, err
	}
	if len(r.MoE) == 0 {
		return nil, fmt.Errorf("nothing measured for a table (the moe op)")
	}
	var method []string
	if r.Copy != nil {
		method = append(method, fmt.Sprintf("device copy %.2f TB/s read + write (moecast_copy over 2 x %d MiB, graph replays %.2f-%.2f TB/s)",
			r.Copy.BytesPerSec/1e12, CopyBytes>>20, r.Copy.Bytes/r.Copy.Max/1e12, r.Copy.Bytes/r.Copy.Min/1e12))
	}
	if r.Overhead != nil {
		method = append(method, fmt.Sprintf("empty kernel %.2f us a node of a replayed graph (the gap between graph-replayed kernels; %.2f-%.2f us), %.2f us a direct launch from the host",
			r.Overhead.Median*1e6, r.Overhead.Min*1e6, r.Overhead.Max*1e6, r.Overhead.Eager*1e6))
	}
	method = append(method, "not measured: "+strings.Join(NotMeasured, "; "))
	prov := calib.Provenance{
		GPU:        preset,
		GPULabel:   fmt.Sprintf("%s (%s, %d SMs; measured %s; visible %s)", r.Device.Name, r.Device.SM, r.Device.SMs, r.Device.UUID, strings.Join(r.Device.UUIDs, " ")),
		GPUCount:   len(r.Device.UUIDs),
		GPUL2Bytes: float64(r.Device.L2Bytes),
		Driver:     r.Versions.Driver,
		CUDA:       r.Versions.CUDA + " (driver API)",
		NCCL:       r.Versions.NCCL,
		Kernel:     "moecast w4a16 (kernels/gpu, " + r.Device.Image + ")",
		Date:       date,
		Command:    strings.TrimSpace(o.Command + " (moecast " + o.Version + ")"),
		Launch:     "cuda-graph",
		Cache:      "flushed",
		Method:     "moecast calib gpu on one GPU: " + strings.Join(method, "; "),
	}
	f := &calib.File{Schema: calib.Schema, Provenance: prov}
	byModel := map[string][]MoEResult{}
	var models []MoEModel
	for _, m := range r.MoE {
		if _, ok := byModel[m.Point.Model.Name]; !ok {
			models = append(models, m.Point.Model)
		}
		byModel[m.Point.Model.Name] = append(byModel[m.Point.Model.Name], m)
	}
	for _, mm := range models {
		rows := byModel[mm.Name]
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := rows[i].Point, rows[j].Point
			if a.Split != b.Split {
				if a.Split.MoETP != b.Split.MoETP {
					return a.Split.MoETP < b.Split.MoETP
				}
				return a.Split.EP < b.Split.EP
			}
			return a.Tokens < b.Tokens
		})
		t := calib.Table{
			Name: fmt.Sprintf("moe.moecast_w4a16.int4_wo.e%d.uniform", mm.Experts),
			Op:   "moe",
			Keys: calib.Keys{Dtype: "int4_wo", Distribution: "uniform", Experts: mm.Experts, TopK: mm.TopK,
				Hidden: mm.Hidden, Inter: mm.Inter},
			Columns: []string{"moe_tp", "ep", "tokens", "latency_us", "working_set_bytes", "l2_resident"},
			Provenance: calib.Provenance{Method: fmt.Sprintf(
				"%s experts (group %d): moecast's W4A16 MoE kernels, gate_up (%d -> 2x%d/moe_tp) then down, one launch each over the routed batch "+
					"(moe_align-style sorted ids), uniform top-%d routing from seeds (EP: rank 0 holds experts/ep of them and computes the slots routed there), "+
					"routings rotated until their weights total %d MiB so every call reads HBM; latency = the two kernels' medians of 15 graph replays; "+
					"routing (top-k), moe_align, the activation and the top-k sum are not included",
				mm.Name, mm.Group, mm.Hidden, mm.Inter, mm.TopK, RotateBytes>>20)},
		}
		for _, m := range rows {
			t.Rows = append(t.Rows, []float64{float64(m.Point.Split.MoETP), float64(m.Point.Split.EP), float64(m.Point.Tokens),
				roundPS(m.Latency() * 1e6), float64(int64(m.WorkingSet)), 0})
		}
		f.Tables = append(f.Tables, t)
	}
	return f, nil
}

// roundPS rounds microseconds to 1 ps.
func roundPS(us float64) float64 { return float64(int64(us*1e6+0.5)) / 1e6 }
