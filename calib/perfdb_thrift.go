package calib

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// checkThriftStruct walks one struct of Thrift's compact protocol (the
// encoding of a parquet file's footer, apache/thrift
// doc/specs/thrift-compact-protocol.md) and checks that every list, set,
// map and binary value claims no more elements or bytes than remain in b:
// each element takes at least one byte, so a valid footer never does.
// parquet-go preallocates a list's claimed length before decoding it (a
// 4 KB file whose footer claims a list of 2^31 strings would allocate 32
// GB), so the footer is walked first. It returns the bytes the struct
// took.
func checkThriftStruct(b []byte, depth int) (int, error) {
	return walkThriftStruct(b, depth, nil)
}

// walkThriftStruct is checkThriftStruct calling visit, when not nil, with
// each field's id, compact type and value bytes.
func walkThriftStruct(b []byte, depth int, visit func(id int64, typ byte, v []byte)) (int, error) {
	if depth > maxThriftDepth {
		return 0, errThriftDepth
	}
	off := 0
	var id int64
	for {
		if off >= len(b) {
			return 0, errors.New("footer ends inside a struct")
		}
		h := b[off]
		off++
		typ := h & 0x0f
		if typ == 0 { // stop
			return off, nil
		}
		if d := h >> 4; d != 0 { // short form: the id's delta
			id += int64(d)
		} else { // long form: the field id follows as a zigzag varint
			v, n := binary.Varint(b[off:])
			if n <= 0 {
				return 0, errors.New("footer: bad field id")
			}
			id = v
			off += n
		}
		n, err := checkThriftValue(b[off:], typ, depth)
		if err != nil {
			return 0, err
		}
		if visit != nil {
			visit(id, typ, b[off:off+n])
		}
		off += n
	}
}

// maxParquetPage bounds a page's uncompressed size, which the reader
// allocates before inflating it: the perf database's pages are a few MB.
const maxParquetPage = 64 << 20

// checkParquetPages walks the page headers of every column chunk md
// names (thrift, as the footer) and checks that each header's strings and
// lists fit in its chunk, that each page's compressed bytes do, and that
// its uncompressed size is at most maxParquetPage: parquet-go allocates
// what a page header claims (a statistics value's length, the inflated
// page) before reading it. Then checkPage checks each page's contents.
func checkParquetPages(ra io.ReaderAt, size int64, pf *parquet.File) error {
	md := pf.Metadata()
	var leaves []*parquet.Column
	var walk func(c *parquet.Column)
	walk = func(c *parquet.Column) {
		if c.Leaf() {
			leaves = append(leaves, c)
		}
		for _, ch := range c.Columns() {
			walk(ch)
		}
	}
	walk(pf.Root())
	for i, rg := range md.RowGroups {
		for j, cc := range rg.Columns {
			if j >= len(leaves) || leaves[j].Index() != j {
				return fmt.Errorf("row group %d, column %d: not a column of the schema's %d", i+1, j+1, len(leaves))
			}
			m := cc.MetaData
			start, n := m.DataPageOffset, m.TotalCompressedSize
			if d := m.DictionaryPageOffset; d > 0 && d < start {
				start = d
			}
			if start < 4 || n < 0 || start > size-8 || n > size-8-start {
				return fmt.Errorf("row group %d, column %d: its pages (%d bytes at byte %d) lie outside the file's %d bytes", i+1, j+1, n, start, size)
			}
			chunk := make([]byte, n)
			if _, err := ra.ReadAt(chunk, start); err != nil {
				return err
			}
			for off := 0; off < len(chunk); {
				var comp, uncomp int64 = -1, -1
				h, err := walkThriftStruct(chunk[off:], 0, func(id int64, typ byte, v []byte) {
					if typ != 5 { // i32
						return
					}
					x, _ := binary.Varint(v)
					switch id {
					case 2:
						uncomp = x
					case 3:
						comp = x
					}
				})
				switch {
				case err != nil:
					return fmt.Errorf("row group %d, column %d, page at byte %d: %v", i+1, j+1, start+int64(off), strings.Replace(err.Error(), "footer", "page header", 1))
				case comp < 0 || comp > int64(len(chunk)-off-h):
					return fmt.Errorf("row group %d, column %d, page at byte %d: %d compressed bytes claimed, %d remain in the column chunk", i+1, j+1, start+int64(off), comp, len(chunk)-off-h)
				case uncomp < 0 || uncomp > maxParquetPage:
					return fmt.Errorf("row group %d, column %d, page at byte %d: %d bytes uncompressed claimed, want at most %d", i+1, j+1, start+int64(off), uncomp, maxParquetPage)
				}
				var ph format.PageHeader
				if _, err := guarded(func() (int, error) {
					return 0, thrift.Unmarshal(new(thrift.CompactProtocol), chunk[off:off+h], &ph)
				}); err != nil {
					return fmt.Errorf("row group %d, column %d, page at byte %d: page header: %v", i+1, j+1, start+int64(off), err)
				}
				if _, err := guarded(func() (int, error) {
					return 0, checkPage(&ph, chunk[off+h:off+h+int(comp)], leaves[j], m.Type)
				}); err != nil {
					return fmt.Errorf("row group %d, column %d (%s), page at byte %d: %v", i+1, j+1, strings.Join(leaves[j].Path(), "."), start+int64(off), err)
				}
				off += h + int(comp)
			}
		}
	}
	return nil
}

// maxThriftDepth bounds the nesting of structs, lists, sets and maps in
// a footer or page header (a parquet file's own nest a few deep): each
// level is a frame of the walk, and a footer of nested one-element lists
// one byte each would otherwise recurse once per byte (a 16 MB file
// overflowed the goroutine stack, a fatal error rather than a panic).
const maxThriftDepth = 64

var errThriftDepth = fmt.Errorf("footer nested more than %d deep", maxThriftDepth)

// checkThriftValue checks one value of compact type typ at the start of b
// and returns its length; depth is the nesting of the struct or container
// holding it.
func checkThriftValue(b []byte, typ byte, depth int) (int, error) {
	switch typ {
	case 1, 2: // a struct field's booleans live in the header
		return 0, nil
	case 3: // byte
		if len(b) < 1 {
			return 0, errors.New("footer ends inside a byte")
		}
		return 1, nil
	case 4, 5, 6: // i16, i32, i64: varints
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errors.New("footer: bad integer")
		}
		return n, nil
	case 7: // double
		if len(b) < 8 {
			return 0, errors.New("footer ends inside a double")
		}
		return 8, nil
	case 8: // binary: varint length, then the bytes
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return 0, fmt.Errorf("footer: a string claims %d bytes, %d remain", l, len(b)-max(n, 0))
		}
		return n + int(l), nil
	case 9, 10: // list, set: size and element type, then the elements
		if depth >= maxThriftDepth {
			return 0, errThriftDepth
		}
		if len(b) < 1 {
			return 0, errors.New("footer ends inside a list")
		}
		size, elem, off := uint64(b[0]>>4), b[0]&0x0f, 1
		if size == 15 {
			l, n := binary.Uvarint(b[1:])
			if n <= 0 {
				return 0, errors.New("footer: bad list size")
			}
			size, off = l, 1+n
		}
		if size > uint64(len(b)-off) {
			return 0, fmt.Errorf("footer: a list claims %d elements, %d bytes remain", size, len(b)-off)
		}
		for range size {
			var n int
			var err error
			if elem == 1 || elem == 2 { // a list's booleans take a byte each
				n, err = checkThriftValue(b[off:], 3, depth+1)
			} else {
				n, err = checkThriftValue(b[off:], elem, depth+1)
			}
			if err != nil {
				return 0, err
			}
			off += n
		}
		return off, nil
	case 11: // map: varint size, key and value types, then the pairs
		if depth >= maxThriftDepth {
			return 0, errThriftDepth
		}
		size, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errors.New("footer: bad map size")
		}
		off := n
		if size == 0 {
			return off, nil
		}
		if off >= len(b) || size > uint64(len(b)-off-1)/2 {
			return 0, fmt.Errorf("footer: a map claims %d entries, %d bytes remain", size, len(b)-off)
		}
		kt, vt := b[off]>>4, b[off]&0x0f
		off++
		for range size {
			for _, t := range []byte{kt, vt} {
				if t == 1 || t == 2 {
					t = 3
				}
				n, err := checkThriftValue(b[off:], t, depth+1)
				if err != nil {
					return 0, err
				}
				off += n
			}
		}
		return off, nil
	case 12: // struct
		return checkThriftStruct(b, depth+1)
	}
	return 0, fmt.Errorf("footer: unknown thrift type %d", typ)
}
