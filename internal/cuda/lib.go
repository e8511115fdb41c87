// Package cuda is moecast's binding of the CUDA driver API and of NCCL. Both
// libraries are loaded at run time with purego (no cgo, no CUDA toolkit at
// build time), so one static binary runs on any Linux box with an NVIDIA
// driver, and on a box without one every call returns an error that wraps
// ErrNoDriver (or ErrNoNCCL) instead of crashing. docs/decisions/0001 says why.
//
// The driver API is reached through package-level functions after Init; the
// types (Device, Context, Stream, Event, Module, Function, DevicePtr, Graph,
// GraphExec) are the driver's handles. Contexts are per OS thread: callers
// lock their goroutine to its thread (runtime.LockOSThread) and make a
// primary context current (Device.Retain, Context.SetCurrent) before the
// other calls. Sizes are bytes; times from events are seconds.
package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoDriver is wrapped by every error that comes from libcuda.so.1 not
// being found or not loading: there is no usable NVIDIA driver here.
var ErrNoDriver = errors.New("no NVIDIA driver (libcuda.so.1) could be loaded")

// ErrNoNCCL is wrapped by every error that comes from libnccl.so.2 not being
// found or not loading.
var ErrNoNCCL = errors.New("no NCCL library (libnccl.so.2) could be loaded")

// Library names one shared library that this package loads and where to look
// for it.
type Library struct {
	// Name is the soname handed to the dynamic loader (libcuda.so.1).
	Name string
	// Env names the environment variable that overrides the search with a
	// path to the library.
	Env string
	// Globs are the places searched after the loader path, in order.
	Globs []string
	// Missing is wrapped by the error returned when nothing loads.
	Missing error
}

// CUDALibrary is the driver: MOECAST_CUDA, the loader path, then the usual
// driver folders.
var CUDALibrary = Library{
	Name: "libcuda.so.1",
	Env:  "MOECAST_CUDA",
	Globs: []string{
		"/usr/lib/x86_64-linux-gnu/libcuda.so.1",
		"/usr/lib/aarch64-linux-gnu/libcuda.so.1",
		"/usr/lib64/libcuda.so.1",
		"/usr/local/nvidia/lib64/libcuda.so.1",
		"/usr/lib/wsl/lib/libcuda.so.1",
	},
	Missing: ErrNoDriver,
}

// NCCLLibrary is NCCL: MOECAST_NCCL, the loader path, then the NVIDIA Python
// wheels (nvidia-nccl-cu12/cu13) of an active virtual environment, of the
// system Pythons and of virtual environments under /opt.
var NCCLLibrary = Library{
	Name: "libnccl.so.2",
	Env:  "MOECAST_NCCL",
	Globs: []string{
		"$VIRTUAL_ENV/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"$VIRTUAL_ENV/lib/python3*/site-packages/nvidia/cu1*/lib/libnccl.so.2",
		"/usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2",
		"/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2",
		"$HOME/.local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"/opt/*/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2",
		"/opt/conda/lib/libnccl.so.2",
	},
	Missing: ErrNoNCCL,
}

// Finder lists the candidate paths of a library. Its fields are the
// environment and the file system, replaceable in tests.
type Finder struct {
	Getenv func(string) string
	Glob   func(string) ([]string, error)
}

// DefaultFinder reads the process environment and the real file system.
func DefaultFinder() Finder { return Finder{Getenv: os.Getenv, Glob: filepath.Glob} }

// Candidates returns the paths to try, in order: the override (alone, when
// it is set: a wrong override is an error, not a reason to look elsewhere),
// else the bare soname (the loader path: LD_LIBRARY_PATH, ld.so.cache) and
// each existing match of the globs.
func (f Finder) Candidates(lib Library) (paths []string, override bool) {
	if v := f.Getenv(lib.Env); v != "" {
		return []string{v}, true
	}
	paths = []string{lib.Name}
	seen := map[string]bool{lib.Name: true}
	for _, g := range lib.Globs {
		unset := false
		g = os.Expand(g, func(k string) string {
			v := f.Getenv(k)
			unset = unset || v == ""
			return v
		})
		if unset {
			continue
		}
		matches, err := f.Glob(g)
		if err != nil {
			continue
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				paths = append(paths, m)
			}
		}
	}
	return paths, false
}

// LoadError says which library could not be loaded and what was tried.
type LoadError struct {
	Lib      Library
	Override bool     // the path came from Lib.Env
	Tried    []string // the candidates, in order
	Last     error    // the loader's message for the last candidate
}

func (e *LoadError) Error() string {
	if e.Override {
		return fmt.Sprintf("%v: %s=%s: %v", e.Lib.Missing, e.Lib.Env, e.Tried[0], e.Last)
	}
	return fmt.Sprintf("%v: tried %s (set %s to its path): %v", e.Lib.Missing,
		strings.Join(e.Tried, ", "), e.Lib.Env, e.Last)
}

func (e *LoadError) Unwrap() error { return e.Lib.Missing }

// open loads the first candidate of lib that the dynamic loader accepts.
// dlopen is the loader (purego.Dlopen in the package, a fake in tests).
func open(lib Library, f Finder, dlopen func(string) (uintptr, error)) (uintptr, string, error) {
	paths, override := f.Candidates(lib)
	var last error
	for _, p := range paths {
		h, err := dlopen(p)
		if err == nil {
			return h, p, nil
		}
		last = err
	}
	return 0, "", &LoadError{Lib: lib, Override: override, Tried: paths, Last: oneLine(last)}
}

// oneLine keeps the first line of a loader message, so that every error of
// this package prints as one line.
func oneLine(err error) error {
	if err == nil {
		return errors.New("not found")
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return errors.New(s)
}
