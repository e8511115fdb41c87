package cuda

import (
	"fmt"
	"sync"
	"unsafe"
)

// NCCL data types and reduction ops (ncclDataType_t, ncclRedOp_t).
const (
	NCCLInt8     = 0
	NCCLInt32    = 2
	NCCLFloat16  = 6
	NCCLFloat32  = 7
	NCCLFloat64  = 8
	NCCLBfloat16 = 9
	NCCLSum      = 0
	NCCLProd     = 1
	NCCLMax      = 2
	NCCLMin      = 3
)

// UniqueID is an ncclUniqueId: rank 0 makes it, every rank receives it.
type UniqueID [128]byte

// Comm is an ncclComm_t.
type Comm uintptr

// NCCLError is a failed NCCL call.
type NCCLError struct {
	Call string
	Code int32
	Msg  string
}

func (e *NCCLError) Error() string {
	return fmt.Sprintf("nccl: %s: %s (%d)", e.Call, e.Msg, e.Code)
}

type ncclLib struct {
	path string

	ncclGetVersion           func(v *int32) int32
	ncclGetUniqueId          func(id *UniqueID) int32
	ncclGetErrorString       func(r int32) string
	ncclCommInitAll          func(comms *Comm, n int32, devs *int32) int32
	ncclCommInitRankScalable func(c *Comm, nranks, rank, nID int32, ids *UniqueID, config unsafe.Pointer) int32
	ncclCommDestroy          func(c Comm) int32
	ncclCommAbort            func(c Comm) int32
	ncclCommGetAsyncError    func(c Comm, r *int32) int32
	ncclAllReduce            func(send, recv DevicePtr, count uintptr, dtype, op int32, c Comm, s Stream) int32
	ncclAllGather            func(send, recv DevicePtr, count uintptr, dtype int32, c Comm, s Stream) int32
	ncclReduceScatter        func(send, recv DevicePtr, count uintptr, dtype, op int32, c Comm, s Stream) int32
	ncclSend                 func(buf DevicePtr, count uintptr, dtype, peer int32, c Comm, s Stream) int32
	ncclRecv                 func(buf DevicePtr, count uintptr, dtype, peer int32, c Comm, s Stream) int32
	ncclGroupStart           func() int32
	ncclGroupEnd             func() int32
}

func (n *ncclLib) symbols() []symbol {
	s := func(f any, names ...string) symbol { return symbol{fptr: f, names: names} }
	return []symbol{
		s(&n.ncclGetVersion, "ncclGetVersion"),
		s(&n.ncclGetUniqueId, "ncclGetUniqueId"),
		s(&n.ncclGetErrorString, "ncclGetErrorString"),
		s(&n.ncclCommInitAll, "ncclCommInitAll"),
		{fptr: &n.ncclCommInitRankScalable, names: []string{"ncclCommInitRankScalable"}, optional: true},
		s(&n.ncclCommDestroy, "ncclCommDestroy"),
		s(&n.ncclCommAbort, "ncclCommAbort"),
		s(&n.ncclCommGetAsyncError, "ncclCommGetAsyncError"),
		s(&n.ncclAllReduce, "ncclAllReduce"),
		s(&n.ncclAllGather, "ncclAllGather"),
		s(&n.ncclReduceScatter, "ncclReduceScatter"),
		s(&n.ncclSend, "ncclSend"),
		s(&n.ncclRecv, "ncclRecv"),
		s(&n.ncclGroupStart, "ncclGroupStart"),
		s(&n.ncclGroupEnd, "ncclGroupEnd"),
	}
}

var (
	ncclOnce   sync.Once
	ncclLoaded *ncclLib
	ncclErr    error
)

// InitNCCL loads libnccl.so.2 (NCCLLibrary's search: MOECAST_NCCL, the loader
// path, the NVIDIA Python wheels). Its error wraps ErrNoNCCL. One rank per
// process (CommInitRank) needs ncclCommInitRankScalable (NCCL 2.23 or newer),
// which takes the unique id by pointer: ncclCommInitRank takes its 128-byte
// id by value, on the stack, past what purego can pass (15 words).
func InitNCCL() error {
	ncclOnce.Do(func() {
		h, path, err := open(NCCLLibrary, DefaultFinder(), dlopen)
		if err != nil {
			ncclErr = err
			return
		}
		n := &ncclLib{path: path}
		if err := bind(NCCLLibrary, path, h, n.symbols()); err != nil {
			ncclErr = err
			return
		}
		ncclLoaded = n
	})
	return ncclErr
}

// NCCLPath is the path NCCL was loaded from ("" before InitNCCL).
func NCCLPath() string {
	if ncclLoaded == nil {
		return ""
	}
	return ncclLoaded.path
}

func ncclReady() (*ncclLib, error) {
	if err := InitNCCL(); err != nil {
		return nil, err
	}
	return ncclLoaded, nil
}

func ncclCheck(call string, r int32) error {
	if r == 0 {
		return nil
	}
	msg := "unknown"
	if ncclLoaded != nil {
		msg = ncclLoaded.ncclGetErrorString(r)
	}
	return &NCCLError{Call: call, Code: r, Msg: msg}
}

// NCCLVersion is NCCL's version code (22809 for 2.28.9).
func NCCLVersion() (int, error) {
	n, err := ncclReady()
	if err != nil {
		return 0, err
	}
	var v int32
	err = ncclCheck("ncclGetVersion", n.ncclGetVersion(&v))
	return int(v), err
}

// NewUniqueID makes the id that rank 0 hands to every rank.
func NewUniqueID() (UniqueID, error) {
	var id UniqueID
	n, err := ncclReady()
	if err != nil {
		return id, err
	}
	err = ncclCheck("ncclGetUniqueId", n.ncclGetUniqueId(&id))
	return id, err
}

// CommInitAll makes one communicator per device in one process.
func CommInitAll(devices []int) ([]Comm, error) {
	n, err := ncclReady()
	if err != nil {
		return nil, err
	}
	if len(devices) == 0 {
		return nil, fmt.Errorf("nccl: ncclCommInitAll: no devices")
	}
	devs := make([]int32, len(devices))
	for i, d := range devices {
		devs[i] = int32(d)
	}
	comms := make([]Comm, len(devices))
	err = ncclCheck("ncclCommInitAll", n.ncclCommInitAll(&comms[0], int32(len(devs)), &devs[0]))
	return comms, err
}

// CommInitRank joins rank of nranks (one rank per process) on the current
// device, with the id from rank 0.
func CommInitRank(nranks, rank int, id UniqueID) (Comm, error) {
	n, err := ncclReady()
	if err != nil {
		return 0, err
	}
	if rank < 0 || rank >= nranks {
		return 0, fmt.Errorf("nccl: rank %d out of range for %d ranks", rank, nranks)
	}
	if n.ncclCommInitRankScalable == nil {
		return 0, fmt.Errorf("nccl: %s has no ncclCommInitRankScalable: one rank per process needs NCCL 2.23 or newer", n.path)
	}
	var c Comm
	err = ncclCheck("ncclCommInitRankScalable", n.ncclCommInitRankScalable(&c, int32(nranks), int32(rank), 1, &id, nil))
	return c, err
}

// Destroy frees the communicator once its work is done.
func (c Comm) Destroy() error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclCommDestroy", n.ncclCommDestroy(c))
}

// Abort frees the communicator, stopping its pending work.
func (c Comm) Abort() error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclCommAbort", n.ncclCommAbort(c))
}

// AsyncError returns the communicator's asynchronous error, nil if none
// (ncclInProgress, 7, also counts as none yet).
func (c Comm) AsyncError() error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	var r int32
	if err := ncclCheck("ncclCommGetAsyncError", n.ncclCommGetAsyncError(c, &r)); err != nil {
		return err
	}
	if r == 7 {
		return nil
	}
	return ncclCheck("async", r)
}

// AllReduce reduces count elements of dtype across ranks.
func (c Comm) AllReduce(send, recv DevicePtr, count int64, dtype, op int, s Stream) error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclAllReduce", n.ncclAllReduce(send, recv, uintptr(count), int32(dtype), int32(op), c, s))
}

// AllGather gathers sendCount elements from each rank.
func (c Comm) AllGather(send, recv DevicePtr, sendCount int64, dtype int, s Stream) error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclAllGather", n.ncclAllGather(send, recv, uintptr(sendCount), int32(dtype), c, s))
}

// ReduceScatter reduces and leaves recvCount elements on each rank.
func (c Comm) ReduceScatter(send, recv DevicePtr, recvCount int64, dtype, op int, s Stream) error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclReduceScatter", n.ncclReduceScatter(send, recv, uintptr(recvCount), int32(dtype), int32(op), c, s))
}

// Send sends count elements to peer (inside GroupStart/GroupEnd for
// all-to-all).
func (c Comm) Send(buf DevicePtr, count int64, dtype, peer int, s Stream) error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclSend", n.ncclSend(buf, uintptr(count), int32(dtype), int32(peer), c, s))
}

// Recv receives count elements from peer.
func (c Comm) Recv(buf DevicePtr, count int64, dtype, peer int, s Stream) error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclRecv", n.ncclRecv(buf, uintptr(count), int32(dtype), int32(peer), c, s))
}

// GroupStart opens an NCCL group.
func GroupStart() error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclGroupStart", n.ncclGroupStart())
}

// GroupEnd closes an NCCL group and launches its work.
func GroupEnd() error {
	n, err := ncclReady()
	if err != nil {
		return err
	}
	return ncclCheck("ncclGroupEnd", n.ncclGroupEnd())
}

// AllToAll sends count elements to every peer and receives as many from
// each, as grouped send/recv pairs: send and recv hold nranks blocks of count
// elements of elemSize bytes, block p for peer p.
func (c Comm) AllToAll(send, recv DevicePtr, count int64, dtype, elemSize, nranks int, s Stream) error {
	if err := GroupStart(); err != nil {
		return err
	}
	var first error
	for p := 0; p < nranks; p++ {
		off := DevicePtr(int64(p) * count * int64(elemSize))
		if err := c.Send(send+off, count, dtype, p, s); err != nil && first == nil {
			first = err
		}
		if err := c.Recv(recv+off, count, dtype, p, s); err != nil && first == nil {
			first = err
		}
	}
	if err := GroupEnd(); err != nil && first == nil {
		first = err
	}
	return first
}
