package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDeviceCount: a driver's count of none, a negative count or one no
// machine has is an error every command maps to one exit code (issue 22
// class 12), never an empty table or a loop over 2^30 ordinals.
func TestDeviceCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int32
		want int
		err  error
	}{
		{"one", 1, 1, nil},
		{"eight", 8, 8, nil},
		{"none", 0, 0, ErrNoDevice},
		{"negative", -5, 0, ErrNoDevice},
		{"2^30", 1 << 30, 0, ErrBadDriver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deviceCount(tc.n)
			assert.Equal(t, tc.want, got)
			if tc.err == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.err)
			assert.True(t, NoGPU(err) && Unusable(err))
		})
	}
	// Init's failures other than no driver or no device (a library whose
	// symbols do not bind, cuInit's other codes) are Unusable too.
	initFail := &InitError{Err: &Error{Call: "cuInit", Code: 999, Name: "CUDA_ERROR_UNKNOWN", Msg: "unknown error"}}
	assert.Equal(t, "cuda: cuInit: CUDA_ERROR_UNKNOWN (999): unknown error", initFail.Error())
	assert.False(t, NoGPU(initFail))
	for _, err := range []error{ErrNoDriver, ErrNoCUBLASLt, ErrNoNCCL, fmt.Errorf("calib gpu: %w", ErrNoCUBLASLt), fmt.Errorf("gpu info: %w", initFail)} {
		assert.True(t, Unusable(err), "%v", err)
	}
	assert.False(t, Unusable(errors.New("out of memory")))
}
