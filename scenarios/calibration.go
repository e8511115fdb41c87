package scenarios

import "fmt"

// setCalibration resolves a calibration spec: "embedded" (the tables built
// into moecast for the scenario's GPU), "none" (roofline only) or a
// calibration file path. key is the scenario key the spec came from
// ("hardware.calibration"), or "" for the --calibration flag.
func (s *Scenario) setCalibration(spec, key string) error {
	s.Calibration = spec
	switch spec {
	case "none":
		s.CalibrationNote = "none (roofline only)"
		return nil
	case "embedded":
		// The calib package (issue 4) is not in the tree yet: there are no
		// tables to load, so the roofline is used, and the output says so.
		s.CalibrationNote = "embedded requested, none available yet (roofline only)"
		s.Warnings = append(s.Warnings, "calibration \"embedded\": no calibration tables are built in yet; all op costs are roofline estimates")
		return nil
	}
	err := fmt.Errorf("calibration file %q: calibration files are not supported yet (use \"embedded\" or \"none\")", spec)
	if key == "" {
		return fmt.Errorf("--calibration: %w", err)
	}
	return s.doc.wrap(key, err)
}
