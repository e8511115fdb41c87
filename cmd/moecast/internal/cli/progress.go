package cli

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// progressLine is the one progress line of a long command (simulate,
// plan, sweep): nothing for the first second, then line(done) every 200 ms
// on w, cleared when stopped. With w nil (not a terminal) it only counts.
type progressLine struct {
	done     atomic.Int64
	stop     chan struct{}
	finished chan struct{}
}

// startProgress starts a progress line on w (progressOn's writer; nil:
// none) that prints line(the count so far).
func startProgressLine(w io.Writer, line func(done int64) string) *progressLine {
	p := &progressLine{stop: make(chan struct{}), finished: make(chan struct{})}
	if w == nil {
		close(p.finished)
		return p
	}
	go func() {
		defer close(p.finished)
		select {
		case <-p.stop:
			return
		case <-time.After(time.Second):
		}
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			fmt.Fprint(w, "\r"+line(p.done.Load()))
			select {
			case <-p.stop:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop clears the line and waits until it is.
func (p *progressLine) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.finished
}
