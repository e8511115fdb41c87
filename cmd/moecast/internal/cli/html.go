package cli

import (
	"fmt"
	"io"

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

// scenarioInputs are the files on disk sc was read from and read: the
// scenario file, its model.config, calibration files and workload.trace
// (scenarios.Scenario.InputFiles).
func scenarioInputs(sc *scenarios.Scenario) []string { return sc.InputFiles() }

// checkHTMLInputs checks an --html destination against the files the
// scenario read, once they are known and before the work: a model config
// or calibration file the scenario names is an input as much as the
// scenario itself.
func checkHTMLInputs(path string, inputs []string) error {
	if path == "" {
		return nil
	}
	if err := atomicfile.CheckOutput(path, inputs...); err != nil {
		return fmt.Errorf("--html %w", err) // an *atomicfile.OutputError
	}
	return nil
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
