package unit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		got  func(string) (float64, error)
		want float64
	}{
		{"GB decimal", "96GB", bytesF, 96e9},
		{"GiB binary", "60 MiB", bytesF, 60 * 1 << 20},
		{"MiB capacity", "97887MiB", bytesF, 97887 * (1 << 20)},
		{"us", "55us", secondsF, 55e-6},
		{"micro sign", "0.7µs", secondsF, 0.7e-6},
		{"ms", "6.81ms", secondsF, 6.81e-3},
		{"TB/s", "4.8TB/s", bwF, 4.8e12},
		{"GB/s spaced", "64 GB/s", bwF, 64e9},
		{"TFLOPS", "989TFLOPS", flopsF, 989e12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.got(tt.in)
			require.NoError(t, err)
			assert.InEpsilon(t, tt.want, v, 1e-12, "parse %q", tt.in)
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "96", "GB", "-1GB", "x GB", "NaNGB", "4.8TB"} {
		_, err1 := ParseBytes(in)
		_, err2 := ParseBandwidth(in)
		assert.True(t, err1 != nil || in == "4.8TB", "ParseBytes(%q) accepted", in)
		assert.Error(t, err2, "ParseBandwidth(%q) accepted", in)
	}
	_, err := ParseSeconds("12")
	assert.ErrorContains(t, err, "missing unit")
}

func TestTransferTime(t *testing.T) {
	assert.InEpsilon(t, 1e-3, float64(TransferTime(4.8*GB, 4.8*TBps)), 1e-12)
	assert.True(t, float64(TransferTime(1, 0)) > 1e300)
	assert.InEpsilon(t, 2.0, float64(ComputeTime(2e12, TFLOPS)), 1e-12)
}

func TestString(t *testing.T) {
	assert.Equal(t, "55.0us", Seconds(55e-6).String())
	assert.Equal(t, "6.810ms", Seconds(6.81e-3).String())
	assert.Equal(t, "14.3KB", Bytes(14336).String())
	assert.Equal(t, "1.79TB/s", BytesPerSecond(1.792e12).String())
}

func bytesF(s string) (float64, error)   { v, err := ParseBytes(s); return float64(v), err }
func secondsF(s string) (float64, error) { v, err := ParseSeconds(s); return float64(v), err }
func bwF(s string) (float64, error)      { v, err := ParseBandwidth(s); return float64(v), err }
func flopsF(s string) (float64, error)   { v, err := ParseFLOPs(s); return float64(v), err }
