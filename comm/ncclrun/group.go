package ncclrun

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/moecast/moecast/internal/cuda"
	"github.com/moecast/moecast/internal/rendezvous"
)

// rank is one communicator of this process: its device, context, stream,
// events and buffers.
type rank struct {
	rank   int // in the world
	dev    cuda.Device
	ord    int // device ordinal
	ctx    cuda.Context
	stream cuda.Stream
	comm   cuda.Comm
	e0, e1 cuda.Event
	// send and recv hold sendCap and recvCap bytes.
	send, recv       cuda.DevicePtr
	sendCap, recvCap int64
	// host and want stage this rank's inputs and outputs on the host.
	host, want []uint16
	Device     DeviceInfo
}

// DeviceInfo names one rank's GPU.
type DeviceInfo struct {
	Rank int    `json:"rank"`
	Host string `json:"host"`
	Ord  int    `json:"device"`
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// Group is the ranks of a job that this process drives: every GPU of
// OpenDevices, or this process's one GPU of a rendezvous job (OpenRank).
// Its methods run on the calling goroutine, which must stay locked to its
// OS thread (runtime.LockOSThread) from Open to Close.
type Group struct {
	ranks   []*rank
	world   int
	timeout time.Duration
	aborted bool
	pat     *patterns
	graphs  []cuda.GraphExec
}

// TimeoutError is a collective (or an NCCL setup) that did not finish in
// time; after a collective the communicators were aborted, after a setup
// call (Setup) there was none to abort: the call is left blocked.
type TimeoutError struct {
	What    string
	Timeout time.Duration
	Async   error // what ncclCommGetAsyncError said, if anything
	Setup   bool  // a communicator was being made (ncclCommInitAll, ncclCommInitRankScalable)
}

func (e *TimeoutError) Error() string {
	if e.Setup {
		return fmt.Sprintf("ncclrun: %s: not done after %s (a rank did not join?); no communicator to abort: the call is left blocked", e.What, e.Timeout)
	}
	why := "NCCL reported no error (a rank did not join the collective?)"
	if e.Async != nil {
		why = "NCCL reported " + e.Async.Error()
	}
	return fmt.Sprintf("ncclrun: %s: not done after %s; %s; communicators aborted (ncclCommAbort)", e.What, e.Timeout, why)
}

// nvlsOff keeps NVLink multicast (NVLS) off: NCCL reads NCCL_NVLS_ENABLE
// when a communicator starts.
func nvlsOff() {
	os.Setenv("NCCL_NVLS_ENABLE", "0")
}

// Devices returns the local ranks' GPUs.
func (g *Group) Devices() []DeviceInfo {
	var out []DeviceInfo
	for _, r := range g.ranks {
		out = append(out, r.Device)
	}
	return out
}

// World is the job's rank count.
func (g *Group) World() int { return g.world }

func deviceInfo(rk, ord int) (cuda.Device, DeviceInfo, error) {
	dev, err := cuda.GetDevice(ord)
	if err != nil {
		return 0, DeviceInfo{}, err
	}
	name, err := dev.Name()
	if err != nil {
		return 0, DeviceInfo{}, err
	}
	uuid, err := dev.UUID()
	if err != nil {
		return 0, DeviceInfo{}, err
	}
	host, _ := os.Hostname()
	return dev, DeviceInfo{Rank: rk, Host: host, Ord: ord, Name: name, UUID: uuid}, nil
}

// newRank retains the device's primary context and makes the stream and
// events (the context is left current).
func newRank(rk, ord int) (*rank, error) {
	dev, info, err := deviceInfo(rk, ord)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.Retain()
	if err != nil {
		return nil, err
	}
	r := &rank{rank: rk, dev: dev, ord: ord, ctx: ctx, Device: info}
	if err := ctx.SetCurrent(); err != nil {
		dev.Release()
		return nil, err
	}
	if r.stream, err = cuda.NewStream(cuda.StreamNonBlocking); err != nil {
		dev.Release()
		return nil, err
	}
	if r.e0, err = cuda.NewEvent(cuda.EventDefault); err == nil {
		r.e1, err = cuda.NewEvent(cuda.EventDefault)
	}
	if err != nil {
		r.free()
		return nil, err
	}
	return r, nil
}

func (r *rank) free() {
	r.ctx.SetCurrent()
	if r.send != 0 {
		cuda.Free(r.send)
	}
	if r.recv != 0 {
		cuda.Free(r.recv)
	}
	r.send, r.recv, r.sendCap, r.recvCap = 0, 0, 0, 0
	if r.e0 != 0 {
		r.e0.Destroy()
	}
	if r.e1 != 0 {
		r.e1.Destroy()
	}
	if r.stream != 0 {
		r.stream.Destroy()
	}
	r.dev.Release()
}

// OpenDevices makes one communicator per device ordinal in devices, all
// driven by this process (ncclCommInitAll; one device: a one-rank
// communicator). Rank i is devices[i].
func OpenDevices(devices []int, timeout time.Duration) (*Group, error) {
	if len(devices) == 0 {
		return nil, errors.New("ncclrun: no devices")
	}
	if len(devices) > MaxRanks {
		return nil, fmt.Errorf("ncclrun: %d devices: the exact check supports at most %d ranks", len(devices), MaxRanks)
	}
	nvlsOff()
	if err := cuda.InitNCCL(); err != nil {
		return nil, err
	}
	g := &Group{world: len(devices), timeout: timeout, pat: newPatterns(len(devices))}
	seen := map[string]int{}
	for i, d := range devices {
		r, err := newRank(i, d)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.ranks = append(g.ranks, r)
		if j, dup := seen[r.Device.UUID]; dup {
			g.Close()
			return nil, fmt.Errorf("ncclrun: devices %d and %d are the same GPU %s: NCCL needs one GPU per rank", devices[j], d, r.Device.UUID)
		}
		seen[r.Device.UUID] = d
	}
	var comms []cuda.Comm
	err := g.bounded("ncclCommInitAll", func() error {
		var err error
		comms, err = cuda.CommInitAll(devices)
		return err
	})
	if err != nil {
		g.Close()
		return nil, err
	}
	for i, c := range comms {
		g.ranks[i].comm = c
	}
	g.ranks[0].ctx.SetCurrent()
	return g, nil
}

// OpenRank joins this process's GPU (device ordinal dev) to the job of
// session s as rank s.Env.Rank: rank 0 gathers every rank's GPU (refusing
// two ranks on one GPU), makes the NCCL unique id and hands it to all;
// then every rank calls ncclCommInitRankScalable.
func OpenRank(s *rendezvous.Session, dev int, timeout time.Duration) (*Group, error) {
	nvlsOff()
	env := s.Env
	if env.World > MaxRanks {
		return nil, fmt.Errorf("ncclrun: %d ranks: the exact check supports at most %d", env.World, MaxRanks)
	}
	if err := cuda.InitNCCL(); err != nil {
		return nil, err
	}
	r, err := newRank(env.Rank, dev)
	if err != nil {
		return nil, err
	}
	g := &Group{ranks: []*rank{r}, world: env.World, timeout: timeout, pat: newPatterns(env.World)}
	fail := func(err error) (*Group, error) {
		g.Close()
		return nil, err
	}
	all, err := s.Gather([]byte(fmt.Sprintf("%s\t%s\t%d\t%s", r.Device.UUID, r.Device.Host, dev, r.Device.Name)))
	if err != nil {
		return fail(err)
	}
	// Rank 0's answer: "ok" and the id, or the reason every rank stops.
	var msg []byte
	if env.Rank == 0 {
		msg = idMessage(all)
	}
	msg, err = s.Broadcast(msg)
	if err != nil {
		return fail(err)
	}
	if len(msg) < 2 || string(msg[:2]) != "ok" || len(msg) != 2+len(cuda.UniqueID{}) {
		return fail(fmt.Errorf("ncclrun: rank %d: rank 0 stops the job: %s", env.Rank, msg))
	}
	var id cuda.UniqueID
	copy(id[:], msg[2:])
	// The comm is set here, not in bounded's goroutine: after a timeout
	// that goroutine may still return one while Close reads r.comm.
	var comm cuda.Comm
	err = g.bounded(fmt.Sprintf("ncclCommInitRankScalable (rank %d of %d)", env.Rank, env.World), func() error {
		var err error
		comm, err = cuda.CommInitRank(env.World, env.Rank, id)
		return err
	})
	if err != nil {
		return fail(err)
	}
	r.comm = comm
	return g, nil
}

// idMessage is rank 0's answer to the gathered GPUs: "ok" and a fresh
// unique id, or why the job cannot run.
func idMessage(all [][]byte) []byte {
	byUUID := map[string]int{}
	for rk, b := range all {
		f := strings.SplitN(string(b), "\t", 4)
		if q, dup := byUUID[f[0]]; dup {
			host, dev := "", ""
			if len(f) >= 3 {
				host, dev = f[1], f[2]
			}
			return []byte(fmt.Sprintf("ranks %d and %d both drive GPU %s (host %s, device %s): one GPU per rank (each rank uses LOCAL_RANK's GPU)", q, rk, f[0], host, dev))
		}
		byUUID[f[0]] = rk
	}
	id, err := cuda.NewUniqueID()
	if err != nil {
		return []byte(err.Error())
	}
	return append([]byte("ok"), id[:]...)
}

// bounded runs f (a blocking NCCL call) on a thread of its own with the
// first rank's context current, and gives up after the timeout.
func (g *Group) bounded(what string, f func() error) error {
	done := make(chan error, 1)
	ctx := g.ranks[0].ctx
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := ctx.SetCurrent(); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(g.timeout):
		return &TimeoutError{What: what, Timeout: g.timeout, Setup: true}
	}
}

// wait waits for every local stream, polling the communicators' async
// errors; after the timeout, or on an async error, it aborts them.
func (g *Group) wait(what string) error {
	done := make(chan error, 1)
	ranks := g.ranks
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for _, r := range ranks {
			if err := r.ctx.SetCurrent(); err != nil {
				done <- err
				return
			}
			if err := r.stream.Synchronize(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timer := time.NewTimer(g.timeout)
	defer timer.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			for _, r := range g.ranks {
				if err := r.comm.AsyncError(); err != nil {
					g.abort(done)
					return fmt.Errorf("ncclrun: %s: rank %d: %w; communicators aborted (ncclCommAbort)", what, r.rank, err)
				}
			}
		case <-timer.C:
			var async error
			for _, r := range g.ranks {
				if err := r.comm.AsyncError(); err != nil && async == nil {
					async = err
				}
			}
			g.abort(done)
			return &TimeoutError{What: what, Timeout: g.timeout, Async: async}
		}
	}
}

// abort aborts every local communicator (their kernels return) and waits
// a little for the waiting thread.
func (g *Group) abort(done <-chan error) {
	if g.aborted {
		return
	}
	g.aborted = true
	for _, r := range g.ranks {
		if r.comm != 0 {
			r.comm.Abort()
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
}

// Close frees everything (destroying the communicators, or nothing more
// after an abort) and releases the devices' primary contexts; the caller
// makes its own context current again.
func (g *Group) Close() error {
	g.dropGraphs()
	var first error
	for _, r := range g.ranks {
		if r.comm != 0 && !g.aborted {
			r.ctx.SetCurrent()
			if err := r.comm.Destroy(); err != nil && first == nil {
				first = err
			}
		}
		r.comm = 0
	}
	for _, r := range g.ranks {
		r.free()
	}
	return first
}

func (g *Group) dropGraphs() {
	for i, e := range g.graphs {
		if e != 0 {
			g.ranks[i].ctx.SetCurrent()
			e.Destroy()
		}
	}
	g.graphs = nil
}
