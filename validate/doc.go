// Package validate holds moecast's predictions against measurements taken on
// a real box: `vllm bench serve` and SGLang `bench_serving` result files
// (bench.go) against the serving simulation, and torch.profiler traces
// against the step model.
//
// Measurements are only compared, never fitted: a miss is reported with
// its size and, where the prediction says where a number came from, with
// that source, so that the user can see which part to fix.
package validate
