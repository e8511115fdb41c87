package cuda

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeFinder(env map[string]string, files []string) Finder {
	return Finder{
		Getenv: func(k string) string { return env[k] },
		Glob: func(pattern string) ([]string, error) {
			var out []string
			for _, f := range files {
				if ok, _ := matchPath(pattern, f); ok {
					out = append(out, f)
				}
			}
			return out, nil
		},
	}
}

func TestCandidates(t *testing.T) {
	wheel := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"
	venv := "/home/u/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
	tests := []struct {
		name     string
		lib      Library
		env      map[string]string
		files    []string
		want     []string
		override bool
	}{
		{"override alone", NCCLLibrary, map[string]string{"MOECAST_NCCL": "/x/libnccl.so.2"}, []string{wheel},
			[]string{"/x/libnccl.so.2"}, true},
		{"loader path first, then wheels", NCCLLibrary, nil, []string{wheel},
			[]string{"libnccl.so.2", wheel}, false},
		{"active venv before /opt", NCCLLibrary, map[string]string{"VIRTUAL_ENV": "/home/u/venv"}, []string{wheel, venv},
			[]string{"libnccl.so.2", venv, wheel}, false},
		{"unset VIRTUAL_ENV is skipped", NCCLLibrary, nil, []string{"/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"},
			[]string{"libnccl.so.2"}, false},
		{"driver folders", CUDALibrary, nil, []string{"/usr/local/nvidia/lib64/libcuda.so.1"},
			[]string{"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, override := fakeFinder(tt.env, tt.files).Candidates(tt.lib)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.override, override)
		})
	}
}

func TestOpenFirstThatLoads(t *testing.T) {
	wheel := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"
	var tried []string
	h, path, err := open(NCCLLibrary, fakeFinder(nil, []string{wheel}), func(p string) (uintptr, error) {
		tried = append(tried, p)
		if p == wheel {
			return 42, nil
		}
		return 0, fmt.Errorf("%s: cannot open shared object file\nsecond line", p)
	})
	require.NoError(t, err)
	assert.Equal(t, uintptr(42), h)
	assert.Equal(t, wheel, path)
	assert.Equal(t, []string{"libnccl.so.2", wheel}, tried)
}

func TestOpenErrors(t *testing.T) {
	fail := func(p string) (uintptr, error) {
		return 0, fmt.Errorf("%s: cannot open shared object file: No such file or directory\nmore", p)
	}
	_, _, err := open(CUDALibrary, fakeFinder(nil, nil), fail)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoDriver), "%v", err)
	assert.False(t, errors.Is(err, ErrNoNCCL))
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "tried libcuda.so.1")
	assert.Contains(t, err.Error(), "MOECAST_CUDA")

	_, _, err = open(NCCLLibrary, fakeFinder(map[string]string{"MOECAST_NCCL": "/nope/libnccl.so.2"}, nil), fail)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoNCCL))
	assert.Contains(t, err.Error(), "MOECAST_NCCL=/nope/libnccl.so.2")
	assert.NotContains(t, err.Error(), "\n")
}

func TestLoadWithoutDriver(t *testing.T) {
	d, err := load(fakeFinder(nil, nil), func(p string) (uintptr, error) {
		return 0, fmt.Errorf("%s: cannot open shared object file", p)
	})
	assert.Nil(t, d)
	assert.True(t, errors.Is(err, ErrNoDriver))
	assert.True(t, NoGPU(err))
	assert.Equal(t, "no NVIDIA driver (libcuda.so.1) could be loaded: tried libcuda.so.1 (set MOECAST_CUDA to its path): "+
		"libcuda.so.1: cannot open shared object file", err.Error())
}

func TestNoDeviceError(t *testing.T) {
	err := error(&Error{Call: "cuInit", Code: 100, Name: "CUDA_ERROR_NO_DEVICE", Msg: "no CUDA-capable device is detected"})
	assert.True(t, errors.Is(err, ErrNoDevice))
	assert.True(t, NoGPU(err))
	assert.False(t, errors.Is(&Error{Code: 2}, ErrNoDevice))
	assert.False(t, NoGPU(&Error{Code: 2}))
}

// TestNoGPUHere runs where there is no GPU (CI): without a driver, or with a
// driver that finds no device, every call fails with one line that NoGPU
// recognises, and nothing panics.
func TestNoGPUHere(t *testing.T) {
	if err := Init(); err == nil || !NoGPU(err) {
		t.Skipf("a GPU is usable here (%v): the no-GPU path is not exercised", err)
	}
	t.Logf("here: %v", Init())
	calls := map[string]func() error{
		"Init":        Init,
		"DeviceCount": func() error { _, err := DeviceCount(); return err },
		"Alloc":       func() error { _, err := Alloc(1024); return err },
		"LoadModule":  func() error { _, err := LoadModule([]byte("ptx")); return err },
		"Launch":      func() error { return Function(0).Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 0) },
		"NewStream":   func() error { _, err := NewStream(StreamNonBlocking); return err },
		"Elapsed":     func() error { _, err := Elapsed(0, 0); return err },
	}
	for name, call := range calls {
		err := call()
		require.Error(t, err, name)
		assert.True(t, NoGPU(err), "%s: %v", name, err)
		assert.Equal(t, 1, len(strings.Split(err.Error(), "\n")), "%s: %q", name, err)
	}
}

func TestNoNCCLHere(t *testing.T) {
	if err := InitNCCL(); err == nil || !errors.Is(err, ErrNoNCCL) {
		t.Skipf("NCCL loaded here (%v)", err)
	}
	_, err := NCCLVersion()
	assert.True(t, errors.Is(err, ErrNoNCCL))
	_, err = CommInitAll([]int{0})
	assert.True(t, errors.Is(err, ErrNoNCCL))
	assert.True(t, errors.Is(Comm(0).AllReduce(0, 0, 1, NCCLFloat32, NCCLSum, 0), ErrNoNCCL))
	assert.NotContains(t, err.Error(), "\n")
}

func TestMarshalParams(t *testing.T) {
	p, err := MarshalParams(DevicePtr(0x1122334455667788), int32(-2), uint32(7), float32(1.5), 3, int64(-1), true)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, p.Bytes(0))
	assert.Equal(t, []byte{0xfe, 0xff, 0xff, 0xff}, p.Bytes(1))
	assert.Equal(t, []byte{7, 0, 0, 0}, p.Bytes(2))
	assert.Equal(t, []byte{0, 0, 0xc0, 0x3f}, p.Bytes(3))
	assert.Equal(t, []byte{3, 0, 0, 0}, p.Bytes(4))
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, p.Bytes(5))
	assert.Equal(t, []byte{1}, p.Bytes(6))

	_, err = MarshalParams(1 << 40)
	assert.ErrorContains(t, err, "argument 0: int 1099511627776 does not fit a C int")
	_, err = MarshalParams(DevicePtr(1), "x")
	assert.ErrorContains(t, err, "argument 1: unsupported type string")
}

func TestErrorText(t *testing.T) {
	e := &Error{Call: "cuMemAlloc(8 bytes)", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Msg: "out of memory"}
	assert.Equal(t, "cuda: cuMemAlloc(8 bytes): CUDA_ERROR_OUT_OF_MEMORY (2): out of memory", e.Error())
	n := &NCCLError{Call: "ncclAllReduce", Code: 2, Msg: "unhandled system error"}
	assert.Equal(t, "nccl: ncclAllReduce: unhandled system error (2)", n.Error())
}

// matchPath is filepath.Match for the fake file system.
func matchPath(pattern, name string) (bool, error) { return filepath.Match(pattern, name) }
