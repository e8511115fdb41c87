package kernels

import "math"

// Grouped fp8/bf16 MoE GEMMs get less of the tensor-core peak as the
// per-rank expert width (Inter after the expert-TP split) narrows: the
// gate_up GEMM's N is 2·Inter and the down GEMM's K is Inter, too few
// tiles per expert to keep the pipeline full. Measured (aiconfigurator
// perfdb, vLLM 0.24.0 fp8-block Triton experts on H200, DeepSeek-V3 dims,
// 16384 tokens, balanced, moe_tp 1/2/4/8/16;
// testdata/perfdb_moe_fp8_dsv3.csv): 2·pairs·3·7168·Inter FLOPs in
// 18.67, 10.57, 6.59, 4.63, 3.72 ms = 0.312, 0.276, 0.221, 0.158, 0.098 of
// 1979 TFLOP/s at Inter = 2048, 1024, 512, 256, 128.
//
// MoEWidthFactor is that efficiency relative to Inter = 2048 (where
// EffComputeMoE was measured): piecewise linear in log2(Inter), 1 at 2048
// and wider, the 128-wide value below 128. The Marlin W4A16 path is not
// scaled: perfdb Marlin at TP8 (Inter 256) and EP8 (Inter 2048) take 8.59
// and 7.74 ms for the same FLOPs at 16384 tokens on H200.
var (
	moeWidths      = [...]float64{128, 256, 512, 1024, 2048}
	moeWidthFactor = [...]float64{0.0980 / 0.3125, 0.1575 / 0.3125, 0.2215 / 0.3125, 0.2759 / 0.3125, 1}
)

// MoEWidthFactor scales ComputeMoE for a per-rank expert width of inter.
func MoEWidthFactor(inter int) float64 {
	return lerpLog2(moeWidths[:], moeWidthFactor[:], float64(inter))
}

// lerpLog2 is ys at x, piecewise linear in log2(x) between the points
// (xs strictly increasing, as long as ys), the end values beyond them:
// the efficiency curves measured at a few sizes (MoEWidthFactor,
// prefillEfficiency, MarlinMXFP4Eff).
func lerpLog2(xs, ys []float64, x float64) float64 {
	last := len(xs) - 1
	if x <= xs[0] {
		return ys[0]
	}
	if x >= xs[last] {
		return ys[last]
	}
	i := 1
	for x > xs[i] {
		i++
	}
	f := (math.Log2(x) - math.Log2(xs[i-1])) / (math.Log2(xs[i]) - math.Log2(xs[i-1]))
	return ys[i-1] + f*(ys[i]-ys[i-1])
}
