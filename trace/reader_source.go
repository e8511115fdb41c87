package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// The source pipeline: one goroutine reads (and, for gzip input,
// decompresses) the input into fixed-size chunks. Chunks end at a line end
// when the input has one in reach (Kineto writes one event per line), and
// such chunks go to worker goroutines that decode them speculatively while
// the main scanner works on earlier ones; see Reader.
const (
	chunkSize = 512 << 10 // uncompressed bytes per chunk
	headroom  = 64 << 10  // room before a chunk's data for the unscanned tail of the previous chunk
	numChunks = 6         // chunks in flight: at most numChunks*(chunkSize+headroom) bytes
	maxCarry  = chunkSize / 4
)

// chunk is one block of uncompressed input. Its data sits at
// mem[headroom:headroom+n] and starts at offset off of the uncompressed
// input; err, when set, follows the data (io.EOF at a clean end).
type chunk struct {
	mem []byte
	n   int
	err error
	off int64
	// lineStart: the data starts right after a '\n', so it may start an
	// element of traceEvents; such chunks are decoded speculatively.
	lineStart bool
	spec      *batch        // the speculative decode, nil if none or failed
	ready     chan struct{} // closed once spec is settled
}

// source runs the decompression goroutine.
type source struct {
	full       chan *chunk // in input order, to the main scanner
	work       chan *chunk // line-start chunks, to the workers
	free       chan *chunk
	done       chan struct{}
	closeOnce  sync.Once
	compressed atomic.Int64 // bytes read from the underlying reader
	wg         sync.WaitGroup
}

// release returns a chunk to the free list; it never blocks, as free has
// room for every chunk.
func (s *source) release(c *chunk) { s.free <- c }

// countingReader counts the bytes read from the underlying reader.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// gzipMagic is the first two bytes of a gzip member (RFC 1952 §2.3.1).
var gzipMagic = [2]byte{0x1f, 0x8b}

// newSource detects gzip by its magic bytes and starts the goroutine. It
// reads the gzip header before returning, so a file that is not gzip after
// all fails here. It decompresses with github.com/klauspost/compress/gzip,
// which inflates the real traces (AMD-AGI/TraceLens @ 171dd74 and the
// others in testdata/ATTRIBUTION) 1.35-1.39x as fast
// as compress/gzip and a generated trace 1.15x (BenchmarkGunzip,
// bench/RESULTS-trace.md); the format is the same.
func newSource(r io.Reader) (*source, bool, error) {
	s := &source{
		full: make(chan *chunk, numChunks),
		work: make(chan *chunk, numChunks),
		free: make(chan *chunk, numChunks),
		done: make(chan struct{}),
	}
	br := bufio.NewReaderSize(countingReader{r: r, n: &s.compressed}, 256<<10)
	var in io.Reader = br
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("read trace: %w", err)
	}
	gz := len(magic) == 2 && magic[0] == gzipMagic[0] && magic[1] == gzipMagic[1]
	if gz {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, true, fmt.Errorf("read gzip header: %w", err)
		}
		in = zr
	}
	s.wg.Add(1)
	go s.run(in)
	return s, gz, nil
}

// run fills free chunks from in until in ends or fails, or until close. A
// chunk that is not the last ends after its last '\n' when the rest (the
// carry, moved to the next chunk) is at most maxCarry bytes.
func (s *source) run(in io.Reader) {
	defer s.wg.Done()
	defer close(s.full)
	defer close(s.work)
	var carry []byte
	var off int64
	lineStart := false
	allocated := 0
	for {
		c, ok := s.get(&allocated)
		if !ok {
			return
		}
		copy(c.mem[headroom:], carry)
		n, err := fill(in, c.mem[headroom+len(carry):])
		n += len(carry)
		carry = carry[:0]
		c.off, c.lineStart, c.spec = off, lineStart, nil
		c.ready = make(chan struct{})
		lineStart = false
		if err == nil {
			data := c.mem[headroom : headroom+n]
			if p := bytes.LastIndexByte(data, '\n'); p >= 0 && n-p-1 <= maxCarry {
				carry = append(carry, data[p+1:]...)
				n = p + 1
				lineStart = true
			}
		}
		c.n, c.err = n, err
		off += int64(n)
		select {
		case s.full <- c:
		case <-s.done:
			return
		}
		if c.lineStart {
			select {
			case s.work <- c:
			case <-s.done:
				return
			}
		} else {
			close(c.ready)
		}
		if err != nil {
			return
		}
	}
}

// get takes a free chunk, allocating up to numChunks of them as needed (a
// small file needs one); false after close.
func (s *source) get(allocated *int) (*chunk, bool) {
	select {
	case c := <-s.free:
		return c, true
	default:
	}
	if *allocated < numChunks {
		*allocated++
		return &chunk{mem: make([]byte, headroom+chunkSize)}, true
	}
	select {
	case c := <-s.free:
		return c, true
	case <-s.done:
		return nil, false
	}
}

// fill reads into p until it is full or in fails; a full p with no error
// returns nil, any end or failure returns the error (io.EOF at a clean end).
func fill(in io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := in.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m == 0 {
			// A reader that returns 0, nil repeatedly would spin; io.Reader
			// discourages it, and bufio and gzip never do it.
			continue
		}
	}
	return n, nil
}

// close stops the goroutine. It does not wait for a Read blocked on the
// underlying reader.
func (s *source) close() {
	s.closeOnce.Do(func() { close(s.done) })
}
