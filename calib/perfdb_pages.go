package calib

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// This file checks the encoded contents of a parquet page before
// parquet-go decodes it. The library sizes its buffers by what a page
// claims: a run of the RLE/bit-packed hybrid encoding (levels, dictionary
// indices, booleans) is decoded whole, up to 2^31 values, before the page's
// num_values is compared (encoding/rle decodeInt32 and decodeBytes @
// v0.32.0), and a page's num_values sizes its value buffer
// (EstimateDecodeSize). A 4 KB page whose one-byte run header claims 2^31
// dictionary indices made the import allocate 2.85 GB and run 30-41 s
// (RESULTS-hostile11). The hybrid encoding is the parquet format's
// (apache/parquet-format Encodings.md, "Run Length Encoding / Bit-Packing
// Hybrid"): a ULEB128 header whose low bit tells a bit-packed run (header>>1
// groups of 8 values, bit-width bytes each) from an RLE run (header>>1
// repetitions of one value stored in ceil(bit-width/8) bytes).

// maxPageValues bounds the values one page may claim: it stops a header
// that claims 2^31 values from sizing the decode buffers (16 GB for
// int64s). The perf database's tables are far smaller: the largest page
// of the testdata tree (upstream files, written by parquet-cpp-arrow
// 24.0.0) holds 8,774 values, a whole GPU's import about 330,000 rows.
const maxPageValues = 1 << 20

// checkPage checks the page of header ph whose stored (compressed) bytes
// are data, in the column chunk of leaf col: its num_values, and the
// run-length streams parquet-go would decode (repetition and definition
// levels, dictionary indices, RLE booleans) against num_values and the
// bytes present, and the value counts the DELTA encodings announce; typ
// is the chunk's physical type (the leaf's logical type may be corrupt).
func checkPage(ph *format.PageHeader, data []byte, col *parquet.Column, typ format.Type) error {
	var (
		n                int
		enc              format.Encoding
		levels, compress = true, true
		rep, def         []byte // v2 pages store their levels uncompressed, apart
	)
	switch {
	case ph.Type == format.DictionaryPage && ph.DictionaryPageHeader.Valid:
		h := ph.DictionaryPageHeader.V
		n, enc, levels = int(h.NumValues), h.Encoding, false
	case ph.Type == format.DataPage && ph.DataPageHeader.Valid:
		h := ph.DataPageHeader.V
		n, enc = int(h.NumValues), h.Encoding
		if h.RepetitionLevelEncoding != format.RLE && col.MaxRepetitionLevel() > 0 ||
			h.DefinitionLevelEncoding != format.RLE && col.MaxDefinitionLevel() > 0 {
			levels = false // BIT_PACKED levels are decoded within their bytes
		}
	case ph.Type == format.DataPageV2 && ph.DataPageHeaderV2.Valid:
		h := ph.DataPageHeaderV2.V
		n, enc = int(h.NumValues), h.Encoding
		r, d := int64(h.RepetitionLevelsByteLength), int64(h.DefinitionLevelsByteLength)
		if r < 0 || d < 0 || r+d > int64(len(data)) {
			return fmt.Errorf("its levels claim %d+%d bytes, the page holds %d", r, d, len(data))
		}
		rep, def, data = data[:r], data[r:r+d], data[r+d:]
		compress = !h.IsCompressed.Valid || h.IsCompressed.V
	default:
		return nil // index pages and pages without their header: parquet-go refuses them
	}
	if n < 0 || n > maxPageValues {
		return fmt.Errorf("it claims %d values, want 0 to %d", n, maxPageValues)
	}
	if codec := col.Compression(); compress && codec != nil && codec.CompressionCodec() != format.Uncompressed {
		out, err := inflate(codec.CompressionCodec(), data, int(ph.UncompressedPageSize))
		if err != nil {
			return err
		}
		data = out
	}
	if ph.Type == format.DataPageV2 {
		for _, l := range []struct {
			name string
			b    []byte
			max  int
		}{{"repetition levels", rep, col.MaxRepetitionLevel()}, {"definition levels", def, col.MaxDefinitionLevel()}} {
			if len(l.b) > 0 && l.max > 0 {
				if err := checkRuns(l.b, uint(bits.Len(uint(l.max))), n); err != nil {
					return fmt.Errorf("its %s: %v", l.name, err)
				}
			}
		}
	} else if levels {
		for _, l := range []struct {
			name string
			max  int
		}{{"repetition levels", col.MaxRepetitionLevel()}, {"definition levels", col.MaxDefinitionLevel()}} {
			if l.max == 0 {
				continue
			}
			b, rest, err := prefixed(data)
			if err != nil {
				return fmt.Errorf("its %s: %v", l.name, err)
			}
			if err := checkRuns(b, uint(bits.Len(uint(l.max))), n); err != nil {
				return fmt.Errorf("its %s: %v", l.name, err)
			}
			data = rest
		}
	} else if ph.Type == format.DataPage {
		return nil // BIT_PACKED levels: where the values start is parquet-go's to find
	}
	return checkValues(data, enc, n, ph.Type != format.DictionaryPage, typ == format.Boolean)
}

// zstdPages decodes zstd pages to at most the capacity given (the page
// header's uncompressed size): parquet-go's DecodeAll grows its output
// past it.
var zstdPages = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderMaxMemory(maxParquetPage))
})

// inflate decompresses a page stored with codec to at most size bytes,
// the uncompressed size its header claims, for the checks: what
// parquet-go then decodes is as large. Codecs are bounded each its own
// way; LZ4_RAW and BROTLI are refused, which the perf database does not
// use and parquet-go v0.32.0 does not bound (its LZ4 decoder doubles its
// buffer until memory runs out on a corrupt block, compress/lz4/lz4.go).
func inflate(codec format.CompressionCodec, data []byte, size int) ([]byte, error) {
	switch codec {
	case format.Snappy:
		// a snappy block starts with its decoded length, which the
		// decoder allocates
		if l, k := binary.Uvarint(data); k <= 0 || l > uint64(size) {
			return nil, fmt.Errorf("its snappy block claims %d bytes, its header %d", l, size)
		}
		out, err := snappy.Decode(make([]byte, size), data)
		if err != nil {
			return nil, fmt.Errorf("decompressing it (SNAPPY): %v", err)
		}
		return out, nil
	case format.Gzip:
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("decompressing it (GZIP): %v", err)
		}
		out, err := io.ReadAll(io.LimitReader(r, int64(size)+1))
		if err != nil {
			return nil, fmt.Errorf("decompressing it (GZIP): %v", err)
		}
		if len(out) > size {
			return nil, fmt.Errorf("it decompresses (GZIP) to more than the %d bytes its header claims", size)
		}
		return out, nil
	case format.Zstd:
		d, err := zstdPages()
		if err != nil {
			return nil, err
		}
		out, err := d.DecodeAll(data, make([]byte, 0, size))
		if err != nil {
			return nil, fmt.Errorf("decompressing it (ZSTD) to at most the %d bytes its header claims: %v", size, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("its compression %v is not read here (the perf database's tables are ZSTD)", codec)
}

// checkValues checks the values of a page, encoded with enc, against the
// n values its header claims.
func checkValues(data []byte, enc format.Encoding, n int, dataPage, boolean bool) error {
	switch {
	case dataPage && (enc == format.RLEDictionary || enc == format.PlainDictionary):
		if len(data) == 0 {
			return nil
		}
		if data[0] > 32 {
			return fmt.Errorf("its dictionary indices are %d bits wide, want at most 32", data[0])
		}
		if err := checkRuns(data[1:], uint(data[0]), n); err != nil {
			return fmt.Errorf("its dictionary indices: %v", err)
		}
	case enc == format.RLE && boolean:
		b, _, err := prefixed(data)
		if err == nil {
			err = checkRuns(b, 1, n)
		}
		if err != nil {
			return fmt.Errorf("its RLE booleans: %v", err)
		}
	case enc == format.RLE: // parquet-go decodes other RLE values at bit width 0
		if err := checkRuns(data, 0, n); err != nil {
			return fmt.Errorf("its RLE values: %v", err)
		}
	case enc == format.DeltaBinaryPacked || enc == format.DeltaLengthByteArray || enc == format.DeltaByteArray:
		// block size, miniblocks per block, then the count of values,
		// which the decoder allocates
		var v [3]uint64
		off := 0
		for i := range v {
			x, k := binary.Uvarint(data[off:])
			if k <= 0 {
				return errors.New("its DELTA header is cut short")
			}
			v[i], off = x, off+k
		}
		if v[2] > uint64(n) {
			return fmt.Errorf("its DELTA header claims %d values, the page %d", v[2], n)
		}
	}
	return nil
}

// prefixed splits b into the stream its 4-byte little-endian length
// prefix announces and what follows it.
func prefixed(b []byte) (stream, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%d bytes, fewer than its 4-byte length", len(b))
	}
	l := uint64(binary.LittleEndian.Uint32(b))
	if l > uint64(len(b)-4) {
		return nil, nil, fmt.Errorf("its length claims %d bytes, %d remain", l, len(b)-4)
	}
	return b[4 : 4+l], b[4+l:], nil
}

// checkRuns walks a stream of the RLE/bit-packed hybrid encoding at bit
// width w and checks that its runs decode to at most n values and that
// every run's bytes are present. A bit-packed run holds whole groups of 8
// values, so the run that reaches n may be padded past it by up to 7
// (writers pad the last group: pyarrow's pages of the perf database end
// so); an RLE run may not pass n, and no run with values follows the one
// that reaches it.
func checkRuns(b []byte, w uint, n int) error {
	var total uint64
	for i := 0; i < len(b); {
		h, k := binary.Uvarint(b[i:])
		if k <= 0 {
			return fmt.Errorf("a bad run header at byte %d", i)
		}
		i += k
		count, need := h>>1, uint64(w+7)/8
		rem := uint64(0)
		if total < uint64(n) {
			rem = uint64(n) - total
		}
		if h&1 == 1 { // bit-packed: count groups of 8 values, w bytes each
			if count > (rem+7)/8 {
				return fmt.Errorf("a bit-packed run claims %d values after %d, the page holds %d", count*8, total, n)
			}
			count, need = count*8, count*uint64(w)
		} else if count > rem {
			return fmt.Errorf("a run claims %d values after %d, the page holds %d", count, total, n)
		}
		if need > uint64(len(b)-i) {
			return fmt.Errorf("a run of %d values needs %d bytes, %d remain", count, need, len(b)-i)
		}
		total += count
		i += int(need)
	}
	return nil
}
