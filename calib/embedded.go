package calib

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The embedded calibrations are built by the perfdb importer from
// ai-dynamo/aiconfigurator @ 095f58a, aic-core/src/aiconfigurator_core/systems/
// (kept outside the repo, at the path the go:generate lines below read:
//
//	git --git-dir=MIRROR archive 095f58a aic-core/src/aiconfigurator_core/systems |
//	  tar -x -C ../shared/data/aiconfigurator --exclude='*/silicon_sample.csv'
//
// from the repository root, MIRROR a clone of ai-dynamo/aiconfigurator);
// TestEmbeddedTreeUpToDate re-imports them and fails when they differ.
// Regenerate with `go generate ./calib` (from the repository root).
//
// Every GPU (A100 SXM, H100 SXM, H200 SXM, B200 SXM, B300 SXM, GB200,
// GB300 and the RTX PRO 6000 Server Edition) is imported from the parquet
// tree itself
// (systems/data/<system>/<op>/<framework>/<version>/*.parquet of the same
// commit, extracted into the shared data folder at
// ../../shared/data/aiconfigurator), the newest version of each table, and
// stored zstd-compressed (`-o X.toml.zst` compresses). H100, H200 and B200
// moved from the CSV snapshot to the tree for its MoE shapes beyond
// hidden 7168 / inter 2048 (gpt-oss, Qwen3, GLM) and its mxfp4 rows:
//
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu a100-sxm -o embedded/a100-sxm.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu h100-sxm -o embedded/h100-sxm.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu h200-sxm -o embedded/h200-sxm.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu b200-sxm -o embedded/b200-sxm.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu b300-sxm -o embedded/b300-sxm.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu gb200 -o embedded/gb200.toml.zst
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu gb300 -o embedded/gb300.toml.zst
//
// The RTX PRO 6000 moved from the CSV snapshot of the perf database
// (../../shared/data/perfdb: DeepSeek-shaped MoE rows only) to the tree for
// its MoE shapes of the other models (Qwen3, gpt-oss, GLM, MiniMax), its
// prefill and decode attention rows:
//
//go:generate go run ../cmd/moecast calib import perfdb ../../shared/data/aiconfigurator --gpu rtx-pro-6000-server -o embedded/rtx-pro-6000-server.toml.zst
//
// Each .toml.zst is written in frames of whole tables and indexed in
// embedded/index/<gpu>.tsv (frames.go; EmbeddedTables reads a table on
// its first lookup):
//
//go:generate go test -run TestEmbeddedIndex -update .

// A GPU may also have embedded/calibgpu/<gpu>.toml, written by `moecast
// calib gpu` on that GPU (docs/calibration.md, "Embedded calibrations"):
// Embedded merges it under the perf database's file (Prefer): the
// engine-measured tables answer first, calib gpu's tables fill the gaps,
// and each of those carries its measured bias against the engine rows.
//
//go:embed embedded
var embedded embed.FS

var (
	embMu    sync.Mutex
	embCache = map[string]*File{}
	// tabCache holds EmbeddedTables' files of indexed calibrations
	tabCache = map[string]*File{}
	// tabOpening holds EmbeddedTables' opens in flight, by GPU: the
	// calibrations of several GPUs open at once (a plan's), each once
	tabOpening = map[string]*tabOpen{}
)

// tabOpen is one EmbeddedTables open in flight: done is closed when f
// and err are set.
type tabOpen struct {
	done chan struct{}
	f    *File
	err  error
}

// EmbeddedNames lists the GPUs with an embedded calibration.
func EmbeddedNames() []string {
	ents, _ := fs.ReadDir(embedded, "embedded")
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".zst"), ".toml"))
		}
	}
	sort.Strings(out)
	return out
}

// Embedded returns the calibration built into moecast for a GPU preset
// ("h200-sxm"), or (nil, nil) when there is none. Files are parsed once
// and shared: treat the result as read-only.
func Embedded(gpu string) (*File, error) {
	embMu.Lock()
	defer embMu.Unlock()
	return embeddedLocked(gpu)
}

// EmbeddedTables is Embedded for lookups (Select, KernelTables,
// CommTables): the same tables, answering the same, but the GEMM, MoE,
// GQA, MLA and prefill tables (99% of the rows) are read on their first
// lookup that matches their keys, from the embedded file's own zstd
// frames, through its index (see frames.go): a scenario reads the few it
// asks for. Those tables are
// stubs in the returned File's Tables: name, op, keys and, in their
// provenance, GPU and fabric only, no columns nor rows; and the calib gpu
// tables merged in carry no proxy bias line. Everything else that reads
// a calibration file (calib show, coverage, Stack, Write) wants Embedded.
// Files are opened once and shared: treat the result as read-only.
// The files of different GPUs open concurrently (a plan opens each GPU's
// on its own goroutine); a second caller for the same GPU waits for the
// first's.
func EmbeddedTables(gpu string) (*File, error) {
	embMu.Lock()
	if f, ok := embCache[gpu]; ok {
		embMu.Unlock()
		return f, nil
	}
	if f, ok := tabCache[gpu]; ok {
		embMu.Unlock()
		return f, nil
	}
	if strings.ContainsAny(gpu, `/\`) || gpu == "" {
		embMu.Unlock()
		return nil, nil
	}
	o, busy := tabOpening[gpu]
	if !busy {
		o = &tabOpen{done: make(chan struct{})}
		tabOpening[gpu] = o
	}
	embMu.Unlock()
	if busy {
		<-o.done
	} else {
		o.f, o.err = embeddedTablesParse(gpu)
		embMu.Lock()
		if o.f != nil && o.err == nil {
			tabCache[gpu] = o.f
		}
		delete(tabOpening, gpu)
		embMu.Unlock()
		close(o.done)
	}
	if o.err != nil {
		return nil, o.err
	}
	if o.f == nil { // no index: the whole file
		embMu.Lock()
		defer embMu.Unlock()
		return embeddedLocked(gpu)
	}
	return o.f, nil
}

// embeddedTablesParse opens EmbeddedTables' file of gpu, built; (nil,
// nil) when gpu has no index.
func embeddedTablesParse(gpu string) (*File, error) {
	// An index that does not fit its file (TestEmbeddedIndex fails then)
	// is ignored: the caller reads the whole file, which reports what is
	// wrong with it, if anything.
	f, err := embeddedIndexed("embedded:"+gpu, "embedded/"+gpu+".toml.zst")
	if err != nil || f == nil {
		return nil, nil
	}
	mpath, mname := "embedded/calibgpu/"+gpu+".toml", "embedded:"+gpu+" (calib gpu)"
	if m, err := embedded.ReadFile(mpath); err == nil {
		mf, err := embeddedIndexed(mname, mpath)
		if err != nil || mf == nil {
			mf, err = Parse(mname, m)
		}
		if err != nil {
			return nil, err
		}
		if f, err = prefer("embedded:"+gpu, f, mf, false); err != nil {
			return nil, err
		}
		for i := range f.Tables {
			t := &f.Tables[i]
			t.line, t.rowLines, t.src, t.loo = 0, nil, "", nil
			t.Provenance.Corrections = slices.Clip(t.Provenance.Corrections)
		}
	}
	f.deferred, f.embedded = true, true
	if err := f.build(); err != nil {
		return nil, err
	}
	return f, nil
}

func embeddedLocked(gpu string) (*File, error) {
	if f, ok := embCache[gpu]; ok {
		return f, nil
	}
	if strings.ContainsAny(gpu, `/\`) || gpu == "" {
		return nil, nil
	}
	data, err := embeddedFile(gpu)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("embedded calibration %s: %w", gpu, err)
	}
	f, err := embeddedParse(gpu, data, true)
	if err != nil {
		return nil, err
	}
	embCache[gpu] = f
	return f, nil
}

// embeddedParse reads the embedded calibration of gpu (its perf-database
// file, data) and merges its calib gpu file into it when there is one.
// deferred builds the MoE, GQA and GDN curves on first use (Embedded); the
// tests build them eagerly and compare.
func embeddedParse(gpu string, data []byte, deferred bool) (*File, error) {
	// Checked but not built: the file is built once, after the merge (the
	// perf database's tables are the same tables in the merged file;
	// building them twice cost a fifth of the cold load).
	f, err := parseUnbuilt("embedded:"+gpu, data)
	if err != nil {
		return nil, err
	}
	m, err := embedded.ReadFile("embedded/calibgpu/" + gpu + ".toml")
	if err != nil {
		f.deferred, f.embedded = deferred, true
		if err := f.build(); err != nil {
			return nil, err
		}
		return f, nil
	}
	mf, err := Parse("embedded:"+gpu+" (calib gpu)", m)
	if err != nil {
		return nil, err
	}
	// the perf database measured the engines themselves: its tables
	// answer first and calib gpu's fill the gaps (Prefer)
	if f, err = prefer("embedded:"+gpu, f, mf, true); err != nil {
		return nil, err
	}
	f.deferred, f.embedded = deferred, true
	return f.assemble(true)
}

// Open resolves a calibration reference: "embedded:NAME" or a file path.
func Open(ref string) (_ *File, err error) {
	defer asInput(&err)
	if name, ok := strings.CutPrefix(ref, "embedded:"); ok {
		f, err := Embedded(name)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, fmt.Errorf("no embedded calibration %q (have: %s)", name, strings.Join(EmbeddedNames(), ", "))
		}
		return f, nil
	}
	return Load(ref)
}

// OpenTables is Open for lookups: an embedded reference is opened with
// EmbeddedTables.
func OpenTables(ref string) (*File, error) {
	if name, ok := strings.CutPrefix(ref, "embedded:"); ok {
		f, err := EmbeddedTables(name)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, fmt.Errorf("no embedded calibration %q (have: %s)", name, strings.Join(EmbeddedNames(), ", "))
		}
		return f, nil
	}
	return Load(ref)
}

// embeddedFile is the perf-database calibration of gpu: embedded/<gpu>.toml,
// or embedded/<gpu>.toml.zst decompressed (the parquet imports of whole
// systems, 6 MB of TOML each, are kept zstd-compressed).
func embeddedFile(gpu string) ([]byte, error) {
	data, err := embedded.ReadFile("embedded/" + gpu + ".toml")
	if !errors.Is(err, fs.ErrNotExist) {
		return data, err
	}
	z, err := embedded.ReadFile("embedded/" + gpu + ".toml.zst")
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	// The frames carry no content size (written as a stream), so the
	// decoder would grow its output from nothing, copying ~2x the text; the
	// embedded files decompress to 4.3-4.6x their size.
	return dec.DecodeAll(z, make([]byte, 0, 5*len(z)))
}
