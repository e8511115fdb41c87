package rendezvous

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The wire: every message is a 24-byte header and a payload.
//
//	magic "MCRV" | version u8 | kind u8 | 0 u16 | seq u32 | rank u32 | world u32 | len u32 | payload
//
// (big endian). A client's first frame is a hello whose payload is the
// job token; rank 0 answers welcome, or reject with a reason. A peer
// whose first bytes are not a hello of this version and token is refused.
const (
	magic      = "MCRV"
	version    = 1
	headerSize = 24
	// handshakeWait bounds how long one accepted connection may take to
	// say hello (a stranger that sends nothing is dropped after it).
	handshakeWait = 10 * time.Second
)

const (
	kindHello byte = iota + 1
	kindWelcome
	kindReject
	kindBroadcast
	kindBarrier
	kindBarrierDone
	kindGather
	kindGatherDone
	kindFail
)

var kindNames = map[byte]string{kindHello: "hello", kindWelcome: "welcome", kindReject: "reject", kindBroadcast: "broadcast",
	kindBarrier: "barrier", kindBarrierDone: "barrier-done", kindGather: "gather", kindGatherDone: "gather-done", kindFail: "fail"}

type frame struct {
	kind             byte
	seq, rank, world uint32
	payload          []byte
}

func writeFrame(c net.Conn, f frame, deadline time.Time) error {
	b := make([]byte, headerSize+len(f.payload))
	copy(b, magic)
	b[4], b[5] = version, f.kind
	binary.BigEndian.PutUint32(b[8:], f.seq)
	binary.BigEndian.PutUint32(b[12:], f.rank)
	binary.BigEndian.PutUint32(b[16:], f.world)
	binary.BigEndian.PutUint32(b[20:], uint32(len(f.payload)))
	copy(b[headerSize:], f.payload)
	c.SetWriteDeadline(deadline)
	_, err := c.Write(b)
	return err
}

// errProtocol marks bytes that are not this protocol (a stranger).
var errProtocol = errors.New("not a moecast rendezvous peer")

func readFrame(c net.Conn, deadline time.Time) (frame, error) {
	c.SetReadDeadline(deadline)
	var h [headerSize]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return frame{}, err
	}
	if string(h[:4]) != magic {
		return frame{}, fmt.Errorf("%w (bad magic %q)", errProtocol, h[:4])
	}
	if h[4] != version {
		return frame{}, fmt.Errorf("%w (protocol version %d, want %d)", errProtocol, h[4], version)
	}
	f := frame{kind: h[5], seq: binary.BigEndian.Uint32(h[8:]), rank: binary.BigEndian.Uint32(h[12:]),
		world: binary.BigEndian.Uint32(h[16:])}
	n := binary.BigEndian.Uint32(h[20:])
	if n > MaxBlob {
		return frame{}, fmt.Errorf("%w (payload of %d bytes)", errProtocol, n)
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(c, f.payload); err != nil {
		return frame{}, err
	}
	return f, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// tcpServer is rank 0: one connection per other rank, index = rank.
type tcpServer struct {
	env   Env
	ln    net.Listener
	conns []net.Conn
	once  sync.Once
}

type hello struct {
	c    net.Conn
	f    frame
	err  error
	from string
}

func listenTCP(env Env, opt Options) (transport, error) {
	timeout := opt.timeout()
	deadline := time.Now().Add(timeout)
	ln := opt.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", ":"+strconv.Itoa(env.MasterPort)); err != nil {
			return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank 0 cannot listen on port %d: %v", env.MasterPort, err)}
		}
	}
	s := &tcpServer{env: env, ln: ln, conns: make([]net.Conn, env.World)}
	hellos := make(chan hello)
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed
			}
			go func() {
				f, err := readFrame(c, time.Now().Add(handshakeWait))
				select {
				case hellos <- hello{c: c, f: f, err: err, from: c.RemoteAddr().String()}:
				case <-stop:
					c.Close()
				}
			}()
		}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	joined := 1
	fail := func(err *Error) (transport, error) {
		halt()
		for _, c := range s.conns {
			if c != nil {
				writeFrame(c, frame{kind: kindFail, payload: []byte(err.Error())}, time.Now().Add(time.Second))
			}
		}
		s.close()
		return nil, err
	}
	for joined < env.World {
		select {
		case <-timer.C:
			var missing []int
			for r := 1; r < env.World; r++ {
				if s.conns[r] == nil {
					missing = append(missing, r)
				}
			}
			return fail(&Error{Op: "join", Missing: missing, Timeout: timeout,
				Msg: fmt.Sprintf("%d of %d ranks joined rank 0 on %s", joined, env.World, ln.Addr())})
		case h := <-hellos:
			if h.err != nil || h.f.kind != kindHello {
				opt.logf("rendezvous: refused %s: %v", h.from, h.err)
				h.c.Close()
				continue
			}
			if string(h.f.payload) != env.Token {
				opt.logf("rendezvous: refused %s: job token %q, want %q", h.from, h.f.payload, env.Token)
				writeFrame(h.c, frame{kind: kindReject, payload: []byte(fmt.Sprintf("job token %q is not this job's (%q): another job's rank 0 listens on %s", h.f.payload, env.Token, ln.Addr()))}, time.Now().Add(time.Second))
				h.c.Close()
				continue
			}
			r := int(h.f.rank)
			switch {
			case int(h.f.world) != env.World:
				writeFrame(h.c, frame{kind: kindReject, payload: []byte(fmt.Sprintf("world size %d, rank 0 has %d", h.f.world, env.World))}, time.Now().Add(time.Second))
				h.c.Close()
				return fail(&Error{Op: "join", Msg: fmt.Sprintf("rank %d (from %s) says the world size is %d, rank 0 has %d: the ranks were started inconsistently", r, h.from, h.f.world, env.World)})
			case r <= 0 || r >= env.World:
				writeFrame(h.c, frame{kind: kindReject, payload: []byte(fmt.Sprintf("rank %d is not in 1..%d", r, env.World-1))}, time.Now().Add(time.Second))
				h.c.Close()
				return fail(&Error{Op: "join", Msg: fmt.Sprintf("a peer from %s says it is rank %d of %d", h.from, r, env.World)})
			case s.conns[r] != nil:
				writeFrame(h.c, frame{kind: kindReject, payload: []byte(fmt.Sprintf("rank %d already joined", r))}, time.Now().Add(time.Second))
				h.c.Close()
				return fail(&Error{Op: "join", Msg: fmt.Sprintf("rank %d joined twice (from %s and %s)", r, s.conns[r].RemoteAddr(), h.from)})
			}
			s.conns[r] = h.c
			joined++
		}
	}
	halt()
	ln.Close() // no more peers: later strangers are refused by the kernel
	for r := 1; r < env.World; r++ {
		if err := writeFrame(s.conns[r], frame{kind: kindWelcome, rank: uint32(r), world: uint32(env.World)}, deadline); err != nil {
			return fail(&Error{Op: "join", Dead: []int{r}, Msg: err.Error()})
		}
	}
	return s, nil
}

func (s *tcpServer) broadcast(seq uint32, blob []byte, d time.Duration) ([]byte, error) {
	deadline := time.Now().Add(d)
	var dead []int
	for r := 1; r < s.env.World; r++ {
		if err := writeFrame(s.conns[r], frame{kind: kindBroadcast, seq: seq, world: uint32(s.env.World), payload: blob}, deadline); err != nil {
			dead = append(dead, r)
		}
	}
	if len(dead) > 0 {
		return nil, s.failAll(&Error{Op: "broadcast", Dead: dead})
	}
	return blob, nil
}

// collect reads one frame of kind from every other rank before d passes.
func (s *tcpServer) collect(op string, kind byte, seq uint32, d time.Duration) ([]frame, error) {
	deadline := time.Now().Add(d)
	frames := make([]frame, s.env.World)
	errs := make([]error, s.env.World)
	var wg sync.WaitGroup
	for r := 1; r < s.env.World; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frames[r], errs[r] = readFrame(s.conns[r], deadline)
		}()
	}
	wg.Wait()
	e := &Error{Op: op, Timeout: d}
	for r := 1; r < s.env.World; r++ {
		f, err := frames[r], errs[r]
		switch {
		case err != nil && isTimeout(err):
			e.Missing = append(e.Missing, r)
		case err != nil:
			e.Dead = append(e.Dead, r)
		case f.kind == kindFail:
			e.Msg = fmt.Sprintf("rank %d failed: %s", r, f.payload)
		case f.kind != kind || f.seq != seq:
			e.Msg = fmt.Sprintf("rank %d sent %s #%d where rank 0 is at %s #%d: the ranks run different programs or options", r, kindNames[f.kind], f.seq, op, seq)
		}
	}
	if len(e.Missing)+len(e.Dead) > 0 || e.Msg != "" {
		return nil, s.failAll(e)
	}
	return frames, nil
}

// failAll tells every rank still there that the session failed.
func (s *tcpServer) failAll(e *Error) error {
	for r := 1; r < s.env.World; r++ {
		writeFrame(s.conns[r], frame{kind: kindFail, payload: []byte(e.Error())}, time.Now().Add(time.Second))
	}
	return e
}

func (s *tcpServer) barrier(seq uint32, d time.Duration) error {
	if _, err := s.collect("barrier", kindBarrier, seq, d); err != nil {
		return err
	}
	return s.ack("barrier", kindBarrierDone, seq, d)
}

func (s *tcpServer) ack(op string, kind byte, seq uint32, d time.Duration) error {
	deadline := time.Now().Add(d)
	var dead []int
	for r := 1; r < s.env.World; r++ {
		if err := writeFrame(s.conns[r], frame{kind: kind, seq: seq}, deadline); err != nil {
			dead = append(dead, r)
		}
	}
	if len(dead) > 0 {
		return s.failAll(&Error{Op: op, Dead: dead})
	}
	return nil
}

func (s *tcpServer) gather(seq uint32, blob []byte, d time.Duration) ([][]byte, error) {
	frames, err := s.collect("gather", kindGather, seq, d)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, s.env.World)
	out[0] = blob
	for r := 1; r < s.env.World; r++ {
		out[r] = frames[r].payload
	}
	return out, s.ack("gather", kindGatherDone, seq, d)
}

func (s *tcpServer) close() error {
	s.once.Do(func() {
		s.ln.Close()
		for _, c := range s.conns {
			if c != nil {
				c.Close()
			}
		}
	})
	return nil
}

// tcpClient is a rank other than 0.
type tcpClient struct {
	env Env
	c   net.Conn
}

func dialTCP(env Env, opt Options) (transport, error) {
	timeout := opt.timeout()
	deadline := time.Now().Add(timeout)
	addr := env.Addr()
	wait := 50 * time.Millisecond
	var last error
	for {
		c, err := net.DialTimeout("tcp", addr, min(5*time.Second, time.Until(deadline)))
		if err == nil {
			t, err := handshake(env, c, deadline)
			if err == nil {
				return t, nil
			}
			c.Close()
			var re *Error
			if errors.As(err, &re) {
				return nil, err // refused or failed: retrying would not help
			}
			last = err
		} else {
			last = err
		}
		if time.Now().Add(wait).After(deadline) {
			return nil, &Error{Op: "join", Timeout: timeout,
				Msg: fmt.Sprintf("rank %d of %d could not join rank 0 at %s within %s: %v", env.Rank, env.World, addr, timeout, oneLine(last))}
		}
		if !errors.Is(last, syscall.ECONNREFUSED) {
			opt.logf("rendezvous: rank %d: %v; retrying", env.Rank, last)
		}
		time.Sleep(wait)
		wait = min(2*wait, time.Second)
	}
}

func handshake(env Env, c net.Conn, deadline time.Time) (transport, error) {
	if err := writeFrame(c, frame{kind: kindHello, rank: uint32(env.Rank), world: uint32(env.World), payload: []byte(env.Token)}, deadline); err != nil {
		return nil, err
	}
	f, err := readFrame(c, deadline)
	if err != nil {
		if isTimeout(err) {
			return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank %d of %d: rank 0 at %s accepted the connection but did not answer (the other ranks never came?)", env.Rank, env.World, env.Addr())}
		}
		return nil, err
	}
	switch f.kind {
	case kindWelcome:
		return &tcpClient{env: env, c: c}, nil
	case kindReject:
		return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank %d of %d refused by %s: %s", env.Rank, env.World, env.Addr(), f.payload)}
	case kindFail:
		return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank 0 failed: %s", f.payload)}
	}
	return nil, &Error{Op: "join", Msg: fmt.Sprintf("rank 0 answered %s to hello", kindNames[f.kind])}
}

// expect reads rank 0's next frame, which must be kind #seq.
func (t *tcpClient) expect(op string, kind byte, seq uint32, d time.Duration) (frame, error) {
	f, err := readFrame(t.c, time.Now().Add(d))
	switch {
	case err != nil && isTimeout(err):
		return f, &Error{Op: op, Missing: []int{0}, Timeout: d, Msg: fmt.Sprintf("rank %d waited for rank 0 (or the other ranks)", t.env.Rank)}
	case err != nil:
		return f, &Error{Op: op, Dead: []int{0}, Msg: fmt.Sprintf("rank %d lost rank 0: %v", t.env.Rank, oneLine(err))}
	case f.kind == kindFail:
		return f, &Error{Op: op, Msg: fmt.Sprintf("rank 0 reports: %s", f.payload)}
	case f.kind != kind || f.seq != seq:
		return f, &Error{Op: op, Msg: fmt.Sprintf("rank 0 sent %s #%d where rank %d is at %s #%d: the ranks run different programs or options", kindNames[f.kind], f.seq, t.env.Rank, op, seq)}
	}
	return f, nil
}

func (t *tcpClient) send(op string, f frame, d time.Duration) error {
	f.rank, f.world = uint32(t.env.Rank), uint32(t.env.World)
	if err := writeFrame(t.c, f, time.Now().Add(d)); err != nil {
		return &Error{Op: op, Dead: []int{0}, Msg: fmt.Sprintf("rank %d lost rank 0: %v", t.env.Rank, oneLine(err))}
	}
	return nil
}

func (t *tcpClient) broadcast(seq uint32, _ []byte, d time.Duration) ([]byte, error) {
	f, err := t.expect("broadcast", kindBroadcast, seq, d)
	return f.payload, err
}

func (t *tcpClient) barrier(seq uint32, d time.Duration) error {
	if err := t.send("barrier", frame{kind: kindBarrier, seq: seq}, d); err != nil {
		return err
	}
	_, err := t.expect("barrier", kindBarrierDone, seq, d)
	return err
}

func (t *tcpClient) gather(seq uint32, blob []byte, d time.Duration) ([][]byte, error) {
	if err := t.send("gather", frame{kind: kindGather, seq: seq, payload: blob}, d); err != nil {
		return nil, err
	}
	_, err := t.expect("gather", kindGatherDone, seq, d)
	return nil, err
}

func (t *tcpClient) close() error { return t.c.Close() }

func oneLine(err error) string {
	if err == nil {
		return "no error"
	}
	s := err.Error()
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
