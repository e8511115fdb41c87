//go:build unix

package cli

import (
	"os"
	"syscall"
)

// cpuSeconds is the process's user + system CPU time so far: on a shared
// machine it says what a run costs where wall time says how busy the
// machine was.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// maxRSSBytes is the peak resident set of an exited child process.
func maxRSSBytes(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024 // Linux: KiB
	}
	return 0
}
