package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moecast/moecast/calib"
	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/kernels"
)

// setCalibration resolves a calibration spec and sets the tables of
// s.Config: "embedded" (the tables built into moecast for the scenario's
// GPU; roofline with a warning when there are none), "embedded:NAME" (the
// tables built in for GPU preset NAME, as `moecast calib show` names them),
// "none" (roofline only) or the path of a calibration file. key is the
// scenario key the spec came from ("hardware.calibration"), or "" for the
// --calibration flag.
//
// A calibration only applies to the box it was measured on: kernel tables
// (gemm, moe, mla, gqa) are used only when their provenance names the
// scenario's GPU preset, collective and EP tables only when it names both
// its GPU and its fabric. The others are left out, with a warning, and
// their ops fall back to the roofline.
func (s *Scenario) setCalibration(spec, key string) error {
	// Drop what an earlier spec set (SetCalibration after Parse).
	s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return slices.Contains(s.calWarnings, w) })
	s.calWarnings = nil
	s.Config.KernelTables, s.Config.CommTables = nil, nil
	s.Calibration = spec

	var f *calib.File
	switch {
	case spec == "none":
		s.CalibrationNote = "none (roofline only)"
		return nil
	case spec == "embedded":
		gpu := s.Config.GPU.Name
		var err error
		if f, err = calib.Embedded(gpu); err != nil {
			return s.calibErr(key, fmt.Errorf("embedded calibration for %s: %w", gpu, err))
		}
		if f == nil {
			s.CalibrationNote = "embedded: none for " + gpu + " (roofline only)"
			s.warnCal(fmt.Sprintf("calibration \"embedded\": moecast has no calibration tables for GPU %q (it has: %s); all op costs are roofline estimates",
				gpu, strings.Join(calib.EmbeddedNames(), ", ")))
			return nil
		}
	case strings.HasPrefix(spec, "embedded:"):
		var err error
		if f, err = calib.Open(spec); err != nil {
			return s.calibErr(key, err)
		}
	default:
		// A path in a scenario file is relative to the file's directory;
		// one given on the command line (key == ""), or in an embedded
		// scenario, which has no directory on disk, to the current one.
		p := spec
		if key != "" && s.fsys == nil {
			p = s.osPath(spec)
		}
		var err error
		if f, err = calib.Load(p); err != nil {
			return s.calibErr(key, err)
		}
	}
	if f.KernelTables() == nil && f.CommTables() == nil {
		s.CalibrationNote = fmt.Sprintf("%s, %d tables; ops they do not cover use the roofline", f.Name, len(f.Tables))
		s.warnCal(fmt.Sprintf("calibration %s has no table moecast can use; all op costs are roofline estimates", f.Name))
		return nil
	}
	m := s.matchTables(f)
	s.Config.KernelTables, s.Config.CommTables = m.kernels, m.comm
	used := len(f.Tables) - m.kSkipped - m.cSkipped
	switch used {
	case len(f.Tables):
		s.CalibrationNote = fmt.Sprintf("%s, %d tables; ops they do not cover use the roofline", f.Name, len(f.Tables))
	case 0:
		s.CalibrationNote = fmt.Sprintf("%s: none of its %d tables was measured on this box (roofline only)", f.Name, len(f.Tables))
	default:
		s.CalibrationNote = fmt.Sprintf("%s, %d of %d tables (the others were measured on another box); ops they do not cover use the roofline",
			f.Name, used, len(f.Tables))
	}
	c := s.Config
	if m.kSkipped > 0 {
		s.warnCal(fmt.Sprintf("calibration %s: %d kernel tables measured on GPU %s are not used on this scenario's GPU %s; those ops use the roofline",
			f.Name, m.kSkipped, strings.Join(m.kFrom, ", "), c.GPU.Name))
	}
	if m.cSkipped > 0 {
		s.warnCal(fmt.Sprintf("calibration %s: %d collective tables measured on %s are not used on this scenario's %s over %s; collectives use the roofline",
			f.Name, m.cSkipped, strings.Join(m.cFrom, ", "), c.GPU.Name, c.Fabric.Name))
	}
	if m.kUsed > 0 && s.Given("hardware.custom_gpu") {
		s.warnCal(fmt.Sprintf("calibration %s: the kernel tables were measured on the %s preset, not on the figures of [hardware.custom_gpu]", f.Name, c.GPU.Name))
	}
	if m.cUsed > 0 && s.Given("hardware.custom_fabric") {
		s.warnCal(fmt.Sprintf("calibration %s: the collective tables were measured on the %s preset, not on the figures of [hardware.custom_fabric]", f.Name, c.Fabric.Name))
	}
	return nil
}

// tableMatch is the part of a calibration that applies to the scenario's
// box.
type tableMatch struct {
	kernels         kernels.Lookup
	comm            comm.Lookup
	kUsed, kSkipped int
	cUsed, cSkipped int
	kFrom, cFrom    []string // where the skipped tables were measured: "h200-sxm", "h200-sxm over nvlink4"
}

// matchTables selects the tables of f measured on the scenario's GPU (and,
// for collective and EP tables, over its fabric). A single-GPU scenario has
// no collectives, so its collective tables are kept as they are, unused.
//
// calib builds one kernels/comm table per calibration table, appending each
// to the slice of its op in file order; the i-th table of an op in
// f.Tables is the i-th built table of that op, which is how a table is
// kept or left out here.
func (s *Scenario) matchTables(f *calib.File) tableMatch {
	c := s.Config
	gpu, fabric := c.GPU.Name, c.Fabric.Name
	kt, ct := f.Kernels(), f.Comm()
	var (
		m                      tableMatch
		nk                     kernels.Tables
		nc                     = comm.Tables{Graphs: c.Graphs}
		gi, mi, ai, qi, ci, ei int
	)
	add := func(from *[]string, v string) {
		if !slices.Contains(*from, v) {
			*from = append(*from, v)
		}
	}
	for i := range f.Tables {
		t := &f.Tables[i]
		p := f.Effective(t)
		switch t.Op {
		case "gemm", "moe", "mla", "gqa":
			ok := p.GPU == gpu
			if ok {
				m.kUsed++
			} else {
				m.kSkipped++
				add(&m.kFrom, p.GPU)
			}
			switch t.Op {
			case "gemm":
				if ok && kt != nil && gi < len(kt.GEMMs) {
					nk.GEMMs = append(nk.GEMMs, kt.GEMMs[gi])
				}
				gi++
			case "moe":
				if ok && kt != nil && mi < len(kt.MoEs) {
					nk.MoEs = append(nk.MoEs, kt.MoEs[mi])
				}
				mi++
			case "mla":
				if ok && kt != nil && ai < len(kt.MLAs) {
					nk.MLAs = append(nk.MLAs, kt.MLAs[ai])
				}
				ai++
			case "gqa":
				if ok && kt != nil && qi < len(kt.GQAs) {
					nk.GQAs = append(nk.GQAs, kt.GQAs[qi])
				}
				qi++
			}
		default: // collectives and ep
			ok := c.GPUs <= 1 || (p.GPU == gpu && p.Fabric == fabric)
			if ok {
				m.cUsed++
			} else {
				m.cSkipped++
				fab := p.Fabric
				if fab == "" {
					fab = "an unrecorded fabric"
				}
				add(&m.cFrom, p.GPU+" over "+fab)
			}
			if t.Op == "ep" {
				if ok && ct != nil && ei < len(ct.EPs) {
					nc.EPs = append(nc.EPs, ct.EPs[ei])
				}
				ei++
			} else {
				if ok && ct != nil && ci < len(ct.Colls) {
					nc.Colls = append(nc.Colls, ct.Colls[ci])
				}
				ci++
			}
		}
	}
	switch {
	case m.kSkipped == 0:
		m.kernels = f.KernelTables()
	case !nk.Empty():
		m.kernels = &nk
	}
	switch {
	case m.cSkipped == 0:
		m.comm = f.CommTablesFor(c.Graphs)
	case !nc.Empty():
		m.comm = &nc
	}
	return m
}

func (s *Scenario) warnCal(w string) {
	s.calWarnings = append(s.calWarnings, w)
	s.Warnings = append(s.Warnings, w)
}

// calibErr positions a calibration error at the scenario key, or names the
// flag when the spec came from the command line.
func (s *Scenario) calibErr(key string, err error) error {
	if key == "" {
		return fmt.Errorf("--calibration: %w", err)
	}
	return s.doc.wrap(key, err)
}
