package calib

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/golden"
	"github.com/moecast/moecast/kernels"
)

// indexedNames are the embedded calibrations kept zstd-compressed, each
// with its index.
func indexedNames(t *testing.T) []string {
	var out []string
	for _, gpu := range EmbeddedNames() {
		if _, err := embedded.ReadFile("embedded/" + gpu + ".toml.zst"); err == nil {
			out = append(out, gpu)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// indexedFiles are the embedded files with an index: the compressed
// calibrations and the calib gpu files.
func indexedFiles(t *testing.T) []string {
	var out []string
	for _, gpu := range indexedNames(t) {
		out = append(out, "embedded/"+gpu+".toml.zst")
	}
	ents, err := embedded.ReadDir("embedded/calibgpu")
	require.NoError(t, err)
	for _, e := range ents {
		out = append(out, "embedded/calibgpu/"+e.Name())
	}
	return out
}

// TestEmbeddedIndex: every compressed embedded calibration is written in
// frames of whole tables, and its index (embedded/index/<gpu>.tsv), as the
// index of each calib gpu file (embedded/index/calibgpu/<gpu>.tsv), is the
// one makeIndex makes of it. With -update (go generate ./calib runs it
// after the imports) it re-encodes each compressed file as encodeFrames
// writes it (the text unchanged) and writes the indexes.
func TestEmbeddedIndex(t *testing.T) {
	for _, zpath := range indexedFiles(t) {
		t.Run(zpath, func(t *testing.T) {
			plain := !strings.HasSuffix(zpath, ".zst")
			ipath := indexPath(zpath)
			name := "embedded:" + zpath
			z, err := os.ReadFile(zpath)
			require.NoError(t, err)
			if golden.Updating() && !plain {
				text, err := decodeFrame(z, nil)
				require.NoError(t, err)
				nz, err := encodeFrames(text)
				require.NoError(t, err)
				if !bytes.Equal(nz, z) {
					back, err := decodeFrame(nz, nil)
					require.NoError(t, err)
					require.True(t, bytes.Equal(text, back), "re-encoding changed the text")
					require.NoError(t, os.WriteFile(zpath, nz, 0o644))
					z = nz
				}
			}
			if golden.Updating() {
				ix, err := makeIndex(name, z, plain)
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(filepath.Dir(ipath), 0o755))
				require.NoError(t, os.WriteFile(ipath, ix.encode(), 0o644))
				return
			}
			ix, err := makeIndex(name, z, plain)
			require.NoError(t, err, "run go test ./calib -run TestEmbeddedIndex -update")
			want, err := os.ReadFile(ipath)
			require.NoError(t, err, "run go test ./calib -run TestEmbeddedIndex -update")
			if !bytes.Equal(want, ix.encode()) {
				t.Fatalf("%s is stale: run go test ./calib -run TestEmbeddedIndex -update and review the diff", ipath)
			}
			back, err := parseIndex(string(want))
			require.NoError(t, err)
			assert.Equal(t, ix, back, "the index reads back")
		})
	}
}

// TestEmbeddedIndexed: EmbeddedTables' file of every indexed GPU holds the
// tables of Embedded's (eagerly built, rows parsed from the whole text), in
// the same order, with the same names, ops, keys, GPU and fabric; its
// tables read now are Embedded's; each stub, once looked up, is built from
// the same rows as Embedded's table (the same leave-one-out error, MoE
// series and monotone envelope); and Select takes the same tables from
// both.
func TestEmbeddedIndexed(t *testing.T) {
	for _, gpu := range indexedNames(t) {
		t.Run(gpu, func(t *testing.T) {
			data, err := embeddedFile(gpu)
			require.NoError(t, err)
			eager, err := embeddedParse(gpu, data, false)
			require.NoError(t, err)
			lazy, err := embeddedTablesParse(gpu)
			require.NoError(t, err)
			require.NotNil(t, lazy)
			require.Equal(t, len(eager.Tables), len(lazy.Tables))
			stubs := 0
			for i := range eager.Tables {
				e, l := &eager.Tables[i], &lazy.Tables[i]
				require.Equal(t, e.Name, l.Name)
				assert.Equal(t, e.Op, l.Op, e.Name)
				assert.Equal(t, e.Keys, l.Keys, e.Name)
				ep, lp := eager.Effective(e), lazy.Effective(l)
				assert.Equal(t, [2]string{ep.GPU, ep.Fabric}, [2]string{lp.GPU, lp.Fabric}, e.Name)
				if l.lazy == nil {
					assert.Equal(t, e.Columns, l.Columns, e.Name)
					assert.Equal(t, e.Rows, l.Rows, e.Name)
					if !strings.Contains(lazy.Name, "calib gpu") {
						assert.Equal(t, ep.Source, lp.Source, e.Name)
					}
				} else {
					stubs++
					assert.True(t, lazyOp(l.Op), e.Name)
					assert.Nil(t, l.Rows, e.Name)
					tb, p, err := l.lazy.load(lazy.Name)
					require.NoError(t, err, e.Name)
					assert.Equal(t, e.Rows, tb.Rows, e.Name)
					assert.Equal(t, e.Columns, tb.Columns, e.Name)
					// the eager build adds the envelope's correction
					ep.Corrections, p.Corrections = nil, nil
					assert.Equal(t, ep, p, e.Name)
				}
				require.NotNil(t, l.loo, e.Name)
				eo, eok := originOf(e.loo)
				lo, lok := originOf(l.loo)
				assert.Equal(t, eok, lok, e.Name)
				assert.Equal(t, eo, lo, "%s: origin (source policy)", e.Name)
				ea, en := e.loo.LOOError()
				la, ln := l.loo.LOOError() // builds a stub
				assert.Equal(t, [2]float64{ea, float64(en)}, [2]float64{la, float64(ln)}, "%s: LOO error", e.Name)
				type serieser interface {
					Series() ([][2]int, []float64, []float64, []int)
				}
				if em, ok := e.loo.(serieser); ok {
					a1, a2, a3, a4 := em.Series()
					b1, b2, b3, b4 := l.loo.(serieser).Series()
					assert.Equal(t, []any{a1, a2, a3, a4}, []any{b1, b2, b3, b4}, "%s: series", e.Name)
					type raiser interface{ Raised() []int }
					assert.Equal(t, e.loo.(raiser).Raised(), l.loo.(raiser).Raised(), "%s: envelope", e.Name)
				}
			}
			assert.Positive(t, stubs)
			box := Box{GPU: eager.Provenance.GPU, Fabric: eager.Effective(&eager.Tables[0]).Fabric, GPUs: 8}
			if box.GPU == "" {
				box.GPU = gpu
			}
			assert.Equal(t, Select(box, eager).Uses, Select(box, lazy).Uses)
		})
	}
}

// TestIndexRoundTrip: an index line keeps every key (each string and
// integer key of Keys, as eachSet names them), an empty fabric and
// engine, and a malformed line is refused.
func TestIndexRoundTrip(t *testing.T) {
	k := Keys{Dtype: "fp8_block", KVDtype: "fp8", Impl: "vllm", Mode: "graph", Phase: "dispatch", Distribution: "power_law_1.2",
		Experts: 256, TopK: 8, Hidden: 7168, Inter: 2048, KVLoRARank: 512, QKRopeDim: 64, QLoRARank: 1536,
		QKNopeDim: 128, VHeadDim: 128, HeadDim: 192, Window: 128}
	n := 0
	k.eachSet(func(string, string) { n++ }, func(string, int) { n++ })
	require.Equal(t, 17, n, "every key is set: a new key must be added to Keys.set")
	ix := &fileIndex{size: 100, sum: 0xdeadbeef, head: [2]int{0, 10}, tables: []indexEntry{
		{off: 10, end: 60, lo: 0, hi: 300, name: "a", op: "moe", gpu: "h200-sxm", fabric: "nvlink4", engine: "vllm", version: "0.24.0",
			origin: "perfdb vllm 0.24.0 moe rows", keys: k},
		{off: 60, end: 100, lo: 0, hi: 200, name: "b", op: "elementwise", gpu: "h200-sxm", origin: "elementwise rows"},
	}}
	back, err := parseIndex(string(ix.encode()))
	require.NoError(t, err)
	assert.Equal(t, ix, back)
	for _, bad := range []string{"", "zst\t1\t0\n", indexHeader + "zst\tx\t0\n", indexHeader + "zst\t1\n", indexHeader + "zst\t1\tzz\n", indexHeader + "1\t2\t3\t4\ta\tmoe\tg\t-\t-\t-\tcolor=red\tx\n",
		indexHeader + "1\t2\t3\t4\ta\tmoe\tg\t-\t-\t-\texperts=x\tx\n", indexHeader + "2\t1\t3\t4\ta\tmoe\tg\t-\t-\t-\t\tx\n"} {
		_, err := parseIndex(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// TestEmbeddedTablesUnindexed: every embedded GPU's calibration is
// indexed; the whole-file path (embeddedLocked, taken when an index does
// not fit its file) reads the same tables, every one with its rows; an
// unknown GPU gets none.
func TestEmbeddedTablesUnindexed(t *testing.T) {
	for _, gpu := range EmbeddedNames() {
		ix, err := embeddedTablesParse(gpu)
		require.NoError(t, err)
		require.NotNil(t, ix, "%s has an index", gpu)
	}
	embMu.Lock()
	f, err := embeddedLocked("rtx-pro-6000-server")
	embMu.Unlock()
	require.NoError(t, err)
	require.NotNil(t, f)
	// the indexed path itself, not EmbeddedTables: that returns the whole
	// file embeddedLocked just cached, and would compare f with itself
	ix, err := embeddedTablesParse("rtx-pro-6000-server")
	require.NoError(t, err)
	require.NotNil(t, ix)
	require.NotSame(t, f, ix)
	require.Len(t, f.Tables, len(ix.Tables))
	for i, tb := range f.Tables {
		assert.Equal(t, ix.Tables[i].Name, tb.Name)
		assert.Nil(t, tb.lazy, tb.Name)
		assert.NotEmpty(t, tb.Rows, tb.Name)
	}
	f, err = EmbeddedTables("no-such-gpu")
	require.NoError(t, err)
	assert.Nil(t, f)
	_, err = OpenTables("embedded:no-such-gpu")
	assert.ErrorContains(t, err, `no embedded calibration "no-such-gpu"`)
}

// originOf is a kernel table's source-policy origin.
func originOf(l looer) (kernels.Origin, bool) {
	switch tb := l.(type) {
	case *kernels.GEMMTable:
		return tb.Origin, true
	case *kernels.MoETable:
		return tb.Origin, true
	case *kernels.MLATable:
		return tb.Origin, true
	case *kernels.GQATable:
		return tb.Origin, true
	case *kernels.PrefillTable:
		return tb.Origin, true
	}
	return kernels.Origin{}, false
}

// TestEmbeddedTablesConcurrent: callers of EmbeddedTables for several GPUs
// at once (a plan's prefetch) each get their GPU's file, opened once (every
// caller of a GPU the same file, which later calls return too), with the
// tables a file opened alone has; a GPU without a calibration gets nil. Run
// with -race it checks that the opens share nothing unguarded.
func TestEmbeddedTablesConcurrent(t *testing.T) {
	embMu.Lock()
	savedEmb, savedTab := embCache, tabCache
	embCache, tabCache = map[string]*File{}, map[string]*File{}
	embMu.Unlock()
	t.Cleanup(func() {
		embMu.Lock()
		embCache, tabCache = savedEmb, savedTab
		embMu.Unlock()
	})
	gpus := []string{"h200-sxm", "b200-sxm", "rtx-pro-6000-server", "no-such-gpu"}
	const callers = 3
	got := make([][callers]*File, len(gpus))
	var wg sync.WaitGroup
	for i, g := range gpus {
		for c := range callers {
			wg.Go(func() {
				f, err := EmbeddedTables(g)
				assert.NoError(t, err, g)
				got[i][c] = f
			})
		}
	}
	wg.Wait()
	for i, g := range gpus {
		if g == "no-such-gpu" {
			assert.Equal(t, [callers]*File{}, got[i])
			continue
		}
		f := got[i][0]
		require.NotNil(t, f, g)
		for c := range callers {
			assert.Same(t, f, got[i][c], "%s: caller %d got another file", g, c)
		}
		again, err := EmbeddedTables(g)
		require.NoError(t, err)
		assert.Same(t, f, again, g)
		alone, err := embeddedTablesParse(g)
		require.NoError(t, err)
		require.Len(t, f.Tables, len(alone.Tables), g)
		for k := range alone.Tables {
			assert.Equal(t, alone.Tables[k].Name, f.Tables[k].Name, g)
		}
	}
	embMu.Lock()
	assert.Empty(t, tabOpening, "opens left in flight")
	embMu.Unlock()
}

// TestEmbeddedAt: an embedded calibration read at offsets (embeddedAt,
// readAt, lazySrc.sum) gives the bytes and the checksum of the file
// ReadFile copies, and a range outside the file is errIndex.
func TestEmbeddedAt(t *testing.T) {
	for _, gpu := range EmbeddedNames() {
		path := "embedded/" + gpu + ".toml.zst"
		z, err := embedded.ReadFile(path)
		require.NoError(t, err)
		r, size, err := embeddedAt(path)
		require.NoError(t, err)
		require.Equal(t, len(z), size, gpu)
		sum, ok := (&lazySrc{r: r, size: size}).sum()
		require.True(t, ok, gpu)
		assert.Equal(t, fileSum(z), sum, gpu)
		for _, span := range [][2]int{{0, 0}, {0, 433}, {size / 3, size/3 + 70000}, {size - 5, size}} {
			b, err := readAt(r, size, span[0], span[1])
			require.NoError(t, err, "%s %v", gpu, span)
			assert.True(t, bytes.Equal(z[span[0]:span[1]], b), "%s %v", gpu, span)
		}
		for _, span := range [][2]int{{size - 5, size + 1}, {-1, 3}, {7, 6}} {
			_, err := readAt(r, size, span[0], span[1])
			assert.ErrorIs(t, err, errIndex, "%s %v", gpu, span)
		}
	}
	_, _, err := embeddedAt("embedded/no-such-gpu.toml.zst")
	assert.Error(t, err)
}
