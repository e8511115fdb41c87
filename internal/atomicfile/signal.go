package atomicfile

import (
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// live is the registry of temporary files that writes in progress hold;
// HandleSignals removes them when the program is interrupted.
var live = struct {
	sync.Mutex
	names   map[string]bool
	stopped bool // set by the signal handler: no new temporary file
}{names: map[string]bool{}}

// errInterrupted is returned by a write that starts after a signal.
var errInterrupted = errors.New("interrupted")

// create makes a temporary file in dir and registers it under the
// registry's lock, so that a signal handler sees every file created.
func create(dir, pattern string) (*os.File, error) {
	live.Lock()
	defer live.Unlock()
	if live.stopped {
		return nil, errInterrupted
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	live.names[f.Name()] = true
	return f, nil
}

// forget drops name from the registry once its write is over (renamed or
// removed).
func forget(name string) {
	live.Lock()
	delete(live.names, name)
	live.Unlock()
}

// removeLive removes every registered temporary file and returns how many
// there were. No temporary file can be created after it (the program is
// about to exit).
func removeLive() int {
	live.Lock()
	defer live.Unlock()
	live.stopped = true
	n := len(live.names)
	for name := range live.names {
		os.Remove(name)
		delete(live.names, name)
	}
	return n
}

// ExitCode is the conventional exit status of a program ended by sig:
// 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// HandleSignals installs a handler for SIGINT and SIGTERM that removes the
// temporary files of every write in progress and then calls exit with
// ExitCode of the signal (os.Exit when exit is nil). A destination is never
// left half-written: a rename is atomic, so it holds either the old file or
// the complete new one. stop uninstalls the handler.
func HandleSignals(exit func(code int)) (stop func()) {
	if exit == nil {
		exit = os.Exit
	}
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-ch:
			removeLive()
			exit(ExitCode(sig))
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
