package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/moecast/moecast/internal/atomicfile"
	"github.com/moecast/moecast/report"
	"github.com/moecast/moecast/scenarios"
)

// checkHTMLPath checks an --html destination before any work.
func checkHTMLPath(path string) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.CheckOutput(path); err != nil {
		return fmt.Errorf("--html: %w", err) // an *atomicfile.OutputError
	}
	return nil
}

// scenarioInputs are the files sc read besides itself: its calibration
// files (a path, not "embedded:...").
func scenarioInputs(sc *scenarios.Scenario) []string {
	var in []string
	for _, u := range sc.CalibrationUses {
		if !strings.HasPrefix(u.Name, "embedded") {
			in = append(in, u.Name)
		}
	}
	return in
}

// writeHTML renders page to path atomically and says so on stderr ("wrote
// FILE", as the calib commands say; on stderr because stdout may hold the
// JSON or CSV output).
func writeHTML(s *streams, path string, page *report.Page) error {
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return page.Write(w) }); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "wrote %s\n", path)
	return nil
}
