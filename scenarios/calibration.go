package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/moecast/moecast/calib"
)

// calibrationSources reads hardware.calibration: one source as a string,
// or several as an array of strings, later ones overriding earlier ones.
func (d *doc) calibrationSources() ([]string, error) {
	const key = "hardware.calibration"
	switch v := d.raw.Hardware.Calibration.(type) {
	case nil:
		return []string{DefaultCalibration}, nil
	case string:
		if v == "" {
			return []string{DefaultCalibration}, nil
		}
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, d.errorf(key, "element %d is %s, not a string (want e.g. [\"embedded\", \"my-box-nccl.toml\"])", i+1, tomlType(e))
			}
			out[i] = s
		}
		return out, nil
	default:
		return nil, d.errorf(key, "is %s: want a string or an array of strings (e.g. [\"embedded\", \"my-box-nccl.toml\"])", tomlType(v))
	}
}

func tomlType(v any) string {
	switch v.(type) {
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// setCalibration resolves calibration sources and sets the tables of
// s.Config. Each source is "embedded" (the tables built into moecast for
// the scenario's GPU; roofline with a warning when there are none),
// "embedded:NAME" (the tables built in for GPU preset NAME, as `moecast
// calib show` names them), "none" (roofline only, alone) or the path of a
// calibration file. Later sources override earlier ones table by table
// (calib.Select). key is the scenario key the sources came from
// ("hardware.calibration"), or "" for the --calibration flag.
//
// A calibration only applies to the box it was measured on: kernel tables
// (gemm, moe, mla, gqa) are used only when their provenance names the
// scenario's GPU preset, collective and EP tables only when it names both
// its GPU and its fabric. The others are left out, with a warning, and
// their ops fall back to the roofline.
func (s *Scenario) setCalibration(specs []string, key string) error {
	// Drop what an earlier call set (SetCalibration after Parse).
	s.Warnings = slices.DeleteFunc(s.Warnings, func(w string) bool { return slices.Contains(s.calWarnings, w) })
	s.calWarnings = nil
	s.Config.KernelTables, s.Config.CommTables = nil, nil
	s.Calibration = specs
	s.CalibrationUses = nil

	if len(specs) == 0 {
		return s.calibErr(key, errors.New(`no calibration source (want "embedded", "embedded:NAME", "none" or a calibration file)`))
	}
	if slices.Contains(specs, "none") {
		if len(specs) > 1 {
			return s.calibErr(key, fmt.Errorf(`"none" (roofline only) cannot be combined with other sources (%s)`, strings.Join(specs, ", ")))
		}
		s.CalibrationNote = "none (roofline only)"
		return nil
	}
	gpu := s.Config.GPU.Name
	var (
		files []*calib.File
		notes []string // sources that gave no file
	)
	for i, spec := range specs {
		f, err := s.openCalibration(spec, key)
		if err != nil {
			if len(specs) > 1 {
				err = fmt.Errorf("source %d (%s): %w", i+1, strconv.Quote(spec), err)
			}
			return s.calibErr(key, err)
		}
		if f == nil { // "embedded" without tables for this GPU
			notes = append(notes, "embedded: none for "+gpu)
			s.warnCal(fmt.Sprintf("calibration \"embedded\": moecast has no calibration tables for GPU %q (it has: %s); all op costs are roofline estimates",
				gpu, strings.Join(calib.EmbeddedNames(), ", ")))
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		s.CalibrationNote = strings.Join(notes, "; ") + " (roofline only)"
		return nil
	}
	c := s.Config
	sel := calib.Select(calib.Box{GPU: gpu, Fabric: c.Fabric.Name, GPUs: c.GPUs}, files...)
	s.CalibrationUses = sel.Uses
	s.Config.KernelTables, s.Config.CommTables = sel.Kernels(), sel.Comm(c.Graphs)
	s.CalibrationNote = calibrationNote(notes, sel.Uses)
	for i, u := range sel.Uses {
		f := files[i]
		if f.KernelTables() == nil && f.CommTables() == nil {
			s.warnCal(fmt.Sprintf("calibration %s has no table moecast can use; all op costs are roofline estimates", f.Name))
			continue
		}
		if u.KernelSkipped > 0 {
			s.warnCal(fmt.Sprintf("calibration %s: %d kernel tables measured on GPU %s are not used on this scenario's GPU %s; those ops use the roofline",
				f.Name, u.KernelSkipped, strings.Join(u.KernelFrom, ", "), gpu))
		}
		if u.CommSkipped > 0 {
			s.warnCal(fmt.Sprintf("calibration %s: %d collective tables measured on %s are not used on this scenario's %s over %s; collectives use the roofline",
				f.Name, u.CommSkipped, strings.Join(u.CommFrom, ", "), gpu, c.Fabric.Name))
		}
		if u.KernelUsed > 0 && s.Given("hardware.custom_gpu") {
			s.warnCal(fmt.Sprintf("calibration %s: the kernel tables were measured on the %s preset, not on the figures of [hardware.custom_gpu]", f.Name, gpu))
		}
		if u.CommUsed > 0 && s.Given("hardware.custom_fabric") {
			if s.overrideCalibration() {
				s.warnCal(fmt.Sprintf("calibration %s: its %d collective %s are not used: hardware.custom_fabric.override_calibration = true prices the collectives from the figures of [hardware.custom_fabric]",
					f.Name, u.CommUsed, plural(u.CommUsed, "table")))
			} else {
				s.warnCal(fmt.Sprintf("calibration %s: its %d collective %s, measured on the %s preset, price the collectives they cover, not the figures of [hardware.custom_fabric]; set hardware.custom_fabric.override_calibration = true to price them from the custom fabric",
					f.Name, u.CommUsed, plural(u.CommUsed, "table"), c.Fabric.Name))
			}
		}
	}
	if s.overrideCalibration() && s.Config.CommTables != nil {
		s.Config.CommTables = nil
		s.CalibrationNote += "; collectives from [hardware.custom_fabric] (override_calibration)"
	}
	return nil
}

// overrideCalibration is hardware.custom_fabric.override_calibration.
func (s *Scenario) overrideCalibration() bool {
	cf := s.doc.raw.Hardware.CustomFabric
	return cf != nil && cf.OverrideCalibration != nil && *cf.OverrideCalibration
}

// openCalibration opens one source; (nil, nil) is "embedded" for a GPU
// without embedded tables.
func (s *Scenario) openCalibration(spec, key string) (*calib.File, error) {
	switch {
	case spec == "":
		return nil, errors.New(`empty source (want "embedded", "embedded:NAME", "none" or a calibration file)`)
	case spec == "embedded":
		gpu := s.Config.GPU.Name
		f, err := calib.EmbeddedTables(gpu)
		if err != nil {
			return nil, fmt.Errorf("embedded calibration for %s: %w", gpu, err)
		}
		return f, nil
	case strings.HasPrefix(spec, "embedded:"):
		return calib.OpenTables(spec)
	default:
		// A path in a scenario file is relative to the file's directory;
		// one given on the command line (key == ""), or in an embedded
		// scenario, which has no directory on disk, to the current one.
		p := spec
		if key != "" && s.fsys == nil {
			p = s.osPath(spec)
		}
		return calib.Load(p)
	}
}

// calibrationNote says in one line which tables each source gave:
// "embedded:h200-sxm, 37 tables; ops they do not cover use the roofline".
// notes are sources that gave nothing ("embedded: none for GPU").
func calibrationNote(notes []string, uses []calib.Use) string {
	parts := slices.Clone(notes)
	usable := false
	for _, u := range uses {
		var p string
		switch used := u.Used(); used {
		case u.Tables:
			p = fmt.Sprintf("%s, %d %s", u.Name, u.Tables, plural(u.Tables, "table"))
		case 0:
			p = fmt.Sprintf("%s: none of its %d tables was measured on this box", u.Name, u.Tables)
		default:
			p = fmt.Sprintf("%s, %d of %d tables (the others were measured on another box)", u.Name, used, u.Tables)
		}
		if u.Replaced > 0 {
			p += fmt.Sprintf(", replacing %d earlier", u.Replaced)
		}
		usable = usable || u.Used() > 0 || u.Tables == 0
		parts = append(parts, p)
	}
	// A file none of whose tables moecast can use still names its tables.
	if !usable {
		return strings.Join(parts, " + ") + " (roofline only)"
	}
	return strings.Join(parts, " + ") + "; ops they do not cover use the roofline"
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
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
