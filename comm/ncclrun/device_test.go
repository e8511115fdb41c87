package ncclrun

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/internal/unit"
)

// The device tests need a GPU and NCCL; without them they skip.

func onGPU(t *testing.T) {
	t.Helper()
	if err := cuda.Init(); err != nil {
		if cuda.NoGPU(err) {
			t.Skipf("no GPU here: %v", err)
		}
		t.Fatal(err)
	}
	if err := cuda.InitNCCL(); err != nil {
		t.Skipf("no NCCL here: %v", err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
}

// TestDeviceSweep: every collective, eager and graph, out of place and in
// place, over sizes from 8 B to 1 GiB on one GPU: every result exact.
func TestDeviceSweep(t *testing.T) {
	onGPU(t)
	g, err := OpenDevices([]int{0}, 30*time.Second)
	require.NoError(t, err)
	defer g.Close()
	p := DefaultPlan(true)
	p.Sizes = []Size{{Bytes: 8}, {Bytes: 14336, Tokens: 1}, {Bytes: 14336 * 64, Tokens: 64}, {Bytes: 1 << 20}, {Bytes: 64 << 20}, {Bytes: 1 << 30}}
	start := time.Now()
	ms, err := g.Sweep(p, nil)
	require.NoError(t, err)
	t.Logf("sweep of %d points in %.1f s", len(ms), time.Since(start).Seconds())
	res, err := Combine(1, ms)
	require.NoError(t, err)
	assert.Len(t, res, 4*len(p.Sizes)*2)
	for _, r := range res {
		assert.True(t, r.OK(), "%s %d B %s: %d wrong, %d wrong in place", r.Collective, r.Bytes, r.Mode, r.Wrong, r.InPlaceWrong)
		assert.Greater(t, r.Time.Median, unit.Seconds(0))
		assert.LessOrEqual(t, r.Time.Min, r.Time.Median)
		assert.GreaterOrEqual(t, r.Time.Max, r.Time.Median)
		assert.Equal(t, r.Collective != AllToAll, r.InPlace != nil)
	}
	v, _ := cuda.NCCLVersion()
	var buf bytes.Buffer
	require.NoError(t, Report(&buf, res, g.Devices(), v))
	t.Logf("NCCL_NVLS_ENABLE=%s\n%s", os.Getenv("NCCL_NVLS_ENABLE"), buf.String())
	assert.Equal(t, "0", os.Getenv("NCCL_NVLS_ENABLE"))
}

// TestDeviceAbort: a wait that outlasts its timeout aborts the
// communicator (ncclCommAbort) with its work in flight and says so; the
// GPU stays usable (a new communicator runs).
func TestDeviceAbort(t *testing.T) {
	onGPU(t)
	g, err := OpenDevices([]int{0}, 30*time.Second)
	require.NoError(t, err)
	pt := Point{Collective: AllReduce, Bytes: 1 << 30, Count: 1 << 29, Iters: 1}
	require.NoError(t, g.reserve(pt))
	for i := 0; i < 200; i++ { // ~0.15 s of work
		require.NoError(t, g.launch(pt, false))
	}
	g.timeout = time.Millisecond
	start := time.Now()
	err = g.wait("allreduce 1073741824 B (eager, 1 ranks)")
	var te *TimeoutError
	require.ErrorAs(t, err, &te)
	t.Logf("%v (returned after %.3f s)", err, time.Since(start).Seconds())
	assert.Contains(t, err.Error(), "ncclrun: allreduce 1073741824 B (eager, 1 ranks): not done after 1ms")
	assert.Contains(t, err.Error(), "communicators aborted (ncclCommAbort)")
	assert.True(t, g.aborted)
	require.NoError(t, g.Close())
	dev, _ := cuda.GetDevice(0)
	ctx, _ := dev.Retain()
	ctx.SetCurrent()
	defer dev.Release()
	require.NoError(t, cuda.Synchronize())

	g2, err := OpenDevices([]int{0}, 30*time.Second)
	require.NoError(t, err)
	defer g2.Close()
	p := DefaultPlan(true)
	p.Sizes, p.Modes, p.Collectives = []Size{{Bytes: 1 << 20}}, []Mode{Eager}, []Collective{AllReduce}
	ms, err := g2.Sweep(p, nil)
	require.NoError(t, err)
	assert.Zero(t, ms[0].Wrong)
}

// TestDeviceSameGPU: two ranks on one GPU are refused before NCCL sees
// them.
func TestDeviceSameGPU(t *testing.T) {
	onGPU(t)
	_, err := OpenDevices([]int{0, 0}, 30*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "devices 0 and 0 are the same GPU")
}

// TestDeviceOpenRankSolo: one rank through the rendezvous path
// (ncclCommInitRankScalable with rank 0's unique id).
func TestDeviceOpenRankSolo(t *testing.T) {
	onGPU(t)
	s, err := rendezvous.Join(rendezvous.Env{Launcher: rendezvous.Single, World: 1}, rendezvous.Options{})
	require.NoError(t, err)
	g, err := OpenRank(s, 0, 30*time.Second)
	require.NoError(t, err)
	defer g.Close()
	p := DefaultPlan(true)
	p.Sizes = []Size{{Bytes: 14336, Tokens: 1}, {Bytes: 16 << 20}}
	ms, err := g.Sweep(p, nil)
	require.NoError(t, err)
	for _, m := range ms {
		assert.Zero(t, m.Wrong+m.InPlaceWrong, "%+v", m)
	}
}

// TestDeviceTwoProcessesOneGPU: two processes started as torchrun starts
// them (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) meet over loopback TCP;
// both would drive device 0, so rank 0 stops the job before NCCL starts
// and both fail with one clear line.
func TestDeviceTwoProcessesOneGPU(t *testing.T) {
	onGPU(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for r := 0; r < 2; r++ {
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), "MOECAST_NCCLRUN_CHILD=1", "RANK="+strconv.Itoa(r), "WORLD_SIZE=2", "LOCAL_RANK=0",
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port), "MOECAST_JOB_TOKEN=two-on-one")
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		require.NoError(t, c.Start())
		cmds, outs = append(cmds, c), append(outs, &out)
	}
	for i, c := range cmds {
		err := c.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "rank %d: %s", i, outs[i])
		assert.Equal(t, 6, ee.ExitCode(), "rank %d: %s", i, outs[i])
		msg := strings.TrimSpace(outs[i].String())
		t.Logf("rank %d: %s", i, msg)
		assert.Contains(t, msg, "ranks 0 and 1 both drive GPU GPU-")
		assert.NotContains(t, msg, "\n")
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("MOECAST_NCCLRUN_CHILD") != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child is one rank of TestDeviceTwoProcessesOneGPU: exit 6 with the error
// on one line when the job is refused, 0 when it runs.
func child() int {
	runtime.LockOSThread()
	env, err := rendezvous.FromEnv(os.Getenv)
	if err == nil {
		err = cuda.Init()
	}
	if err != nil {
		fmt.Println(err)
		return 3
	}
	s, err := rendezvous.Join(env, rendezvous.Options{Timeout: 20 * time.Second})
	if err != nil {
		fmt.Println(err)
		return 4
	}
	defer s.Close()
	g, err := OpenRank(s, env.LocalRank, 30*time.Second)
	if err != nil {
		fmt.Println(err)
		if errors.Is(err, cuda.ErrNoNCCL) {
			return 5
		}
		return 6
	}
	g.Close()
	return 0
}
