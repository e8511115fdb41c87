package kernels

import (
	"fmt"
	"sync"
)

// later is the part of a table built on first use (the Deferred
// constructors): its curves and leave-one-out error. The zero later has
// nothing left to build. A table is shared by the goroutines of a plan:
// the build runs once (sync.Once) and every use waits for it.
type later struct {
	p *laterBuild
}

type laterBuild struct {
	once  sync.Once
	name  string
	build func() error
}

func (l *later) set(name string, build func() error) {
	l.p = &laterBuild{name: name, build: build}
}

// setLoad defers build(load()) to the table's first use: the rows of a
// lazy table are read, then built, when a reader first needs them.
func setLoad[P any](l *later, name string, load func() ([]P, error), build func([]P) error) {
	l.set(name, func() error {
		pts, err := load()
		if err != nil {
			return err
		}
		return build(pts)
	})
}

// do runs the deferred build, once.
func (l *later) do() {
	if l.p == nil {
		return
	}
	l.p.once.Do(func() {
		if err := l.p.build(); err != nil {
			// the rows were checked when the table was made, and the
			// deferred tables (the embedded calibrations) are built
			// eagerly by calib's tests: this is a bug, not bad input
			panic(fmt.Sprintf("kernels: deferred build of table %s: %v", l.p.name, err))
		}
		l.p.build = nil
	})
}
