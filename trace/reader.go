package trace

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sync"
)

// Reader streams the events of a torch.profiler (Kineto) Chrome-trace JSON
// file, plain or gzip-compressed (detected by the magic bytes 1f 8b, RFC
// 1952), without holding the file or the events in memory. It keeps a few
// 512 KiB chunks of uncompressed input, a few batches of decoded events,
// the interned strings (at most 8 MiB per scanner goroutine) and the
// top-level metadata, whatever the file size: a 1 GB trace read in 20-30 MB
// of peak RSS (bench/trace.sh).
//
// Work runs on several goroutines. One reads and decompresses the input into
// chunks that end at line ends. Workers decode each chunk that starts at a
// line start on its own, speculatively, as a run of traceEvents elements
// (Kineto writes one event per line, so this holds for all chunks but the
// first and last). The main scanner goes through the chunks in order and
// takes a worker's events when it finds itself exactly at the start of that
// chunk between two elements; otherwise (the top-level object, an event cut
// by the chunk's end, any error, a file without line breaks) it decodes the
// chunk itself. The caller's goroutine takes the events in order. The
// result is the same as a sequential scan; on a machine with two cores or
// more the work is spread over them.
//
// The scanner is specialised for trace events: it decodes the fields of
// Event (the Kineto trace-event fields), skips every other value, and parses numbers
// without allocating. Values it skips are checked for JSON's grammar of
// strings, numbers and literals and for balanced brackets, but not for the
// commas and colons inside them. A value nested more than maxDepth (10000)
// levels deep makes its event malformed (the rest of the event is skipped
// without being held in memory), or the trace, outside traceEvents. An
// event whose ts is not finite, or whose dur is negative or not finite
// (1e999 parses as an infinity), is malformed too (see maxTime). Besides
// the Chrome-trace object form ({"traceEvents": [...], ...}) it accepts the
// JSON array form ([...]).
// Strings are interned per scanner goroutine: equal names share storage
// within one goroutine's table.
//
// A Reader is not safe for concurrent use; separate Readers on separate
// files may run on separate goroutines. BytesRead may be called from any
// goroutine.
type Reader struct {
	sc      *scanner
	batches chan *batch
	free    chan *batch
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	out     *batch // the batch the main scanner fills
	taken   int    // chunks taken from the workers (for tests)

	cur     *batch
	k       int // next event of cur
	errSent bool
	meta    Meta
	err     error // sticky: io.EOF or a fatal *Error
}

// batch is a run of decoded events, ended by an error (io.EOF at the end)
// when err is set. meta, when set, is the metadata as of the batch's end.
type batch struct {
	evs  []Event
	err  error
	meta *Meta
}

const (
	batchEvents = 2048
	// numBatches covers a batch per chunk in flight, the channel to the
	// caller, the caller's and the main scanner's.
	numBatches = numChunks + 8
)

// workers is the number of speculative decoders per Reader: at least two,
// so that a two-core machine keeps both cores busy; at most four, to bound
// memory when many files are read at once.
func workers() int { return min(max(runtime.GOMAXPROCS(0), 2), 4) }

// Error is a positioned fault in a trace. A fatal one ends the stream (every
// later ReadEvent returns it); a non-fatal one reports one element of
// traceEvents that was skipped, and ReadEvent may be called again.
type Error struct {
	Offset int64  // byte offset in the uncompressed JSON
	Index  int64  // index of the element of traceEvents; -1 outside traceEvents
	Msg    string // what is wrong
	Err    error  // the underlying error (a gzip or read error, io.ErrUnexpectedEOF), or nil
	Fatal  bool
}

func (e *Error) Error() string {
	s := "trace"
	if e.Index >= 0 {
		s += fmt.Sprintf(": event %d", e.Index)
	}
	s += fmt.Sprintf(" at byte %d: %s", e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// NewReader returns a Reader of the trace in r, gzip-compressed or plain. It
// reads the first bytes (and the gzip header) before it returns. Call Close
// when done; after ReadEvent has returned io.EOF or a fatal error, Close
// has nothing left to stop.
func NewReader(r io.Reader) (*Reader, error) {
	src, gz, err := newSource(r)
	if err != nil {
		return nil, err
	}
	rd := &Reader{
		sc:      &scanner{src: src, gzip: gz, strs: newInterner(), keys: newKeyTable()},
		batches: make(chan *batch, 4),
		free:    make(chan *batch, numBatches),
		done:    make(chan struct{}),
	}
	rd.sc.pull = rd.pull
	for range numBatches {
		rd.free <- &batch{} // evs grow on first use
	}
	for range workers() {
		rd.wg.Add(1)
		go rd.work()
	}
	rd.wg.Add(1)
	go rd.scan()
	return rd, nil
}

// work decodes line-start chunks speculatively until the source ends.
func (r *Reader) work() {
	defer r.wg.Done()
	var sc *scanner // made at the first chunk: a small file gives the workers none
	for {
		var c *chunk
		select {
		case c = <-r.sc.src.work:
		case <-r.done:
			return
		}
		if c == nil { // the source has ended
			return
		}
		if sc == nil {
			sc = &scanner{strs: newInterner(), keys: newKeyTable()}
		}
		var b *batch
		select {
		case b = <-r.free:
		case <-r.done:
			return
		}
		var ok bool
		b.evs, ok = sc.speculate(c, b.evs[:0])
		b.err, b.meta = nil, nil
		if ok {
			c.spec = b
		} else {
			r.free <- b
		}
		close(c.ready)
	}
}

// pull gives the main scanner its next chunk. Chunks decoded speculatively
// that start where the scanner stands (between two elements of
// traceEvents) are taken as they are: their events go to the caller after
// the scanner's own, and the scanner moves past them.
func (r *Reader) pull() (*chunk, bool) {
	for {
		var c *chunk
		var ok bool
		select {
		case c, ok = <-r.sc.src.full:
		case <-r.done:
			return nil, false
		}
		if !ok {
			return nil, false
		}
		select {
		case <-c.ready:
		case <-r.done:
			return nil, false
		}
		spec := c.spec
		c.spec = nil
		if spec == nil {
			return c, true
		}
		if !r.sc.atElement() {
			r.free <- spec
			return c, true
		}
		for k := range spec.evs {
			spec.evs[k].Index += r.sc.index
		}
		n := len(spec.evs)
		if !r.flush() || !r.send(spec) {
			return nil, false
		}
		r.sc.skipChunk(c, n)
		r.sc.src.release(c)
		r.taken++
		if r.sc.eof {
			return nil, false
		}
	}
}

// scan runs the main scanner into batches until the stream ends or Close.
func (r *Reader) scan() {
	defer r.wg.Done()
	defer close(r.batches)
	defer r.sc.src.close()
	// When the stream ends the workers have nothing left to do: stop them,
	// so that a caller who stops at io.EOF or a fatal error leaks nothing.
	defer r.once.Do(func() { close(r.done) })
	select {
	case r.out = <-r.free:
	case <-r.done:
		return
	}
	r.out.evs = r.out.evs[:0]
	var ev Event
	for {
		err := r.sc.next(&ev)
		if err == nil {
			r.out.evs = append(r.out.evs, ev)
			if len(r.out.evs) >= batchEvents && !r.flush() {
				return
			}
			continue
		}
		r.out.err = err
		if !r.flush() || !isSkipped(err) {
			return
		}
	}
}

// flush sends the batch being filled, if it holds anything, and takes an
// empty one. It reports false when the Reader was closed.
func (r *Reader) flush() bool {
	if len(r.out.evs) == 0 && r.out.err == nil && !r.sc.metaChanged {
		return true
	}
	if r.sc.metaChanged {
		m := r.sc.meta.clone()
		r.out.meta = &m
		r.sc.metaChanged = false
	}
	if !r.send(r.out) {
		return false
	}
	select {
	case r.out = <-r.free:
	case <-r.done:
		return false
	}
	r.out.evs, r.out.err, r.out.meta = r.out.evs[:0], nil, nil
	return true
}

// send hands a batch to the caller; false when the Reader was closed.
func (r *Reader) send(b *batch) bool {
	select {
	case r.batches <- b:
		return true
	case <-r.done:
		return false
	}
}

// isSkipped reports whether err is a non-fatal *Error.
func isSkipped(err error) bool {
	var e *Error
	return errors.As(err, &e) && !e.Fatal
}

// Close stops the goroutines of the Reader. It is safe to call more than
// once and after ReadEvent has returned an error. It does not close the
// underlying reader, and a goroutine blocked in its Read stays so until the
// Read returns.
func (r *Reader) Close() error {
	r.once.Do(func() { close(r.done) })
	r.sc.src.close()
	return nil
}

// Gzip reports whether the input is gzip-compressed.
func (r *Reader) Gzip() bool { return r.sc.gzip }

// BytesRead returns the uncompressed bytes handed to the scanner so far
// (chunk granularity, for a progress bar) and the bytes read from the
// underlying reader (the compressed size for gzip input).
func (r *Reader) BytesRead() (uncompressed, compressed int64) {
	return r.sc.uncompressed.Load(), r.sc.src.compressed.Load()
}

// Meta returns the top-level metadata of the events delivered so far; it is
// complete once ReadEvent has returned io.EOF (Kineto writes some of it
// after traceEvents). The result is the Reader's own copy: it does not
// change until the next ReadEvent.
func (r *Reader) Meta() *Meta { return &r.meta }

// ReadEvent returns the next element of traceEvents, io.EOF after the last
// one (once the whole file has been read and Meta is complete), or an
// *Error. Events read before an error are returned before it. After a
// non-fatal *Error (one element skipped) reading may go on; after a fatal
// one every call returns it.
func (r *Reader) ReadEvent() (Event, error) {
	var ev Event
	err := r.Next(&ev)
	return ev, err
}

// Next decodes the next event into ev (overwriting all its fields) and
// returns what ReadEvent would. It lets a caller reuse one Event.
func (r *Reader) Next(ev *Event) error {
	for {
		if r.err != nil {
			return r.err
		}
		if b := r.cur; b != nil {
			if r.k < len(b.evs) {
				*ev = b.evs[r.k]
				r.k++
				return nil
			}
			if b.err != nil && !r.errSent {
				r.errSent = true
				if !isSkipped(b.err) {
					r.err = b.err
				}
				return b.err
			}
			r.free <- b // never blocks: free has room for every batch
			r.cur = nil
		}
		b, ok := <-r.batches
		if !ok { // Close was called
			r.err = &Error{Index: -1, Msg: "reader closed", Fatal: true, Err: io.ErrClosedPipe}
			return r.err
		}
		if b.meta != nil {
			r.meta = *b.meta
		}
		b.meta = nil
		r.cur, r.k, r.errSent = b, 0, false
	}
}

// clone copies m deeply enough that the scanner's later changes do not
// show in the copy.
func (m *Meta) clone() Meta {
	c := *m
	c.DeviceProperties = slices.Clone(m.DeviceProperties)
	c.Warnings = slices.Clone(m.Warnings)
	if m.Other != nil {
		c.Other = maps.Clone(m.Other)
	}
	if m.Distributed != nil {
		d := *m.Distributed
		c.Distributed = &d
	}
	return c
}
