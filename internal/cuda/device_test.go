package cuda

import (
	_ "embed"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onDevice locks the test to its thread and makes device 0's primary context
// current, or skips where there is no driver.
func onDevice(t *testing.T) Device {
	t.Helper()
	if err := Init(); err != nil {
		if NoGPU(err) {
			t.Skipf("no GPU here: %v", err)
		}
		t.Fatal(err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	dev, err := GetDevice(0)
	require.NoError(t, err)
	ctx, err := dev.Retain()
	require.NoError(t, err)
	require.NoError(t, ctx.SetCurrent())
	return dev
}

func TestDeviceBasics(t *testing.T) {
	dev := onDevice(t)
	v, err := DriverVersion()
	require.NoError(t, err)
	name, err := dev.Name()
	require.NoError(t, err)
	uuid, err := dev.UUID()
	require.NoError(t, err)
	require.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, uuid)
	t.Logf("uuid %s", uuid)
	maj, minor, err := dev.ComputeCapability()
	require.NoError(t, err)
	sms, err := dev.Attribute(AttrMultiprocessorCount)
	require.NoError(t, err)
	l2, err := dev.Attribute(AttrL2CacheSize)
	require.NoError(t, err)
	mem, err := dev.TotalMem()
	require.NoError(t, err)
	t.Logf("driver %d at %s: %s sm_%d%d, %d SMs, L2 %d B, %d B", v, LibraryPath(), name, maj, minor, sms, l2, mem)
	assert.Greater(t, sms, 0)

	const n = 1 << 20
	p, err := Alloc(4 * n)
	require.NoError(t, err)
	defer Free(p)
	require.NoError(t, Memset32(p, 0xdeadbeef, n))
	host := make([]uint32, n)
	for i := range host {
		host[i] = uint32(i * 2654435761)
	}
	require.NoError(t, CopyToDevice(p, host[:n/2]))
	back := make([]uint32, n)
	require.NoError(t, CopyFromDevice(back, p))
	assert.Equal(t, host[:n/2], back[:n/2])
	for i := n / 2; i < n; i++ {
		if back[i] != 0xdeadbeef {
			t.Fatalf("word %d = %#x after memset", i, back[i])
		}
	}

	_, err = Alloc(1 << 50)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "CUDA_ERROR_OUT_OF_MEMORY", ce.Name)

	s, err := NewStream(StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()
	e0, err := NewEvent(EventDefault)
	require.NoError(t, err)
	e1, err := NewEvent(EventDefault)
	require.NoError(t, err)
	require.NoError(t, e0.Record(s))
	require.NoError(t, e1.Record(s))
	require.NoError(t, e1.Synchronize())
	dt, err := Elapsed(e0, e1)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, dt, 0.0)
}

func TestNCCLOneRank(t *testing.T) {
	onDevice(t)
	if err := InitNCCL(); err != nil {
		t.Skipf("no NCCL here: %v", err)
	}
	v, err := NCCLVersion()
	require.NoError(t, err)
	t.Logf("NCCL %d at %s", v, NCCLPath())

	comms, err := CommInitAll([]int{0})
	require.NoError(t, err)
	id, err := NewUniqueID()
	require.NoError(t, err)
	solo, err := CommInitRank(1, 0, id)
	require.NoError(t, err)

	const n = 4096
	send, err := Alloc(4 * n)
	require.NoError(t, err)
	recv, err := Alloc(4 * n)
	require.NoError(t, err)
	host := make([]float32, n)
	for i := range host {
		host[i] = float32(i) + 0.5
	}
	require.NoError(t, CopyToDevice(send, host))
	s, err := NewStream(StreamNonBlocking)
	require.NoError(t, err)
	for _, c := range []Comm{comms[0], solo} {
		require.NoError(t, Memset32(recv, 0x7fc00000, n))
		require.NoError(t, Synchronize())
		require.NoError(t, c.AllReduce(send, recv, n, NCCLFloat32, NCCLSum, s))
		require.NoError(t, s.Synchronize())
		got := make([]float32, n)
		require.NoError(t, CopyFromDevice(got, recv))
		assert.Equal(t, host, got)
		require.NoError(t, c.AsyncError())
		require.NoError(t, c.AllToAll(send, recv, n, NCCLFloat32, 4, 1, s))
		require.NoError(t, s.Synchronize())
		require.NoError(t, CopyFromDevice(got, recv))
		assert.Equal(t, host, got)
	}
	require.NoError(t, comms[0].Destroy())
	require.NoError(t, solo.Abort())
}

//go:embed testdata/probe.ptx
var probePTX []byte

// TestLaunchAndGraph loads testdata/probe.ptx (JIT), launches with marshalled
// arguments, replays a captured graph, and raises the dynamic shared memory
// limit past 48 KiB.
func TestLaunchAndGraph(t *testing.T) {
	onDevice(t)
	mod, err := LoadModule(probePTX)
	require.NoError(t, err)
	defer mod.Unload()
	axpy, err := mod.Function("axpy")
	require.NoError(t, err)
	_, err = mod.Function("nope")
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "CUDA_ERROR_NOT_FOUND", ce.Name)

	const n = 10000
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%97)-48, float32(i%13)
	}
	dx, err := Alloc(4 * n)
	require.NoError(t, err)
	defer Free(dx)
	dy, err := Alloc(4 * n)
	require.NoError(t, err)
	defer Free(dy)
	require.NoError(t, CopyToDevice(dx, x))
	require.NoError(t, CopyToDevice(dy, y))
	s, err := NewStream(StreamNonBlocking)
	require.NoError(t, err)
	defer s.Destroy()
	grid, block := Dim3{(n + 255) / 256, 1, 1}, Dim3{256, 1, 1}
	require.NoError(t, axpy.Launch(grid, block, 0, s, dy, dx, float32(0.5), int32(n)))

	require.NoError(t, s.BeginCapture(CaptureModeThreadLocal))
	for i := 0; i < 10; i++ {
		require.NoError(t, axpy.Launch(grid, block, 0, s, dy, dx, float32(0.25), int32(n)))
	}
	g, err := s.EndCapture()
	require.NoError(t, err)
	defer g.Destroy()
	ge, err := g.Instantiate()
	require.NoError(t, err)
	defer ge.Destroy()
	require.NoError(t, ge.Launch(s))
	require.NoError(t, ge.Launch(s))
	require.NoError(t, s.Synchronize())
	got := make([]float32, n)
	require.NoError(t, CopyFromDevice(got, dy))
	for i := range got {
		want := y[i] + 0.5*x[i] + 20*0.25*x[i]
		if got[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}

	rev, err := mod.Function("reverse")
	require.NoError(t, err)
	const words = 24 << 10 // 96 KiB of shared memory
	dr, err := Alloc(4 * words)
	require.NoError(t, err)
	defer Free(dr)
	err = rev.Launch(Dim3{1, 1, 1}, Dim3{256, 1, 1}, 4*words, s, dr, int32(words))
	require.Error(t, err, "a launch over 48 KiB before cuFuncSetAttribute")
	require.NoError(t, rev.SetAttribute(FuncMaxDynamicSharedMemory, 4*words))
	require.NoError(t, rev.Launch(Dim3{1, 1, 1}, Dim3{256, 1, 1}, 4*words, s, dr, int32(words)))
	require.NoError(t, s.Synchronize())
	out := make([]float32, words)
	require.NoError(t, CopyFromDevice(out, dr))
	for i, v := range out {
		if v != float32(i) {
			t.Fatalf("reverse[%d] = %v", i, v)
		}
	}
	regs, err := rev.Attribute(FuncNumRegs)
	require.NoError(t, err)
	assert.Greater(t, regs, 0)
}
