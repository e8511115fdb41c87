package trace

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// scanner is the byte scanner's state. The Reader's main scanner runs on
// its scan goroutine and pulls chunks through pull; speculative scanners
// run on worker goroutines over one chunk each (pull nil).
type scanner struct {
	src  *source
	pull func() (*chunk, bool) // the next chunk to append; false at the end
	cur  *chunk                // the chunk whose memory holds buf, or nil
	buf  []byte                // window of uncompressed input
	pos  int                   // scan position in buf
	// mark is where the step in progress started: refill keeps buf[mark:]
	// and a step cut short by the end of buf restarts from it.
	mark   int
	base   int64 // offset of buf[0] in the uncompressed input
	eof    bool  // the source has delivered its last chunk
	srcErr error // the source's failure, if it did not end cleanly
	gzip   bool

	state    int
	topFirst bool  // no key read yet in the top-level object
	evPos    uint8 // where in traceEvents: evStart, evAfter or evNeed
	arrayTop bool  // the input is the JSON array form
	sawArray bool  // traceEvents was found
	index    int64
	err      error // sticky: io.EOF or a fatal *Error

	evErr    string // first type error in the event being parsed
	evErrPos int
	deepPos  int   // where skipValue found a value nested too deep (resDeep)
	skipOff  int64 // stSkip: input offset of the event's error
	skipDep  int   // stSkip: brackets open in the event being skipped

	meta        Meta
	metaChanged bool // meta changed since the last batch
	strs        interner
	keys        *keyTable
	scratch     []byte // unescaped string values
	keyBuf      []byte // unescaped keys
	stack       []byte // bracket stack for skipping containers

	uncompressed atomic.Int64
}

// Reader states.
const (
	stStart  = iota // before the top-level value
	stTop           // in the top-level object, before a key or '}'
	stEvents        // in traceEvents, before an element or ']'
	stAfter         // after the top-level value
	stSkip          // skipping the rest of a malformed element of traceEvents
)

// Positions in traceEvents.
const (
	evStart uint8 = iota // after '[': an element or ']'
	evAfter              // after an element: ',' or ']'
	evNeed               // after ',': an element
)

// step results.
type result uint8

const (
	resOK    result = iota // an event was decoded
	resAgain               // the state advanced; step again
	resShort               // the window ended inside the step: refill and retry
	resBad                 // malformed JSON (fatal)
	resBadEv               // a well-formed element that is not a valid event (skipped)
	resEOF                 // the input ended cleanly
	resDeep                // a value nested deeper than maxDepth (r.deepPos)
)

// maxDepth bounds the nesting of a value the scanner skips, as
// encoding/json bounds its own (10000). An element of traceEvents nested
// deeper is malformed: the scanner skips the rest of it in stSkip, which
// counts brackets without a stack and without holding the element in its
// window, and reports it as a skipped event. A top-level value nested
// deeper is a fatal error.
const maxDepth = 10000

// maxValue bounds one event or top-level value: the window grows to hold the
// value being scanned and no further.
const maxValue = 64 << 20

// next decodes the next event into ev (overwriting all its fields); see
// Reader.Next.
func (r *scanner) next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	for {
		r.mark = r.pos
		switch res := r.step(ev); res {
		case resOK:
			return nil
		case resAgain:
		case resShort:
			if err := r.refill(); err != nil {
				return r.fail(err)
			}
		case resBad:
			return r.fail(nil)
		case resBadEv:
			return &Error{Offset: r.base + int64(r.evErrPos), Index: r.index - 1, Msg: r.evErr}
		case resEOF:
			r.err = io.EOF
			if r.src != nil {
				r.src.close()
			}
			return io.EOF
		}
	}
}

// fail records a fatal error: a syntax error (cause nil, message in evErr),
// or the end of the input inside a value (cause from refill).
func (r *scanner) fail(cause error) error {
	e := &Error{Index: -1, Fatal: true}
	if r.state == stEvents || r.state == stSkip {
		e.Index = r.index
	}
	switch {
	case cause == nil:
		e.Offset, e.Msg = r.base+int64(r.evErrPos), r.evErr
	case errors.Is(cause, errValueTooLarge):
		e.Offset, e.Msg = r.base+int64(r.mark), cause.Error()
	default:
		e.Offset = r.base + int64(len(r.buf))
		switch {
		case r.state == stStart && r.srcErr == nil:
			e.Msg = "empty input: not a trace"
		case r.state == stAfter:
			e.Msg, e.Err = "reading past the end of the trace", r.srcErr
		case r.srcErr != nil:
			e.Msg, e.Err = "input ends inside the JSON", r.srcErr
		default:
			e.Msg, e.Err = "unexpected end of JSON", io.ErrUnexpectedEOF
		}
	}
	r.err = e
	if r.src != nil {
		r.src.close()
	}
	return e
}

var errValueTooLarge = fmt.Errorf("value larger than %d MiB", maxValue>>20)

// refill keeps buf[mark:], appends the next chunk and moves pos back to
// mark's new place. It returns io.ErrUnexpectedEOF when there is no more
// input (r.srcErr tells whether the source failed).
func (r *scanner) refill() error {
	if r.eof {
		return io.ErrUnexpectedEOF
	}
	if len(r.buf)-r.mark >= maxValue {
		return errValueTooLarge
	}
	var c *chunk
	ok := false
	if r.pull != nil {
		// pull may move the scanner past chunks decoded speculatively
		// (skipChunk): read buf, mark and base after it.
		c, ok = r.pull()
	}
	if !ok { // no more chunks (a speculative scanner, the end, or Close)
		r.eof = true
		return io.ErrUnexpectedEOF
	}
	rem := r.buf[r.mark:]
	data := c.mem[headroom : headroom+c.n]
	r.base += int64(r.mark)
	var nb []byte
	var keep *chunk
	if len(rem) <= headroom {
		start := headroom - len(rem)
		copy(c.mem[start:], rem)
		nb = c.mem[start : headroom+c.n]
		keep = c
	} else if need := len(rem) + len(data); r.cur == nil && r.buf != nil && cap(r.buf) >= need {
		// A value longer than the headroom in the buffer of its own that
		// the last refill grew (the window is a chunk's memory only while
		// cur holds it; nothing points into it past a step): move rem to
		// its front and append.
		nb = append(r.buf[:copy(r.buf, rem)], data...)
	} else {
		// A value longer than the headroom: grow a buffer of its own, to
		// twice the need, so that a value of n bytes costs O(n) bytes of
		// buffers rather than a new buffer at every chunk.
		nb = make([]byte, 0, 2*need)
		nb = append(append(nb, rem...), data...)
	}
	// Read c's error before c goes back to the source: a released chunk is
	// refilled (and its fields rewritten) by the source goroutine.
	cerr := c.err
	if r.cur != nil {
		r.src.release(r.cur)
	}
	r.cur = keep
	if keep == nil {
		r.src.release(c)
	}
	if cerr != nil {
		r.eof = true
		if cerr != io.EOF {
			r.srcErr = cerr
		}
	}
	r.buf = nb
	r.pos -= r.mark
	r.mark = 0
	r.uncompressed.Store(r.base + int64(len(nb)))
	return nil
}

// step advances by one structural element of the top level: a top-level
// key and value, the start or end of traceEvents, or one event.
func (r *scanner) step(ev *Event) result {
	b := r.buf
	i := skipWS(b, r.pos)
	if i == len(b) {
		if r.state == stAfter && r.eof {
			if r.srcErr != nil {
				return resShort // fail reports the source error
			}
			return resEOF
		}
		return resShort
	}
	switch r.state {
	case stStart:
		switch b[i] {
		case '{':
			r.state, r.topFirst, r.pos = stTop, true, i+1
		case '[':
			r.state, r.evPos, r.arrayTop, r.pos = stEvents, evStart, true, i+1
		default:
			return r.bad(i, fmt.Sprintf("not a trace: want a JSON object with traceEvents, found %s", quoteByte(b[i])))
		}
		return resAgain
	case stTop:
		return r.stepTop(b, i)
	case stEvents:
		return r.stepEvents(b, i, ev)
	case stSkip:
		return r.stepSkip(b, i)
	default: // stAfter
		return r.bad(i, fmt.Sprintf("data after the end of the trace: %s", quoteByte(b[i])))
	}
}

func (r *scanner) stepTop(b []byte, i int) result {
	key, done, j, res := r.objectKey(b, i, r.topFirst, "the top-level object")
	if res != resOK {
		return res
	}
	if done {
		r.pos = j
		r.state = stAfter
		if !r.sawArray {
			return r.bad(i, "not a torch.profiler trace: the top-level object has no traceEvents array")
		}
		return resAgain
	}
	if string(key) == "traceEvents" {
		if b[j] != '[' {
			return r.bad(j, fmt.Sprintf("traceEvents is not an array: found %s", kindOf(b[j])))
		}
		r.state, r.evPos, r.sawArray, r.topFirst, r.pos = stEvents, evStart, true, false, j+1
		return resAgain
	}
	k := string(key) // before skipValue: key may sit in keyBuf
	end, res := r.skipValue(b, j)
	if res == resDeep {
		return r.bad(r.deepPos, fmt.Sprintf("%s: value nested more than %d levels deep", k, maxDepth))
	}
	if res != resOK {
		return res
	}
	r.meta.set(k, b[j:end])
	r.metaChanged = true
	r.topFirst, r.pos = false, end
	return resAgain
}

func (r *scanner) stepEvents(b []byte, i int, ev *Event) result {
	if r.evPos != evNeed && b[i] == ']' {
		r.pos = i + 1
		if r.arrayTop {
			r.state = stAfter
		} else {
			r.state = stTop
		}
		return resAgain
	}
	if r.evPos == evAfter {
		if b[i] != ',' {
			return r.bad(i, fmt.Sprintf("want ',' or ']' after an event, found %s", quoteByte(b[i])))
		}
		r.evPos, r.pos = evNeed, i+1
		return resAgain
	}
	if b[i] != '{' {
		end, res := r.skipValue(b, i)
		if res == resDeep {
			r.evErr = ""
			return r.startSkip(i)
		}
		if res != resOK {
			return res
		}
		r.evErr, r.evErrPos = fmt.Sprintf("event is not a JSON object: found %s", quoteByte(b[i])), i
		r.evPos, r.pos = evAfter, end
		r.index++
		return resBadEv
	}
	*ev = Event{Index: r.index, Offset: r.base + int64(i)}
	r.evErr = ""
	end, res := r.parseEvent(b, i, ev)
	if res == resDeep {
		return r.startSkip(i)
	}
	if res != resOK {
		return res
	}
	r.evPos, r.pos = evAfter, end
	r.index++
	if r.evErr != "" {
		return resBadEv
	}
	return resOK
}

// startSkip makes the element of traceEvents at b[i], in which skipValue
// found a value nested too deep, a malformed event: the error is the
// element's first type error, else the depth at r.deepPos, and stSkip skips
// the element from its start.
func (r *scanner) startSkip(i int) result {
	if r.evErr == "" {
		r.evErr, r.evErrPos = fmt.Sprintf("value nested more than %d levels deep", maxDepth), r.deepPos
	}
	r.skipOff = r.base + int64(r.evErrPos)
	r.state, r.skipDep, r.pos = stSkip, 0, i
	return resAgain
}

// stepSkip goes on skipping the element started by startSkip from b[i]: it
// counts brackets outside strings until the element's own closes, then
// reports the element as skipped (resBadEv). It checks nothing else. What it
// has passed leaves the window, so the element's size and depth cost no
// memory.
func (r *scanner) stepSkip(b []byte, i int) result {
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, _ := scanString(b, j)
			if end < 0 { // keep the string's start in the window
				r.pos, r.mark = j, j
				return resShort
			}
			j = end - 1
		case '{', '[':
			r.skipDep++
		case '}', ']':
			r.skipDep--
			if r.skipDep == 0 {
				r.state, r.evPos, r.pos = stEvents, evAfter, j+1
				r.evErrPos = int(r.skipOff - r.base)
				r.index++
				return resBadEv
			}
		}
	}
	r.pos = len(b)
	return resAgain
}

// bad records a syntax error at b[i] and returns resBad.
func (r *scanner) bad(i int, msg string) result {
	r.evErr, r.evErrPos = msg, i
	return resBad
}

// quoteByte names a byte for an error message.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// atElement reports whether the scanner rests in traceEvents right after a
// ',' with nothing but whitespace left in its window: the next byte of input
// starts an element, so a chunk that starts there may be taken as decoded
// by a speculative scanner.
func (r *scanner) atElement() bool {
	return r.err == nil && r.restsAtElement()
}

// restsAtElement is atElement without the check for an error, for a
// speculative scanner that has run into the end of its chunk.
func (r *scanner) restsAtElement() bool {
	return r.state == stEvents && r.evPos == evNeed && skipWS(r.buf, r.mark) == len(r.buf)
}

// skipChunk moves the scanner past chunk c, whose events a speculative
// scanner has decoded (n of them): the window empties and the next chunk
// starts at c's end.
func (r *scanner) skipChunk(c *chunk, n int) {
	if r.cur != nil {
		r.src.release(r.cur)
		r.cur = nil
	}
	r.buf, r.pos, r.mark = nil, 0, 0
	r.base = c.off + int64(c.n)
	r.index += int64(n)
	r.uncompressed.Store(r.base)
	if c.err != nil {
		r.eof = true
		if c.err != io.EOF {
			r.srcErr = c.err
		}
	}
}

// speculate decodes chunk c on its own, as if it started at an element of
// traceEvents right after a ','. It appends the events to evs (their Index
// counted from 0) and reports whether the whole chunk was such a run of
// elements ending after a ','; anything else (the top-level object, the end
// of traceEvents, an error, a chunk cut inside an event) reports false.
func (r *scanner) speculate(c *chunk, evs []Event) ([]Event, bool) {
	// Reset the state, keeping the tables and buffers.
	r.cur, r.buf, r.pos, r.mark, r.base = nil, c.mem[headroom:headroom+c.n], 0, 0, c.off
	r.eof, r.srcErr, r.err, r.evErr = true, nil, nil, ""
	r.state, r.evPos, r.sawArray, r.arrayTop, r.topFirst, r.index = stEvents, evNeed, true, false, false, 0
	for {
		evs = append(evs, Event{}) // decoded in place: one copy less
		err := r.next(&evs[len(evs)-1])
		if err == nil {
			continue
		}
		evs = evs[:len(evs)-1]
		var e *Error
		ok := errors.As(err, &e) && e.Fatal && errors.Is(err, io.ErrUnexpectedEOF) && r.restsAtElement()
		return evs, ok
	}
}
