package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Result is a CUresult.
type Result int32

// Error is a failed driver call: the call, the CUresult and the driver's
// name and text for it.
type Error struct {
	Call string
	Code Result
	Name string // CUDA_ERROR_OUT_OF_MEMORY
	Msg  string // out of memory
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Call, e.Name, int32(e.Code), e.Msg)
}

// errNoDeviceCode is CUDA_ERROR_NO_DEVICE.
const errNoDeviceCode = 100

// Is makes a CUDA_ERROR_NO_DEVICE match ErrNoDevice.
func (e *Error) Is(target error) bool { return target == ErrNoDevice && e.Code == errNoDeviceCode }

// ErrNoDevice is matched (errors.Is) by the error of a driver that loaded but
// found no GPU (CUDA_ERROR_NO_DEVICE: driver libraries without a kernel
// module or device, as in a container or a build machine).
var ErrNoDevice = errors.New("no CUDA-capable device")

// NoGPU reports whether err says that this machine has no usable GPU: no
// driver library, or a driver without a device.
func NoGPU(err error) bool {
	return errors.Is(err, ErrNoDriver) || errors.Is(err, ErrNoDevice) || errors.Is(err, ErrBadDriver)
}

// Handles of the driver API.
type (
	Device    int32
	Context   uintptr
	Stream    uintptr
	Event     uintptr
	Module    uintptr
	Function  uintptr
	Graph     uintptr
	GraphExec uintptr
	DevicePtr uint64
)

// Device attributes used by moecast (CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock        = 1
	AttrClockRateKHz              = 13
	AttrMultiprocessorCount       = 16
	AttrMemoryClockRateKHz        = 36
	AttrGlobalMemoryBusWidth      = 37
	AttrL2CacheSize               = 38
	AttrComputeCapabilityMajor    = 75
	AttrComputeCapabilityMinor    = 76
	AttrMaxSharedMemoryPerSM      = 81
	AttrMaxSharedMemoryPerBlockOp = 97
)

// Function attributes (CUfunction_attribute).
const (
	FuncMaxThreadsPerBlock     = 0
	FuncSharedSizeBytes        = 1
	FuncLocalSizeBytes         = 3
	FuncNumRegs                = 4
	FuncMaxDynamicSharedMemory = 8
)

// Stream and capture flags.
const (
	StreamNonBlocking      = 1 // CU_STREAM_NON_BLOCKING
	CaptureModeGlobal      = 0 // CU_STREAM_CAPTURE_MODE_GLOBAL
	CaptureModeThreadLocal = 1
	CaptureModeRelaxed     = 2
	EventDefault           = 0
	EventDisableTiming     = 2
)

// drv holds the driver's entry points once loaded.
type drv struct {
	path string

	cuInit                     func(flags uint32) Result
	cuDriverGetVersion         func(v *int32) Result
	cuGetErrorName             func(r Result, s **byte) Result
	cuGetErrorString           func(r Result, s **byte) Result
	cuDeviceGetCount           func(n *int32) Result
	cuDeviceGet                func(d *Device, ordinal int32) Result
	cuDeviceGetName            func(name *byte, n int32, d Device) Result
	cuDeviceGetUuid            func(uuid *[16]byte, d Device) Result
	cuDeviceGetAttribute       func(v *int32, attr int32, d Device) Result
	cuDeviceTotalMem           func(b *uintptr, d Device) Result
	cuDevicePrimaryCtxRetain   func(c *Context, d Device) Result
	cuDevicePrimaryCtxRelease  func(d Device) Result
	cuCtxSetCurrent            func(c Context) Result
	cuCtxGetCurrent            func(c *Context) Result
	cuCtxSynchronize           func() Result
	cuMemGetInfo               func(free, total *uintptr) Result
	cuMemAlloc                 func(p *DevicePtr, n uintptr) Result
	cuMemFree                  func(p DevicePtr) Result
	cuMemcpyHtoD               func(dst DevicePtr, src unsafe.Pointer, n uintptr) Result
	cuMemcpyDtoH               func(dst unsafe.Pointer, src DevicePtr, n uintptr) Result
	cuMemcpyDtoD               func(dst, src DevicePtr, n uintptr) Result
	cuMemsetD8                 func(dst DevicePtr, v uint8, n uintptr) Result
	cuMemsetD32                func(dst DevicePtr, v uint32, n uintptr) Result
	cuModuleLoadData           func(m *Module, image unsafe.Pointer) Result
	cuModuleUnload             func(m Module) Result
	cuModuleGetFunction        func(f *Function, m Module, name string) Result
	cuFuncSetAttribute         func(f Function, attr int32, v int32) Result
	cuFuncGetAttribute         func(v *int32, attr int32, f Function) Result
	cuOccupancyMaxActiveBlocks func(n *int32, f Function, blockSize int32, smem uintptr) Result
	cuLaunchKernel             func(f Function, gx, gy, gz, bx, by, bz, shmem uint32, s Stream, params unsafe.Pointer, extra unsafe.Pointer) Result
	cuStreamCreate             func(s *Stream, flags uint32) Result
	cuStreamDestroy            func(s Stream) Result
	cuStreamSynchronize        func(s Stream) Result
	cuEventCreate              func(e *Event, flags uint32) Result
	cuEventRecord              func(e Event, s Stream) Result
	cuEventSynchronize         func(e Event) Result
	cuEventElapsedTime         func(ms *float32, start, end Event) Result
	cuEventDestroy             func(e Event) Result
	cuStreamBeginCapture       func(s Stream, mode int32) Result
	cuStreamEndCapture         func(s Stream, g *Graph) Result
	cuGraphInstantiateWithFlag func(e *GraphExec, g Graph, flags uint64) Result
	cuGraphLaunch              func(e GraphExec, s Stream) Result
	cuGraphExecDestroy         func(e GraphExec) Result
	cuGraphDestroy             func(g Graph) Result
}

var (
	loadOnce sync.Once
	loaded   *drv
	loadErr  error
)

// symbol names one entry point; the first of names that the library has is
// bound (versioned symbols first, as the driver's header maps them).
type symbol struct {
	fptr     any
	names    []string
	optional bool // left nil when missing; the caller says what needs it
}

func (d *drv) symbols() []symbol {
	s := func(f any, names ...string) symbol { return symbol{fptr: f, names: names} }
	return []symbol{
		s(&d.cuInit, "cuInit"),
		s(&d.cuDriverGetVersion, "cuDriverGetVersion"),
		s(&d.cuGetErrorName, "cuGetErrorName"),
		s(&d.cuGetErrorString, "cuGetErrorString"),
		s(&d.cuDeviceGetCount, "cuDeviceGetCount"),
		s(&d.cuDeviceGet, "cuDeviceGet"),
		s(&d.cuDeviceGetName, "cuDeviceGetName"),
		s(&d.cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
		s(&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"),
		s(&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
		s(&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		s(&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
		s(&d.cuCtxSetCurrent, "cuCtxSetCurrent"),
		s(&d.cuCtxGetCurrent, "cuCtxGetCurrent"),
		s(&d.cuCtxSynchronize, "cuCtxSynchronize"),
		s(&d.cuMemGetInfo, "cuMemGetInfo_v2"),
		s(&d.cuMemAlloc, "cuMemAlloc_v2"),
		s(&d.cuMemFree, "cuMemFree_v2"),
		s(&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
		s(&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
		s(&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"),
		s(&d.cuMemsetD8, "cuMemsetD8_v2"),
		s(&d.cuMemsetD32, "cuMemsetD32_v2"),
		s(&d.cuModuleLoadData, "cuModuleLoadData"),
		s(&d.cuModuleUnload, "cuModuleUnload"),
		s(&d.cuModuleGetFunction, "cuModuleGetFunction"),
		s(&d.cuFuncSetAttribute, "cuFuncSetAttribute"),
		s(&d.cuFuncGetAttribute, "cuFuncGetAttribute"),
		s(&d.cuOccupancyMaxActiveBlocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
		s(&d.cuLaunchKernel, "cuLaunchKernel"),
		s(&d.cuStreamCreate, "cuStreamCreate"),
		s(&d.cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
		s(&d.cuStreamSynchronize, "cuStreamSynchronize"),
		s(&d.cuEventCreate, "cuEventCreate"),
		s(&d.cuEventRecord, "cuEventRecord"),
		s(&d.cuEventSynchronize, "cuEventSynchronize"),
		s(&d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
		s(&d.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy"),
		s(&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2", "cuStreamBeginCapture"),
		s(&d.cuStreamEndCapture, "cuStreamEndCapture"),
		s(&d.cuGraphInstantiateWithFlag, "cuGraphInstantiateWithFlags"),
		s(&d.cuGraphLaunch, "cuGraphLaunch"),
		s(&d.cuGraphExecDestroy, "cuGraphExecDestroy"),
		s(&d.cuGraphDestroy, "cuGraphDestroy"),
	}
}

func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// bind registers every symbol of syms from the library at handle, or says
// which one is missing.
func bind(lib Library, path string, handle uintptr, syms []symbol) error {
	for _, s := range syms {
		var addr uintptr
		var err error
		for _, n := range s.names {
			if addr, err = purego.Dlsym(handle, n); err == nil {
				break
			}
		}
		if err != nil {
			if s.optional {
				continue
			}
			return fmt.Errorf("%w: %s has no %s (too old?)", lib.Missing, path, s.names[0])
		}
		purego.RegisterFunc(s.fptr, addr)
	}
	return nil
}

// Init loads libcuda.so.1 (CUDALibrary's search) and calls cuInit. It is safe
// to call many times; the first result is kept. Its error is an *InitError
// (Unusable): it wraps ErrNoDriver when there is no driver to load, and an
// *Error when cuInit fails (matching ErrNoDevice when the driver finds no
// GPU).
func Init() error {
	loadOnce.Do(func() {
		loaded, loadErr = load(DefaultFinder(), dlopen)
		if loadErr != nil {
			loadErr = &InitError{Err: loadErr}
		}
	})
	return loadErr
}

// InitError is a driver that cannot be loaded, bound or initialised here:
// whatever the cause, the GPU stack cannot be used (Unusable). Its text is
// its wrapped error's.
type InitError struct{ Err error }

func (e *InitError) Error() string { return e.Err.Error() }
func (e *InitError) Unwrap() error { return e.Err }

// load opens and binds the driver and calls cuInit. The driver is returned
// even when cuInit fails, so that the error can be named.
func load(f Finder, dl func(string) (uintptr, error)) (*drv, error) {
	h, path, err := open(CUDALibrary, f, dl)
	if err != nil {
		return nil, err
	}
	d := &drv{path: path}
	if err := bind(CUDALibrary, path, h, d.symbols()); err != nil {
		return nil, err
	}
	return d, d.check("cuInit", d.cuInit(0))
}

// LibraryPath is the path the driver was loaded from ("" before Init).
func LibraryPath() string {
	if loaded == nil {
		return ""
	}
	return loaded.path
}

func ready() (*drv, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	return loaded, nil
}

// cString reads a NUL-terminated string the driver owns.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// check turns a CUresult into nil or an *Error.
func check(call string, r Result) error { return loaded.check(call, r) }

func (d *drv) check(call string, r Result) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: call, Code: r, Name: "CUDA_ERROR_UNKNOWN_CODE", Msg: "unknown error code"}
	if d != nil {
		var p *byte
		if d.cuGetErrorName(r, &p) == 0 {
			e.Name = cString(p)
		}
		if d.cuGetErrorString(r, &p) == 0 {
			e.Msg = cString(p)
		}
	}
	return e
}

// DriverVersion is the driver's CUDA version, 1000*major + 10*minor.
func DriverVersion() (int, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var v int32
	err = check("cuDriverGetVersion", d.cuDriverGetVersion(&v))
	return int(v), err
}

// DeviceCount is the number of CUDA devices.
func DeviceCount() (int, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var n int32
	if err := check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return deviceCount(n)
}

// MaxDevices bounds the device count a driver may report: the largest
// NVLink domains join 576 GPUs, and one process sees a node's few.
const MaxDevices = 4096

// deviceCount checks the count a driver reported: none (or a negative
// count) is ErrNoDevice, more than MaxDevices ErrBadDriver, so that no
// caller lists an empty table or loops over 2^30 ordinals.
func deviceCount(n int32) (int, error) {
	switch {
	case n <= 0:
		return 0, fmt.Errorf("cuda: cuDeviceGetCount reported %d devices: %w", n, ErrNoDevice)
	case n > MaxDevices:
		return 0, fmt.Errorf("cuda: cuDeviceGetCount reported %d devices, more than %d: %w", n, MaxDevices, ErrBadDriver)
	}
	return int(n), nil
}

// ErrBadDriver is a driver that answers with nonsense (a device count no
// machine has).
var ErrBadDriver = errors.New("the driver's answer is not plausible; reinstall or update it")

// Unusable reports whether err says that the GPU stack cannot be used
// here: NoGPU, a driver that Init could not load or initialise (an
// *InitError), a driver that answers nonsense, or no cuBLASLt or NCCL
// library. Every command maps it to one exit code.
func Unusable(err error) bool {
	return NoGPU(err) || errors.As(err, new(*InitError)) || errors.Is(err, ErrBadDriver) ||
		errors.Is(err, ErrNoCUBLASLt) || errors.Is(err, ErrNoNCCL)
}

// GetDevice returns the device of an ordinal.
func GetDevice(ordinal int) (Device, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var dev Device
	err = check("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal)))
	return dev, err
}

// Name is the device's marketing name.
func (dev Device) Name() (string, error) {
	d, err := ready()
	if err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	if err := check("cuDeviceGetName", d.cuDeviceGetName(&buf[0], int32(len(buf)), dev)); err != nil {
		return "", err
	}
	return cString(&buf[0]), nil
}

// UUID is the device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-xxxx-...").
func (dev Device) UUID() (string, error) {
	d, err := ready()
	if err != nil {
		return "", err
	}
	var u [16]byte
	if err := check("cuDeviceGetUuid", d.cuDeviceGetUuid(&u, dev)); err != nil {
		return "", err
	}
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// Attribute reads one CUdevice_attribute.
func (dev Device) Attribute(attr int) (int, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var v int32
	err = check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, int32(attr), dev))
	return int(v), err
}

// ComputeCapability returns (major, minor).
func (dev Device) ComputeCapability() (int, int, error) {
	maj, err := dev.Attribute(AttrComputeCapabilityMajor)
	if err != nil {
		return 0, 0, err
	}
	minor, err := dev.Attribute(AttrComputeCapabilityMinor)
	return maj, minor, err
}

// TotalMem is the device memory in bytes.
func (dev Device) TotalMem() (int64, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var b uintptr
	err = check("cuDeviceTotalMem", d.cuDeviceTotalMem(&b, dev))
	return int64(b), err
}

// Retain retains the device's primary context; pair with Release.
func (dev Device) Retain() (Context, error) {
	d, err := ready()
	if err != nil {
		return 0, err
	}
	var c Context
	err = check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&c, dev))
	return c, err
}

// Release releases the device's primary context.
func (dev Device) Release() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuDevicePrimaryCtxRelease", d.cuDevicePrimaryCtxRelease(dev))
}

// SetCurrent binds the context to the calling OS thread.
func (c Context) SetCurrent() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuCtxSetCurrent", d.cuCtxSetCurrent(c))
}

// Synchronize waits for all work of the current context.
func Synchronize() error {
	d, err := ready()
	if err != nil {
		return err
	}
	return check("cuCtxSynchronize", d.cuCtxSynchronize())
}

// MemInfo returns the free and total memory of the current context's device.
func MemInfo() (free, total int64, err error) {
	d, err := ready()
	if err != nil {
		return 0, 0, err
	}
	var f, t uintptr
	err = check("cuMemGetInfo", d.cuMemGetInfo(&f, &t))
	return int64(f), int64(t), err
}
