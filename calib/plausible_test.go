package calib

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImplausibleRows: a row faster than the hardware its provenance names
// allows, or absurdly slow, is refused at its line (accepted before).
func TestImplausibleRows(t *testing.T) {
	withFabric := strings.Replace(validFile, `gpu = "h200-sxm"`, "gpu = \"h200-sxm\"\nfabric = \"nvlink4\"", 1) // rows now at 17, 18
	gemm := `schema = 1

[provenance]
gpu = "h200-sxm"
date = "2026-11-29"
command = "hand"
launch = "cuda-graph"
cache = "CACHE"

[[table]]
name = "g"
op = "gemm"
dtype = "bf16"
columns = ["n", "k", "m", "latency_us"]
rows = """
7168,2048,1,12.0
7168,2048,8,ROW
"""
`
	elementwise := `schema = 1

[provenance]
gpu = "h200-sxm"
date = "2026-11-29"
command = "hand"
launch = "cuda-graph"
cache = "CACHE"

[[table]]
name = "e"
op = "elementwise"
columns = ["bytes", "latency_us"]
rows = """
131072,5.5
ROW
"""
`
	for _, tt := range []struct{ name, src, old, new, want string }{
		{"allreduce 1 GB in 1 us over NVLink", withFabric, "8,4096,21.0", "8,1073741824,1.0",
			`f.toml:18: table "ar": row 2: latency_us 1 is below the physical floor 2.088ms ((ranks-1)/ranks x bytes at the nvlink4 link bandwidth 450.0GB/s)`},
		{"allreduce in hours", withFabric, "8,4096,21.0", "8,4096,1e11",
			`f.toml:18: table "ar": row 2: latency_us 1e+11 (100000.000s) is absurdly slow, above 10.000s`},
		{"allreduce without a fabric preset: no bytes floor", validFile, "8,4096,21.0", "8,1073741824,1.0", ""},
		{"any op in 10 ps (ms written as us / 1e6)", validFile, "8,4096,21.0", "8,4096,0.00001",
			`f.toml:17: table "ar": row 2: latency_us 1e-05 is below the physical floor 100.0ns (the least a GPU op takes`},
		{"gemm above peak", gemm, "ROW", "0.001", `f.toml:17: table "g": row 2: latency_us 0.001 is below the physical floor`},
		{"gemm weights faster than DRAM, flushed", strings.Replace(gemm, "CACHE", "flushed", 1), "ROW", "1.0",
			`f.toml:17: table "g": row 2: latency_us 1 is below the physical floor 6.1us (the n x k weights at the h200-sxm DRAM bandwidth 4.80TB/s)`},
		{"gemm weights in L2, warm: no DRAM floor", strings.Replace(gemm, "CACHE", "warm", 1), "ROW", "1.0", ""},
		{"elementwise 1 GB faster than DRAM", elementwise, "ROW", "1e9,5.0",
			`f.toml:16: table "e": row 2: latency_us 5 is below the physical floor 208.3us (the bytes at the h200-sxm DRAM bandwidth 4.80TB/s)`},
		{"elementwise in L2, warm: no DRAM floor", elementwise, "ROW", "65536,0.5", ""},
		{"elementwise in L2, flushed", strings.Replace(elementwise, "CACHE", "flushed", 1), "ROW", "4.8e6,0.5",
			`f.toml:16: table "e": row 2: latency_us 0.5 is below the physical floor 1.0us (the bytes at the h200-sxm DRAM bandwidth`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(strings.Replace(tt.src, tt.old, tt.new, 1), "CACHE", "warm", 1)
			src = strings.Replace(src, "ROW", "13.0", 1)
			_, err := Parse("f.toml", []byte(src))
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tt.want), "got  %s\nwant %s...", err, tt.want)
		})
	}
}
