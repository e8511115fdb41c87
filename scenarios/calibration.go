package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/moecast/moecast/calib"
)

// setCalibration resolves a calibration spec and sets the tables of
// s.Config: "embedded" (the tables built into moecast for the scenario's
// GPU; roofline with a warning when there are none), "none" (roofline
// only) or the path of a calibration file. key is the scenario key the spec
// came from ("hardware.calibration"), or "" for the --calibration flag.
func (s *Scenario) setCalibration(spec, key string) error {
	// Drop what an earlier spec set (SetCalibration after Parse).
	s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return slices.Contains(s.calWarnings, w) })
	s.calWarnings = nil
	s.Config.KernelTables, s.Config.CommTables = nil, nil
	s.Calibration = spec

	var f *calib.File
	switch spec {
	case "none":
		s.CalibrationNote = "none (roofline only)"
		return nil
	case "embedded":
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
		if s.Given("hardware.custom_gpu") {
			s.warnCal(fmt.Sprintf("calibration \"embedded\": the tables were measured on the %s preset, not on the figures of [hardware.custom_gpu]", gpu))
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
	s.Config.KernelTables = f.KernelTables()
	s.Config.CommTables = f.CommTablesFor(s.Config.Graphs)
	s.CalibrationNote = fmt.Sprintf("%s, %d tables; ops they do not cover use the roofline", f.Name, len(f.Tables))
	if s.Config.KernelTables == nil && s.Config.CommTables == nil {
		s.warnCal(fmt.Sprintf("calibration %s has no table moecast can use; all op costs are roofline estimates", f.Name))
	}
	return nil
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
