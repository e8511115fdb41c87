package calib

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A compressed calibration file (X.toml.zst, the embedded whole-system
// imports) is written as one zstd frame for the file's head (schema and
// provenance) and then frames of whole [[table]]s: consecutive tables of
// one op, up to frameText bytes of text a frame (a larger table alone).
// Decompressed one after the other (any zstd tool, Load) they are the TOML
// text, and each table can be read alone: the head's text followed by the
// table's is a calibration file of that one table. An embedded
// calibration has beside it an index (embedded/index/<gpu>.tsv: each
// table's frame, its place in the frame's text, its name, op, keys, GPU
// and fabric; TestEmbeddedIndex checks that it is current and writes it
// with -update), from which EmbeddedTables opens the file without
// decompressing the tables a scenario does not look up.
//
// One frame per table compressed the H200 file to 2.31 MB against 1.54 MB
// as one frame (each frame starts without history: the tables'
// provenance lines repeat); frames of up to 128 KB of text give 1.77 MB
// and decompress in well under a millisecond each.
const frameText = 128 << 10

// tableStarts are the offsets of the lines "[[table]]" of a calibration
// file's text as Encode writes it.
func tableStarts(text []byte) []int {
	var at []int
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte("[[table]]\n"))
		if j < 0 {
			return at
		}
		if i+j == 0 || text[i+j-1] == '\n' {
			at = append(at, i+j)
		}
		i += j + 1
	}
}

// encodeFrames compresses text as a frame for the head and frames of
// tables (see above).
func encodeFrames(text []byte) ([]byte, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	starts := tableStarts(text)
	if len(starts) == 0 {
		return enc.EncodeAll(text, nil), nil
	}
	out := enc.EncodeAll(text[:starts[0]], nil)
	from, op := starts[0], ""
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		o := tableOp(text[s:end])
		if s > from && (o != op || end-from > frameText) {
			out = enc.EncodeAll(text[from:s], out)
			from = s
		}
		op = o
	}
	return enc.EncodeAll(text[from:], out), nil
}

// tableOp is the op line's value of a table's text as Encode writes it
// (it only groups tables into frames).
func tableOp(t []byte) string {
	if i := bytes.Index(t, []byte("\nop = ")); i >= 0 {
		t = t[i+6:]
		if j := bytes.IndexByte(t, '\n'); j >= 0 {
			return string(t[:j])
		}
	}
	return ""
}

// frameSpans walks the zstd frames of z (headers and block headers only,
// nothing is decompressed) and returns each frame's [start, end).
func frameSpans(z []byte) ([][2]int, error) {
	var spans [][2]int
	for at := 0; at < len(z); {
		var h zstd.Header
		if err := h.Decode(z[at:]); err != nil {
			return nil, fmt.Errorf("frame at byte %d: %w", at, err)
		}
		if h.Skippable {
			return nil, fmt.Errorf("frame at byte %d: skippable frames are not written here", at)
		}
		checksum := z[at+4]&0x04 != 0 // Content_Checksum_flag of the frame header descriptor
		p := at + h.HeaderSize
		for {
			if p+3 > len(z) {
				return nil, fmt.Errorf("frame at byte %d: truncated", at)
			}
			bh := uint32(z[p]) | uint32(z[p+1])<<8 | uint32(z[p+2])<<16
			size := int(bh >> 3)
			if (bh>>1)&3 == 1 { // RLE block: one byte
				size = 1
			}
			p += 3 + size
			if bh&1 != 0 {
				break
			}
		}
		if checksum {
			p += 4
		}
		if p > len(z) {
			return nil, fmt.Errorf("frame at byte %d: truncated", at)
		}
		spans = append(spans, [2]int{at, p})
		at = p
	}
	return spans, nil
}

// frameDec decodes frames (DecodeAll) on as many goroutines at once as
// there are Ps: the lazy tables of a plan's GPUs are read by its workers
// concurrently (with one decoder, each waited for the other's frame).
var frameDec = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
})

// decodeFrame appends the decompressed frame to dst.
func decodeFrame(frame, dst []byte) ([]byte, error) {
	dec, err := frameDec()
	if err != nil {
		return nil, err
	}
	return dec.DecodeAll(frame, dst)
}

// ---- the index ----

// indexEntry is one table of an embedded calibration's index: its frame
// in the .zst ([off, end)), its text in the frame's ([lo, hi)), its name,
// op and keys, and its effective GPU and fabric (what Select reads) and
// engine (what a prefill lookup reads).
type indexEntry struct {
	off, end            int
	lo, hi              int
	name, op            string
	gpu, fabric, engine string
	version             string // the engine's version (kernels.Origin)
	origin              string // originLabel (kernels.Origin)
	keys                Keys
}

type fileIndex struct {
	// plain: the file is TOML, not compressed (a calib gpu file): its
	// head and tables are spans of its text and every entry's frame is
	// the whole file
	plain  bool
	size   int    // bytes of the file it indexes
	sum    uint32 // its CRC-32C (a stale index is ignored at run time)
	head   [2]int // the head's frame (plain: its text)
	tables []indexEntry
}

const indexHeader = "# moecast: index of an embedded calibration file: where each table lies, its name, op, keys, GPU, fabric and engine (go generate ./calib: TestEmbeddedIndex -update writes it)\n"

// makeIndex indexes z, the framed compressed calibration file name: it
// decompresses each frame and checks that the first is the head and the
// others whole tables, as the whole file parses. plain: z is a TOML
// calibration file (its text one frame after its head's).
func makeIndex(name string, z []byte, plain bool) (*fileIndex, error) {
	var spans [][2]int
	var text []byte
	var at []int // text offset of each frame's text, and the end
	if plain {
		text = z
		st := tableStarts(text)
		if len(st) == 0 {
			return nil, fmt.Errorf("%s: no table", name)
		}
		spans, at = [][2]int{{0, st[0]}, {0, len(z)}}, []int{0, st[0], len(z)}
	} else {
		var err error
		if spans, err = frameSpans(z); err != nil {
			return nil, err
		}
		for _, s := range spans {
			at = append(at, len(text))
			if text, err = decodeFrame(z[s[0]:s[1]], text); err != nil {
				return nil, err
			}
		}
		at = append(at, len(text))
	}
	f, err := parseUnbuilt(name, text)
	if err != nil {
		return nil, err
	}
	starts := tableStarts(text)
	if len(starts) != len(f.Tables) || len(starts) == 0 || len(spans) < 2 || at[1] != starts[0] {
		return nil, fmt.Errorf("%s: the first frame is not the head alone (re-encode it: TestEmbeddedIndex -update)", name)
	}
	ix := &fileIndex{plain: plain, size: len(z), sum: fileSum(z), head: spans[0]}
	fr := 1
	for i, t := range f.Tables {
		lo, hi := starts[i], len(text)
		if i+1 < len(starts) {
			hi = starts[i+1]
		}
		for !plain && at[fr+1] <= lo {
			fr++
		}
		if plain {
			at[fr] = 0 // the text is the frame
		}
		if at[fr] > lo || at[fr+1] < hi {
			return nil, fmt.Errorf("%s: table %q is not within one frame (re-encode it: TestEmbeddedIndex -update)", name, t.Name)
		}
		p := f.Effective(&f.Tables[i])
		e := indexEntry{off: spans[fr][0], end: spans[fr][1], lo: lo - at[fr], hi: hi - at[fr],
			name: t.Name, op: t.Op, gpu: p.GPU, fabric: p.Fabric, engine: p.Engine, version: p.EngineVersion,
			origin: originLabel(p, t.Op), keys: t.Keys}
		for _, s := range []string{e.name, e.op, e.gpu, e.fabric, e.engine, e.version} {
			if strings.ContainsAny(s, "\t\n ") || s == "-" {
				return nil, fmt.Errorf("%s: table %q: %q has a space, tab or line break: not indexable", name, t.Name, s)
			}
		}
		if strings.ContainsAny(e.origin, "\t\n") {
			return nil, fmt.Errorf("%s: table %q: origin %q has a tab or line break: not indexable", name, t.Name, e.origin)
		}
		ix.tables = append(ix.tables, e)
	}
	return ix, nil
}

// fileSum is the CRC-32C of an indexed file (a fraction of a millisecond
// for a 2 MB file).
func fileSum(z []byte) uint32 { return crc32.Checksum(z, crc32.MakeTable(crc32.Castagnoli)) }

// embeddedAt opens the embedded file path for reads at offsets, and
// its size, without copying it: ReadFile copies a whole file, and the 2 MB
// of fresh pages of a GPU's compressed calibration took 13-50 ms of page
// faults in each fresh process on the 2-core dev VM (the README plan
// opens three), where its index and the frames a scenario reads are a few
// hundred KB.
func embeddedAt(path string) (io.ReaderAt, int, error) {
	f, err := embedded.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if r, ok := f.(io.ReaderAt); ok {
		return r, int(st.Size()), nil
	}
	z, err := embedded.ReadFile(path) // embed's files read at offsets: not reached
	return bytes.NewReader(z), len(z), err
}

// readAt reads bytes [lo, hi) of r, a file of size bytes, into a new
// slice; errIndex when they do not lie in the file.
func readAt(r io.ReaderAt, size, lo, hi int) ([]byte, error) {
	if lo < 0 || hi < lo || hi > size {
		return nil, errIndex
	}
	b := make([]byte, hi-lo)
	if n, err := r.ReadAt(b, int64(lo)); n < len(b) {
		return nil, cmp.Or(err, errIndex)
	}
	return b, nil
}

// sum is fileSum of the source's file, read 64 KB at a time; ok is
// false when the file cannot be read.
func (s *lazySrc) sum() (sum uint32, ok bool) {
	if s.plain {
		return fileSum(s.z), true
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	buf := make([]byte, 64<<10)
	for off := 0; off < s.size; off += len(buf) {
		b := buf[:min(len(buf), s.size-off)]
		if n, _ := s.r.ReadAt(b, int64(off)); n < len(b) {
			return 0, false
		}
		sum = crc32.Update(sum, tab, b)
	}
	return sum, true
}

// encode writes the index as text: a header line, "zst SIZE CRC32C"
// ("toml SIZE CRC32C" for a plain file), "head START END", then one line
// per table: START END LO HI NAME OP GPU FABRIC ENGINE VERSION KEYS ORIGIN
// (its frame, its text in the frame's), tab separated, "-" for an empty
// fabric, engine or version, keys as name=value separated by spaces.
func (ix *fileIndex) encode() []byte {
	var b strings.Builder
	b.WriteString(indexHeader)
	kind := "zst"
	if ix.plain {
		kind = "toml"
	}
	fmt.Fprintf(&b, "%s\t%d\t%08x\nhead\t%d\t%d\n", kind, ix.size, ix.sum, ix.head[0], ix.head[1])
	for _, e := range ix.tables {
		dash := func(s string) string {
			if s == "" {
				return "-"
			}
			return s
		}
		var keys []string
		e.keys.eachSet(
			func(name, v string) { keys = append(keys, name+"="+v) },
			func(name string, v int) { keys = append(keys, name+"="+strconv.Itoa(v)) })
		fmt.Fprintf(&b, "%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.off, e.end, e.lo, e.hi, e.name, e.op, e.gpu,
			dash(e.fabric), dash(e.engine), dash(e.version), strings.Join(keys, " "), e.origin)
	}
	return []byte(b.String())
}

var errIndex = errors.New("malformed index")

func undash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// parseIndex reads encode's text.
func parseIndex(data string) (*fileIndex, error) {
	ix := &fileIndex{}
	data, ok := strings.CutPrefix(data, indexHeader)
	if !ok {
		return nil, errIndex
	}
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			ok = false
		}
		return n
	}
	for ln := range strings.Lines(data) {
		fs := strings.Split(strings.TrimSuffix(ln, "\n"), "\t")
		switch {
		case (fs[0] == "zst" || fs[0] == "toml") && len(fs) == 3:
			ix.size, ix.plain = num(fs[1]), fs[0] == "toml"
			sum, err := strconv.ParseUint(fs[2], 16, 32)
			ix.sum, ok = uint32(sum), ok && err == nil
		case fs[0] == "head" && len(fs) == 3:
			ix.head = [2]int{num(fs[1]), num(fs[2])}
		case len(fs) == 12:
			e := indexEntry{off: num(fs[0]), end: num(fs[1]), lo: num(fs[2]), hi: num(fs[3]), name: fs[4], op: fs[5], gpu: fs[6],
				fabric: undash(fs[7]), engine: undash(fs[8]), version: undash(fs[9]), origin: fs[11]}
			if e.off < 0 || e.end < e.off || e.lo < 0 || e.hi < e.lo {
				return nil, errIndex
			}
			if fs[10] != "" {
				for kv := range strings.SplitSeq(fs[10], " ") {
					k, v, _ := strings.Cut(kv, "=")
					if !e.keys.set(k, v) {
						return nil, fmt.Errorf("%w: key %q", errIndex, kv)
					}
				}
			}
			ix.tables = append(ix.tables, e)
		default:
			return nil, errIndex
		}
		if !ok {
			return nil, errIndex
		}
	}
	return ix, nil
}

// set sets the key of TOML name to v; false for an unknown name or an
// integer key whose value is not one.
func (k *Keys) set(name, v string) bool {
	var p *int
	switch name {
	case "dtype":
		k.Dtype = v
	case "kv_dtype":
		k.KVDtype = v
	case "impl":
		k.Impl = v
	case "mode":
		k.Mode = v
	case "phase":
		k.Phase = v
	case "distribution":
		k.Distribution = v
	case "experts":
		p = &k.Experts
	case "topk":
		p = &k.TopK
	case "hidden":
		p = &k.Hidden
	case "inter":
		p = &k.Inter
	case "kv_lora_rank":
		p = &k.KVLoRARank
	case "qk_rope_dim":
		p = &k.QKRopeDim
	case "q_lora_rank":
		p = &k.QLoRARank
	case "qk_nope_dim":
		p = &k.QKNopeDim
	case "v_head_dim":
		p = &k.VHeadDim
	case "head_dim":
		p = &k.HeadDim
	case "window":
		p = &k.Window
	default:
		return false
	}
	if p == nil {
		return true
	}
	n, err := strconv.Atoi(v)
	*p = n
	return err == nil
}

// ---- lazy tables ----

// lazyOps are the ops whose tables an indexed embedded calibration reads
// on first use (kernels' Lazy constructors, which build on a lookup that
// matches their keys); the others (collectives, EP, elementwise: a
// hundredth of the rows, and tables any lookup of their op reads) are
// read when it is opened.
func lazyOp(op string) bool {
	switch Op(op) {
	case OpGEMM, OpMoE, OpGQA, OpMLA, OpPrefill:
		return true
	}
	return false
}

// lazySrc is an indexed embedded calibration: the file (a plain one's
// bytes, a compressed one's reader: its frames are read one at a time)
// and its head's text, and the text of the frame decompressed last (the
// tables a scenario reads come in neighbours: one MoE shape's routings).
type lazySrc struct {
	z     []byte // a plain file (TOML): each frame is z itself
	plain bool
	r     io.ReaderAt // a compressed file, of size bytes
	size  int
	head  []byte

	mu   sync.Mutex
	last [2]int
	text []byte
}

// frame is the decompressed frame of e; read-only.
func (s *lazySrc) frame(e indexEntry) ([]byte, error) {
	if s.plain {
		if e.hi > len(s.z) {
			return nil, errIndex
		}
		return s.z, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.text != nil && s.last == [2]int{e.off, e.end} {
		return s.text, nil
	}
	z, err := readAt(s.r, s.size, e.off, e.end)
	if err != nil {
		return nil, err
	}
	t, err := decodeFrame(z, nil)
	if err != nil {
		return nil, err
	}
	if e.hi > len(t) {
		return nil, errIndex
	}
	s.last, s.text = [2]int{e.off, e.end}, t
	return t, nil
}

// lazyTable is where a table read on first use lies (Table.lazy).
type lazyTable struct {
	src *lazySrc
	e   indexEntry
}

// load reads the table alone (its head and its frame) as file name,
// checked as Parse checks it, with its effective provenance; the table
// must be the one the index names.
func (l *lazyTable) load(name string) (*Table, Provenance, error) {
	fr, err := l.src.frame(l.e)
	if err != nil {
		return nil, Provenance{}, fmt.Errorf("%s: table %q: %w", name, l.e.name, err)
	}
	text := make([]byte, 0, len(l.src.head)+l.e.hi-l.e.lo)
	text = append(append(text, l.src.head...), fr[l.e.lo:l.e.hi]...)
	f, err := parseUnbuilt(name, text)
	if err != nil {
		return nil, Provenance{}, err
	}
	if len(f.Tables) != 1 {
		return nil, Provenance{}, fmt.Errorf("%s: table %q: its frame holds %d tables: the index is stale", name, l.e.name, len(f.Tables))
	}
	t := &f.Tables[0]
	p := f.Effective(t)
	if t.Name != l.e.name || t.Op != l.e.op || t.Keys != l.e.keys || p.GPU != l.e.gpu || p.Fabric != l.e.fabric || p.Engine != l.e.engine ||
		p.EngineVersion != l.e.version || originLabel(p, t.Op) != l.e.origin {
		return nil, Provenance{}, fmt.Errorf("%s: table %q: the index is stale (it names %q)", name, t.Name, l.e.name)
	}
	return t, p, nil
}

// indexPath is the index of embedded file path (embedded/X.toml.zst,
// embedded/calibgpu/X.toml): embedded/index/X.tsv,
// embedded/index/calibgpu/X.tsv.
func indexPath(path string) string {
	p := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(path, "embedded/"), ".zst"), ".toml")
	return "embedded/index/" + p + ".tsv"
}

// embeddedIndexed opens the embedded calibration file path as name from
// its index: the tables of the lazy ops are stubs (name, op, keys, GPU
// and fabric; Table.lazy says where the rest lies), the others are read
// now. It returns (nil, nil) when the file or its index is missing or the
// index is not the file's (then the caller reads the whole file).
func embeddedIndexed(name, path string) (*File, error) {
	idx, err := embedded.ReadFile(indexPath(path))
	if err != nil {
		return nil, nil
	}
	ix, err := parseIndex(string(idx))
	if err != nil || ix.plain != !strings.HasSuffix(path, ".zst") {
		return nil, nil
	}
	src := &lazySrc{plain: ix.plain}
	if ix.plain {
		if src.z, err = embedded.ReadFile(path); err != nil {
			return nil, nil
		}
		src.size = len(src.z)
	} else if src.r, src.size, err = embeddedAt(path); err != nil {
		return nil, nil
	}
	if sum, ok := src.sum(); !ok || ix.size != src.size || ix.head[1] > src.size || ix.sum != sum {
		return nil, nil
	}
	var head []byte
	if ix.plain {
		head = src.z[ix.head[0]:ix.head[1]:ix.head[1]]
	} else if z, err := readAt(src.r, src.size, ix.head[0], ix.head[1]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	} else if head, err = decodeFrame(z, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	src.head = head
	text := slices.Clone(head)
	for _, e := range ix.tables {
		if !lazyOp(e.op) {
			fr, err := src.frame(e)
			if err != nil {
				return nil, fmt.Errorf("%s: table %q: %w", name, e.name, err)
			}
			text = append(text, fr[e.lo:e.hi]...)
		}
	}
	ef, err := parseUnbuilt(name, text)
	if err != nil {
		return nil, err
	}
	tables := make([]Table, 0, len(ix.tables))
	j := 0
	for _, e := range ix.tables {
		if lazyOp(e.op) {
			tables = append(tables, Table{Name: e.name, Op: e.op, Keys: e.keys,
				Provenance: Provenance{GPU: e.gpu, Fabric: e.fabric}, lazy: &lazyTable{src: src, e: e}})
			continue
		}
		if j >= len(ef.Tables) || ef.Tables[j].Name != e.name {
			return nil, fmt.Errorf("%s: table %q: the index is stale", name, e.name)
		}
		tables = append(tables, ef.Tables[j])
		j++
	}
	if j != len(ef.Tables) {
		return nil, fmt.Errorf("%s: the index is stale", name)
	}
	return &File{Schema: ef.Schema, Provenance: ef.Provenance, Tables: tables, Name: name}, nil
}
