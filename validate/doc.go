// Package validate holds moecast's predictions against measurements taken on
// a real box: torch.profiler traces against the step model (trace.go: each
// prefill, mixed and decode step, priced at its mix through sim.StepBatch,
// compared per category and op by op, the kernels mapped to the
// model's ops; read.go: the traces read once, with each rank's collective
// kernels for their spread across ranks), calibration tables derived from
// a trace's op-level kernel times (calib.go, the calibration file format of
// package calib), and measured serving results for the serving simulation:
// one common record (bench.go, BenchResult) read from every result format
// of the field through a registry of formats (format.go: one detection case
// and one parser per format, each in format_<name>.go), and the accuracy
// scorecard of a corpus of them (scorecard.go: partitions, skipped rows by
// reason, the rules that exclude unreliable rows; the shipped corpus is
// validate/corpus).
//
// Measurements are only compared, never fitted: a miss is reported with
// its size and, where the prediction says where a number came from, with
// that source, so that the user can see which part to fix. Calibration
// tables are made of op-level kernel times, never of step times.
//
// Units: spans are unit.Seconds, trace instants trace.Time; JSON and text
// name their unit (ms, us). docs/validate.md describes the mapping, the
// outputs and the shipped example.
package validate
