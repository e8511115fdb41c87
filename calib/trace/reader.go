package trace

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
)

// Reader streams the events of a torch.profiler (Kineto) Chrome-trace JSON
// file, plain or gzip-compressed (detected by the magic bytes 1f 8b, RFC
// 1952), without holding the file or the events in memory. It keeps a few
// 1 MiB chunks of uncompressed input, a few batches of decoded events, the
// table of interned strings (bounded) and the top-level metadata: under
// 16 MiB plus the interned strings, whatever the file size.
//
// Work runs on three goroutines: one reads and decompresses the input into
// chunks, one scans the chunks into batches of events, and the caller's
// goroutine takes events from the batches. On a machine with two cores or
// more, the caller's own work on the events overlaps with decompression and
// scanning.
//
// The scanner is specialised for trace events: it decodes the fields of
// Event (REFERENCE.md §2.1), skips every other value, and parses numbers
// without allocating. Values it skips are checked for JSON's grammar of
// strings, numbers and literals and for balanced brackets, but not for the
// commas and colons inside them. Besides the Chrome-trace object form
// ({"traceEvents": [...], ...}) it accepts the JSON array form ([...]).
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
	numBatches  = 4
)

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
		sc:      &scanner{src: src, gzip: gz, strs: newInterner()},
		batches: make(chan *batch, numBatches),
		free:    make(chan *batch, numBatches),
		done:    make(chan struct{}),
	}
	for range numBatches {
		rd.free <- &batch{evs: make([]Event, 0, batchEvents)}
	}
	rd.wg.Add(1)
	go rd.scan()
	return rd, nil
}

// scan runs the scanner into batches until the stream ends or Close.
func (r *Reader) scan() {
	defer r.wg.Done()
	defer close(r.batches)
	defer r.sc.src.close()
	for {
		var b *batch
		select {
		case b = <-r.free:
		case <-r.done:
			return
		}
		b.evs, b.err, b.meta = b.evs[:0], nil, nil
		for len(b.evs) < batchEvents {
			b.evs = append(b.evs, Event{})
			if err := r.sc.next(&b.evs[len(b.evs)-1]); err != nil {
				b.evs = b.evs[:len(b.evs)-1]
				b.err = err
				break
			}
		}
		if r.sc.metaChanged {
			m := r.sc.meta.clone()
			b.meta = &m
			r.sc.metaChanged = false
		}
		select {
		case r.batches <- b:
		case <-r.done:
			return
		}
		if b.err != nil && !isSkipped(b.err) {
			return
		}
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
