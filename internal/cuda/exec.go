package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// Alloc allocates n bytes of device memory.
func Alloc(n int64) (DevicePtr, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var p DevicePtr
	err = check(fmt.Sprintf("cuMemAlloc(%d bytes)", n), d.cuMemAlloc(&p, uintptr(n)))
	return p, err
}

// Free frees device memory from Alloc.
func Free(p DevicePtr) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuMemFree", d.cuMemFree(p))
}

// CopyToDevice copies a Go slice to device memory (synchronous, pageable).
func CopyToDevice[T any](dst DevicePtr, src []T) error {
	d, err := ready()
	if err != nil || len(src) == 0 {
		return err
	}
	n := uintptr(len(src)) * unsafe.Sizeof(src[0])
	return check("cuMemcpyHtoD", d.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), n))
}

// CopyFromDevice copies device memory into a Go slice (synchronous).
func CopyFromDevice[T any](dst []T, src DevicePtr) error {
	d, err := ready()
	if err != nil || len(dst) == 0 {
		return err
	}
	n := uintptr(len(dst)) * unsafe.Sizeof(dst[0])
	return check("cuMemcpyDtoH", d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, n))
}

// CopyDevice copies n bytes between device buffers.
func CopyDevice(dst, src DevicePtr, n int64) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuMemcpyDtoD", d.cuMemcpyDtoD(dst, src, uintptr(n)))
}

// Memset8 sets n bytes to v.
func Memset8(dst DevicePtr, v uint8, n int64) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuMemsetD8", d.cuMemsetD8(dst, v, uintptr(n)))
}

// Memset32 sets n 32-bit words to v.
func Memset32(dst DevicePtr, v uint32, n int64) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuMemsetD32", d.cuMemsetD32(dst, v, uintptr(n)))
}

// LoadModule loads a cubin, fatbin or PTX image into the current context.
// PTX is given a terminating NUL here if it lacks one.
func LoadModule(image []byte) (Module, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	if len(image) == 0 {
		return 0, fmt.Errorf("cuda: cuModuleLoadData: empty image")
	}
	if image[len(image)-1] != 0 && !isELF(image) {
		image = append(append([]byte(nil), image...), 0)
	}
	var m Module
	err = check("cuModuleLoadData", d.cuModuleLoadData(&m, unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	return m, err
}

func isELF(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "\x7fELF" }

// Unload unloads the module.
func (m Module) Unload() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuModuleUnload", d.cuModuleUnload(m))
}

// Function looks up a kernel by its (extern "C") name.
func (m Module) Function(name string) (Function, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var f Function
	err = check("cuModuleGetFunction("+name+")", d.cuModuleGetFunction(&f, m, name))
	return f, err
}

// SetAttribute sets a CUfunction_attribute, as FuncMaxDynamicSharedMemory
// before a launch with more than 48 KiB of dynamic shared memory.
func (f Function) SetAttribute(attr, v int) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check(fmt.Sprintf("cuFuncSetAttribute(%d, %d)", attr, v), d.cuFuncSetAttribute(f, int32(attr), int32(v)))
}

// Attribute reads a CUfunction_attribute (registers, local memory, ...).
func (f Function) Attribute(attr int) (int, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var v int32
	err = check("cuFuncGetAttribute", d.cuFuncGetAttribute(&v, int32(attr), f))
	return int(v), err
}

// ActiveBlocksPerSM is how many blocks of blockSize threads with smem bytes
// of dynamic shared memory fit on one multiprocessor at once.
func (f Function) ActiveBlocksPerSM(blockSize, smem int) (int, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var n int32
	err = check("cuOccupancyMaxActiveBlocksPerMultiprocessor", d.cuOccupancyMaxActiveBlocks(&n, f, int32(blockSize), uintptr(smem)))
	return int(n), err
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z int }

func (d Dim3) valid() bool {
	return d.X > 0 && d.Y > 0 && d.Z > 0 && d.X <= math.MaxInt32 && d.Y <= 65535 && d.Z <= 65535
}

// Params holds kernel arguments marshalled for cuLaunchKernel: one 8-byte
// slot per argument, holding its value in little-endian order, and the
// array of pointers to the slots that the driver reads.
type Params struct {
	slots []uint64
	sizes []int
}

// MarshalParams converts kernel arguments into Params. Accepted types:
// DevicePtr, uintptr, int32, uint32, int64, uint64, float32, float64, int
// (as int32, checked) and bool (as a C bool). Each must match the kernel's
// C parameter type; the driver cannot check that.
func MarshalParams(args ...any) (*Params, error) {
	p := &Params{slots: make([]uint64, len(args)), sizes: make([]int, len(args))}
	for i, a := range args {
		var v uint64
		size := 8
		switch x := a.(type) {
		case DevicePtr:
			v = uint64(x)
		case uintptr:
			v = uint64(x)
		case int64:
			v = uint64(x)
		case uint64:
			v = x
		case float64:
			v = math.Float64bits(x)
		case int32:
			v, size = uint64(uint32(x)), 4
		case uint32:
			v, size = uint64(x), 4
		case float32:
			v, size = uint64(math.Float32bits(x)), 4
		case int:
			if x < math.MinInt32 || x > math.MaxInt32 {
				return nil, fmt.Errorf("cuda: kernel argument %d: int %d does not fit a C int", i, x)
			}
			v, size = uint64(uint32(int32(x))), 4
		case bool:
			if x {
				v = 1
			}
			size = 1
		default:
			return nil, fmt.Errorf("cuda: kernel argument %d: unsupported type %T", i, a)
		}
		p.slots[i], p.sizes[i] = v, size
	}
	return p, nil
}

// Bytes returns argument i as the driver will read it.
func (p *Params) Bytes(i int) []byte {
	b := make([]byte, p.sizes[i])
	for j := range b {
		b[j] = byte(p.slots[i] >> (8 * j))
	}
	return b
}

// Launch runs f on the stream with grid and block shapes and shmem bytes of
// dynamic shared memory. The arguments stay pinned for the call.
func (f Function) Launch(grid, block Dim3, shmem int, s Stream, args ...any) error {
	p, err := MarshalParams(args...)
	if err != nil {
		return err
	}
	return f.LaunchParams(grid, block, shmem, s, p)
}

// LaunchParams is Launch with arguments already marshalled.
func (f Function) LaunchParams(grid, block Dim3, shmem int, s Stream, p *Params) error {
	d, err := ready()
	if err != nil {
		return err
	}
	if !grid.valid() || !block.valid() || shmem < 0 {
		return fmt.Errorf("cuda: cuLaunchKernel: bad launch shape grid %v block %v shmem %d", grid, block, shmem)
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]unsafe.Pointer, len(p.slots)+1)
	for i := range p.slots {
		pin.Pin(&p.slots[i])
		ptrs[i] = unsafe.Pointer(&p.slots[i])
	}
	pin.Pin(&ptrs[0])
	r := d.cuLaunchKernel(f, uint32(grid.X), uint32(grid.Y), uint32(grid.Z),
		uint32(block.X), uint32(block.Y), uint32(block.Z), uint32(shmem), s, unsafe.Pointer(&ptrs[0]), nil)
	return check("cuLaunchKernel", r)
}

// NewStream creates a stream (StreamNonBlocking: no implicit sync with the
// legacy stream, which capture needs).
func NewStream(flags int) (Stream, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var s Stream
	err = check("cuStreamCreate", d.cuStreamCreate(&s, uint32(flags)))
	return s, err
}

// Destroy destroys the stream.
func (s Stream) Destroy() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuStreamDestroy", d.cuStreamDestroy(s))
}

// Synchronize waits for the stream's work.
func (s Stream) Synchronize() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuStreamSynchronize", d.cuStreamSynchronize(s))
}

// BeginCapture starts capturing the stream's work into a graph.
func (s Stream) BeginCapture(mode int) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuStreamBeginCapture", d.cuStreamBeginCapture(s, int32(mode)))
}

// EndCapture ends capture and returns the graph.
func (s Stream) EndCapture() (Graph, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var g Graph
	err = check("cuStreamEndCapture", d.cuStreamEndCapture(s, &g))
	return g, err
}

// Instantiate makes an executable graph.
func (g Graph) Instantiate() (GraphExec, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var e GraphExec
	err = check("cuGraphInstantiateWithFlags", d.cuGraphInstantiateWithFlag(&e, g, 0))
	return e, err
}

// Destroy destroys the graph.
func (g Graph) Destroy() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuGraphDestroy", d.cuGraphDestroy(g))
}

// Launch replays the graph on the stream.
func (e GraphExec) Launch(s Stream) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuGraphLaunch", d.cuGraphLaunch(e, s))
}

// Destroy destroys the executable graph.
func (e GraphExec) Destroy() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuGraphExecDestroy", d.cuGraphExecDestroy(e))
}

// NewEvent creates an event (EventDefault records time).
func NewEvent(flags int) (Event, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var e Event
	err = check("cuEventCreate", d.cuEventCreate(&e, uint32(flags)))
	return e, err
}

// Record records the event on the stream.
func (e Event) Record(s Stream) error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuEventRecord", d.cuEventRecord(e, s))
}

// Synchronize waits for the event.
func (e Event) Synchronize() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuEventSynchronize", d.cuEventSynchronize(e))
}

// Destroy destroys the event.
func (e Event) Destroy() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuEventDestroy", d.cuEventDestroy(e))
}

// Elapsed is the time in seconds from start to end, both recorded.
func Elapsed(start, end Event) (float64, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var ms float32
	err = check("cuEventElapsedTime", d.cuEventElapsedTime(&ms, start, end))
	return float64(ms) * 1e-3, err
}
