package rendezvous

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds the join and every exchange when Options.Timeout
// is zero.
const DefaultTimeout = 2 * time.Minute

// MaxBlob is the largest blob a broadcast or gather carries.
const MaxBlob = 16 << 20

// Options configure Join.
type Options struct {
	// Timeout bounds the join and each Broadcast, Barrier and Gather
	// (DefaultTimeout when zero).
	Timeout time.Duration
	// Listener, for rank 0 over TCP, replaces listening on ":MasterPort"
	// (tests pass a loopback listener).
	Listener net.Listener
	// Logf, when set, is told about refused strangers and retries.
	Logf func(format string, args ...any)
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) logf(format string, args ...any) {
	if o.Logf != nil {
		o.Logf(format, args...)
	}
}

// Error is a failed rendezvous: what failed, and which ranks were missing
// (never came, or died) when it was one of them.
type Error struct {
	Op      string // "join", "broadcast", "barrier", "gather"
	Missing []int  // ranks that did not arrive in time
	Dead    []int  // ranks whose connection closed
	Timeout time.Duration
	Msg     string
}

func (e *Error) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("%s missing after %s", rankWords(e.Missing), e.Timeout))
	}
	if len(e.Dead) > 0 {
		parts = append(parts, fmt.Sprintf("%s closed the connection (exited or failed)", rankWords(e.Dead)))
	}
	if e.Msg != "" {
		parts = append(parts, e.Msg)
	}
	return "rendezvous: " + e.Op + ": " + strings.Join(parts, "; ")
}

// rankWords is "rank 3" or "ranks 1, 2, 5".
func rankWords(r []int) string {
	r = append([]int(nil), r...)
	sort.Ints(r)
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = strconv.Itoa(v)
	}
	if len(r) == 1 {
		return "rank " + s[0]
	}
	return "ranks " + strings.Join(s, ", ")
}

// transport is one way of exchanging blobs: TCP or shared files. seq
// numbers the session's exchanges, so that ranks that disagree on what
// comes next fail instead of mixing blobs.
type transport interface {
	broadcast(seq uint32, blob []byte, d time.Duration) ([]byte, error)
	barrier(seq uint32, d time.Duration) error
	gather(seq uint32, blob []byte, d time.Duration) ([][]byte, error)
	close() error
}

// Session is a joined job: every rank of env.World is there.
type Session struct {
	Env Env
	opt Options
	seq uint32
	t   transport
}

// Join meets the other ranks of env: over files in env.Dir when it is set,
// else over TCP (rank 0 listens, the others connect with retries). A
// single-process env joins at once. Join returns when every rank has
// arrived, or an *Error naming the missing ranks after the timeout.
func Join(env Env, opt Options) (*Session, error) {
	s := &Session{Env: env, opt: opt}
	if env.World < 1 || env.Rank < 0 || env.Rank >= env.World {
		return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank %d of %d is not a rank", env.Rank, env.World)}
	}
	if env.World == 1 {
		s.t = solo{}
		return s, nil
	}
	var err error
	if env.Dir != "" {
		s.t, err = joinFiles(env, opt)
	} else if env.Rank == 0 {
		s.t, err = listenTCP(env, opt)
	} else {
		s.t, err = dialTCP(env, opt)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Broadcast hands rank 0's blob to every rank: rank 0 passes it (and gets
// it back), the others pass nil and get rank 0's.
func (s *Session) Broadcast(blob []byte) ([]byte, error) {
	if len(blob) > MaxBlob {
		return nil, &Error{Op: "broadcast", Msg: fmt.Sprintf("blob of %d bytes is over the %d-byte limit", len(blob), MaxBlob)}
	}
	s.seq++
	return s.t.broadcast(s.seq, blob, s.opt.timeout())
}

// Barrier returns once every rank has called it.
func (s *Session) Barrier() error {
	s.seq++
	return s.t.barrier(s.seq, s.opt.timeout())
}

// Gather collects one blob from each rank at rank 0: rank 0 gets them in
// rank order, the others get nil once rank 0 has theirs.
func (s *Session) Gather(blob []byte) ([][]byte, error) {
	if len(blob) > MaxBlob {
		return nil, &Error{Op: "gather", Msg: fmt.Sprintf("blob of %d bytes is over the %d-byte limit", len(blob), MaxBlob)}
	}
	s.seq++
	return s.t.gather(s.seq, blob, s.opt.timeout())
}

// Close ends the session (rank 0 closes its listener and connections, or
// removes the session's files).
func (s *Session) Close() error { return s.t.close() }

// solo is the one-process job.
type solo struct{}

func (solo) broadcast(_ uint32, b []byte, _ time.Duration) ([]byte, error) { return b, nil }
func (solo) barrier(uint32, time.Duration) error                           { return nil }
func (solo) gather(_ uint32, b []byte, _ time.Duration) ([][]byte, error) {
	return [][]byte{b}, nil
}
func (solo) close() error { return nil }
