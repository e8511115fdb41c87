package gpu

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/moecast/moecast/internal/cuda"
)

// Sources holds the kernel sources (*.cu) the embedded images were built
// from: w4a16.cu (the W4A16 GEMM and MoE kernels, the empty and copy
// kernels) and any other source of the package, each built into its own
// module.
//
//go:embed *.cu
var Sources embed.FS

// Source is w4a16.cu.
var Source = mustSource("w4a16")

func mustSource(stem string) []byte {
	b, err := fs.ReadFile(Sources, stem+".cu")
	if err != nil {
		panic("kernels/gpu: " + stem + ".cu is not embedded")
	}
	return b
}

// Build holds the images (<stem>.sm_XY.cubin, <stem>.compute_80.ptx for
// each source <stem>.cu) and MANIFEST, which names each source's SHA-256
// and each image's.
//
//go:embed build
var Build embed.FS

// moduleEnv overrides the embedded W4A16 images with a cubin or PTX file;
// MOECAST_<STEM>_MODULE does so for another source (moduleEnvFor).
const moduleEnv = "MOECAST_W4A16_MODULE"

// moduleEnvFor is the variable that overrides the images of stem.cu.
func moduleEnvFor(stem string) string { return "MOECAST_" + strings.ToUpper(stem) + "_MODULE" }

// Kernel constants shared with w4a16.cu.
const (
	threads = 256
	bStage  = tileK * tileN / 2
	sStage  = 1024
)

// Variant is one compiled kernel: MT m16 tiles per block (16*MT rows), a
// cp.async pipeline of Stages stages, WN warps along N (2: 64 columns a
// warp, 4: 32) and Mode (0: the kernel; modeNoDQ and modeLoadOnly are
// benchmark diagnostics whose results are wrong) and WP (warp-private
// pipelines: each warp copies and waits for its own slice of a stage).
type Variant struct {
	MT, Stages, WN, Mode int
	WP                   bool
	BN                   int // columns a tile: 128, or 256 for large batches
}

// Modes (Options.Mode). The diagnostic ones are timed by the benchmark to
// split the kernel's cost into the pipeline's, the mma's and the
// dequantisation's (their results are wrong); modeSwap is a real kernel.
const (
	modeNoDQ     = 1 // diagnostic: mma.sync on the raw weight bits, no dequantisation
	modeLoadOnly = 2 // diagnostic: the cp.async pipeline alone, no arithmetic
	// modeSwap swaps mma's operands for M <= 8: the weights are the A
	// operand (16 columns of W as its rows) and the tokens its n8 (half the
	// mma.sync and accumulators). Dense GEMMs only.
	modeSwap = 3
	// ModeFP4 reads MXFP4 weights (e2m1 codes in the nibbles, group 32,
	// power-of-two scales: RepackMXFP4) with the layouts of mode 0.
	ModeFP4 = 4
	// modeWGMMA is the large-batch tile (MT 8) on Hopper's wgmma: the
	// dequantised weights as wgmma's A operand from registers, the
	// activations its B operand from shared memory. Only in sm_90a images
	// (the embedded sm_90 cubin); Load drops it elsewhere.
	modeWGMMA = 5
	// modeWGPersist is the wgmma tile as a persistent grid (dense GEMMs,
	// whole tiles): at most one block a resident slot, each running tiles
	// b, b + blocks, ... through one pipeline, the next tile's first
	// stages loading while this one's epilogue runs. sm_90a images only.
	modeWGPersist = 6
)

// wgmmaMode says whether mode is one of the wgmma tile's (sm_90a only).
func wgmmaMode(mode int) bool { return mode == modeWGMMA || mode == modeWGPersist }

// Variants are the kernels w4a16.cu defines.
var Variants = []Variant{
	{1, 4, 2, 0, false, 128}, {2, 4, 2, 0, false, 128}, {4, 4, 2, 0, false, 128}, {1, 6, 2, 0, false, 128},
	{2, 6, 2, 0, false, 128}, {1, 4, 4, 0, false, 128}, {2, 4, 4, 0, false, 128}, {4, 4, 4, 0, false, 128},
	{1, 4, 2, modeNoDQ, false, 128}, {1, 4, 2, modeLoadOnly, false, 128},
	{1, 4, 2, 0, true, 128}, {1, 6, 2, 0, true, 128}, {2, 4, 2, 0, true, 128},
	{4, 4, 4, 0, false, 256}, {4, 3, 4, 0, false, 256},
	{1, 4, 2, modeSwap, false, 128}, {1, 4, 4, modeSwap, false, 128},
	{1, 4, 2, ModeFP4, false, 128}, {1, 4, 4, ModeFP4, false, 128}, {2, 4, 2, ModeFP4, false, 128},
	{4, 4, 2, ModeFP4, false, 128}, {4, 4, 4, ModeFP4, false, 128}, {4, 4, 4, ModeFP4, false, 256},
	{8, 4, 4, 0, false, 256}, {8, 3, 4, 0, false, 256}, {8, 4, 4, modeWGMMA, false, 256},
	{8, 4, 4, modeWGMMA, false, 128}, {8, 5, 4, modeWGMMA, false, 128},
	{4, 3, 4, modeWGMMA, false, 256}, {4, 4, 4, modeWGMMA, false, 128}, {1, 6, 2, modeSwap, false, 128},
	{8, 4, 4, modeWGPersist, false, 128}, {8, 4, 4, modeWGPersist, false, 256},
}

// bigMT is the MT of the large-batch tile (w4a16.cu's w4a16_big_segment):
// 128 rows x 256 columns a block, 8 warps as 2 along M x 4 along N of 64 x
// 64 each, no split of K inside the block. Its 4-stage kernel needs 200 KiB
// of shared memory: Load skips it where the device has less.
const bigMT = 8

// Where the default plan takes the large-batch tile (its wgmma form; the
// mma.sync form is never a default: within 3% of the 64-row tiles up to M =
// 512 on the H200, bench/gpu-w4a16-runs/run8), from runs 8 and 9 on the
// H200:
//   - dense: M >= bigRows and, in units of 128 x 256 x 128, at least
//     bigWork of work or at least SMs/2 tiles (the expert down 7168 x 2048
//     at M = 256, 56 tiles of 16 iterations, and the TP8 gate_up 512 x 7168
//     up to M = 1024 ran faster on the 64-row tiles);
//   - MoE: at least bigMoERows rows per touched expert on average (the
//     moe_align block becomes 128): 1.1-1.4x faster at 8192 tokens (171
//     rows an expert), 3-17% slower at 2048 (43, three quarters padding).
const (
	bigRows    = 256
	bigWork    = 1024
	bigMoERows = 128
	// bigNarrowRows, bigNarrowK: see bigDense.
	bigNarrowRows = 512
	bigNarrowK    = 32
)

// Name is the kernel's symbol.
func (v Variant) Name() string {
	n := fmt.Sprintf("w4a16_mt%d", v.MT)
	if v.Stages != 4 {
		n += fmt.Sprintf("_s%d", v.Stages)
	}
	if v.WN == 4 && v.BN != 256 { // 256-column tiles always have 4 warps along N
		n += "_w4"
	}
	switch v.Mode {
	case modeNoDQ:
		n += "_nodq"
	case modeLoadOnly:
		n += "_ldonly"
	case modeSwap:
		n += "_sw"
	case modeWGMMA:
		n += "_wg"
	case modeWGPersist:
		n += "_wgp"
	}
	if v.WP {
		n += "_wp"
	}
	if v.BN == 256 {
		n += "_n256"
	}
	if v.Mode == ModeFP4 {
		n += "_fp4"
	}
	return n
}

// Smem is the variant's dynamic shared memory in bytes: per stage the
// weights, scales and activations of a 128 x 128 tile (warp-private: 8
// slices of 2 KiB of weights, 128 B of scales and 32 k of the activations).
func (v Variant) Smem() int {
	if v.MT == bigMT || wgmmaMode(v.Mode) { // the pipeline, or the fp32 tile before the epilogue if larger
		n := max(v.Stages*(tileK*v.BN/2+v.BN/64*512+v.MT*16*tileK*2), 16*v.MT*(v.BN+8)*4)
		if v.Mode == modeWGPersist { // the epilogue stages bf16 in two of the pipeline's slots
			n = v.Stages * (tileK*v.BN/2 + v.BN/64*512 + v.MT*16*tileK*2)
		}
		if wgmmaMode(v.Mode) {
			n += 1024 // the kernel aligns its stages to 1 KiB (wgmma's 128-byte swizzle)
		}
		return n
	}
	if v.WP {
		return v.Stages * 8 * (2*512 + 128 + v.MT*16*64)
	}
	return v.Stages * (tileK*v.BN/2 + v.BN/64*512 + v.MT*16*tileK*2)
}

// sourceHash is the hex SHA-256 of Source.
func sourceHash() string { return hashOf(Source) }

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Stems are the embedded sources' names without ".cu", sorted.
func Stems() []string {
	entries, _ := fs.ReadDir(Sources, ".")
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".cu"); ok {
			out = append(out, n)
		}
	}
	return out
}

// Manifest reads build/MANIFEST: "<stem>.cu <sha256>" for each source and
// "<image> <sha256>" for each image.
func Manifest() (map[string]string, error) {
	b, err := fs.ReadFile(Build, "build/MANIFEST")
	if err != nil {
		return nil, fmt.Errorf("w4a16: no build manifest: %w", err)
	}
	out := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("build/MANIFEST:%d: want \"name sha256\", got %q", i+1, line)
		}
		out[f[0]] = f[1]
	}
	return out, nil
}

// Image picks the W4A16 image for a device of compute capability
// major.minor (imageFor "w4a16").
func Image(major, minor int) (name string, image []byte, err error) {
	return imageFor("w4a16", major, minor)
}

// imageFor picks the image of stem.cu for a device of compute capability
// major.minor: the cubin of the same major with the highest minor not above
// it, else the compute_80 PTX (JIT-compiled by the driver) on sm_80 and
// newer.
func imageFor(stem string, major, minor int) (name string, image []byte, err error) {
	if major < 8 {
		return "", nil, fmt.Errorf("%s: sm_%d%d: the kernels need sm_80 or newer (mma.sync bf16, cp.async)", stem, major, minor)
	}
	for m := minor; m >= 0; m-- {
		name = fmt.Sprintf("%s.sm_%d%d.cubin", stem, major, m)
		if b, err := fs.ReadFile(Build, "build/"+name); err == nil {
			return name, b, nil
		}
	}
	name = stem + ".compute_80.ptx"
	b, err := fs.ReadFile(Build, "build/"+name)
	if err != nil {
		return "", nil, fmt.Errorf("%s: no image for sm_%d%d embedded: %w", stem, major, minor, err)
	}
	return name, b, nil
}

// loadImage loads the module of stem.cu for dev into the current context:
// the file MOECAST_<STEM>_MODULE names, else the embedded image imageFor
// picks. It returns the module and the image's name or path.
func loadImage(dev cuda.Device, stem string) (cuda.Module, string, error) {
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return 0, "", err
	}
	var name string
	var img []byte
	if p := os.Getenv(moduleEnvFor(stem)); p != "" {
		name = p
		if img, err = os.ReadFile(p); err != nil {
			return 0, "", fmt.Errorf("%s: %s: %w", stem, moduleEnvFor(stem), err)
		}
	} else if name, img, err = imageFor(stem, major, minor); err != nil {
		return 0, "", err
	}
	if !bytes.HasPrefix(img, []byte("\x7fELF")) && !bytes.Contains(img[:min(len(img), 4096)], []byte(".version")) {
		return 0, "", fmt.Errorf("%s: %s is neither a cubin nor PTX", stem, name)
	}
	mod, err := cuda.LoadModule(img)
	if err != nil {
		return 0, "", fmt.Errorf("%s: load %s: %w", stem, name, err)
	}
	return mod, name, nil
}

// Module is the W4A16 kernels loaded into the current context.
type Module struct {
	mod   cuda.Module
	fn    map[Variant]cuda.Function
	empty cuda.Function // moecast_empty
	copy  cuda.Function // moecast_copy
	Image string        // the image's name or path
	SMs   int
	// PerSM is the blocks of each variant resident on one multiprocessor
	// (the driver's occupancy); 2 where unknown.
	PerSM map[Variant]int
}

// Load loads the kernels for the device into the current context (the
// caller made the device's context current on this OS thread).
func Load(dev cuda.Device) (*Module, error) {
	sms, err := dev.Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	mod, name, err := loadImage(dev, "w4a16")
	if err != nil {
		return nil, err
	}
	m := &Module{mod: mod, fn: map[Variant]cuda.Function{}, Image: name, SMs: sms, PerSM: map[Variant]int{}}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return nil, err
	}
	wgmma := hasWGMMA(major, minor, name)
	for _, v := range Variants {
		if wgmmaMode(v.Mode) && !wgmma {
			continue
		}
		f, err := mod.Function(v.Name())
		if err != nil {
			return nil, err
		}
		if err := f.SetAttribute(cuda.FuncMaxDynamicSharedMemory, v.Smem()); err != nil {
			if v.MT == bigMT || wgmmaMode(v.Mode) { // more shared memory than this device has: plans use the 64-row tiles
				continue
			}
			return nil, fmt.Errorf("w4a16: %s: %d B of shared memory: %w", v.Name(), v.Smem(), err)
		}
		n, err := f.ActiveBlocksPerSM(threads, v.Smem())
		if err != nil {
			return nil, err
		}
		if n < 1 && (v.MT == bigMT || wgmmaMode(v.Mode)) {
			continue
		}
		if n < 1 {
			return nil, fmt.Errorf("w4a16: %s does not fit on a multiprocessor", v.Name())
		}
		m.fn[v], m.PerSM[v] = f, n
	}
	if m.empty, err = mod.Function("moecast_empty"); err != nil {
		return nil, err
	}
	if m.copy, err = mod.Function("moecast_copy"); err != nil {
		return nil, err
	}
	return m, nil
}

// hasWGMMA says whether the image loaded for a device of compute capability
// major.minor holds the wgmma kernel's real body: the sm_90 cubin (built
// for sm_90a by build.sh) on a 9.0 device; any other image has a trap there.
func hasWGMMA(major, minor int, image string) bool {
	return major == 9 && minor == 0 && strings.Contains(image, "sm_90") && strings.HasSuffix(image, ".cubin")
}

// LaunchEmpty launches moecast_empty, a kernel that does nothing (one block
// of 32 threads): the cost of a launch.
func (m *Module) LaunchEmpty(s cuda.Stream) error {
	return m.empty.Launch(cuda.Dim3{X: 1, Y: 1, Z: 1}, cuda.Dim3{X: 32, Y: 1, Z: 1}, 0, s)
}

// copyArgs marshals moecast_copy's parameters: n bytes (a multiple of 16)
// from src to dst.
func copyArgs(dst, src cuda.DevicePtr, n int64) (*cuda.Params, error) {
	if n <= 0 || n%16 != 0 {
		return nil, fmt.Errorf("w4a16: copy of %d bytes: want a positive multiple of 16", n)
	}
	return cuda.MarshalParams(src, dst, n/16)
}

// LaunchCopy runs moecast_copy with arguments from copyArgs on 8 blocks of
// 256 threads per multiprocessor.
func (m *Module) LaunchCopy(args *cuda.Params, s cuda.Stream) error {
	return m.copy.LaunchParams(cuda.Dim3{X: 8 * max(1, m.SMs), Y: 1, Z: 1}, cuda.Dim3{X: threads, Y: 1, Z: 1}, 0, s, args)
}

// Registers reports each variant's registers per thread, local-memory bytes
// and resident blocks per multiprocessor, by kernel name.
func (m *Module) Registers() map[string][3]int {
	out := map[string][3]int{}
	for v, f := range m.fn {
		r, _ := f.Attribute(cuda.FuncNumRegs)
		l, _ := f.Attribute(cuda.FuncLocalSizeBytes)
		out[v.Name()] = [3]int{r, l, m.PerSM[v]}
	}
	return out
}

// Plan is one launch's shape. The work, MBlocks x NBlocks tiles of K/tileK
// iterations each, laid end to end tile by tile, is cut into runs of Units
// iterations, one per block (stream-K): Blocks = ceil(work / Units).
type Plan struct {
	M, N, K, Group int
	MT             int  // m16 tiles per block (BM = 16*MT rows)
	Stages         int  // cp.async pipeline stages
	WN             int  // warps along N (2 or 4)
	Mode           int  // 0, or a diagnostic mode (wrong results)
	WP             bool // warp-private pipelines
	BN             int  // columns a tile (128 or 256)
	MBlocks        int  // tiles along M (row blocks)
	NBlocks        int  // tiles along N
	Units          int  // tileK iterations per block
	Blocks         int  // the grid
	MaxParts       int  // the most blocks that share one tile (1: no tile is cut)
	// Coresident: a cut tile is summed by all its blocks in parallel, each a
	// share of its rows, after waiting for the others' partials (set only
	// when the whole grid is resident at once, else the last block sums it).
	Coresident bool
	Smem       int
	// MoE: ADiv maps a sorted id to its row of A (top-k for gate_up, 1 for
	// down); 0 for a dense GEMM.
	ADiv int
}

// Variant is the kernel the plan launches.
func (p Plan) Variant() Variant { return Variant{p.MT, p.Stages, p.WN, p.Mode, p.WP, p.BN} }

// WorkspaceBytes is the fp32 partial-sum buffer the plan needs: two BM x
// tileN slots per block where a tile is cut, else 0.
func (p Plan) WorkspaceBytes() int64 {
	if p.MaxParts == 1 {
		return 0
	}
	return int64(p.Blocks) * 2 * int64(16*p.MT*p.BN) * 4
}

// CounterBytes is the tile-counter buffer the plan needs, zeroed once (the
// kernel leaves it zeroed).
func (p Plan) CounterBytes() int64 { return int64(p.MBlocks*p.NBlocks) * 4 }

// Options tune a plan; zero values choose.
type Options struct {
	MT     int  // m16 tiles per block: 1, 2 or 4
	Stages int  // pipeline stages: 4, or 6 for MT 1 and 2
	Units  int  // iterations per block (the persistent wgmma tile: the most tiles a block runs)
	Splits int  // or: cut each tile into about this many runs (Units = ceil(K/tileK / Splits))
	WN     int  // warps along N: 2 (default) or 4
	Mode   int  // a diagnostic mode for the benchmark (wrong results)
	WP     bool // warp-private pipelines
	BN     int  // columns a tile: 128 (default) or 256
	Serial bool // a cut tile is summed by its last block alone (the fixup before the parallel one)
}

// chooseMT picks the rows per block from the rows a block will see.
func chooseMT(rows int) int {
	switch {
	case rows <= 16:
		return 1
	case rows <= 32:
		return 2
	}
	return 4
}

// defaultLayout picks the warps along N, the tile width and the operand
// order when the options leave them open, from the H200 runs of
// bench/gpu-w4a16-runs (run4, run5, run7: every variant on every shape):
//   - dense GEMMs of at most 8 rows: swapped operands, 2 warps along N
//     (run 7, M=1: dense up 18432 x 7168 27.2 us vs 29.6; o_proj 17.2 vs
//     18.3; expert gate_up 12.9 vs 12.3, the one shape it loses; with 4
//     warps along N it is within 2% either way, but only the 2-warp
//     kernel passed the device's correctness tests so far);
//   - 16 rows: 4 warps along N (32 columns a warp, 4 blocks/SM): faster on
//     6 of the 7 dense shapes at M <= 16 and on every MoE down projection,
//     within 4% slower on the MoE gate_up at 8-128 tokens;
//   - 64 rows: tiles of 256 columns (each activation row loaded once for
//     twice the columns) when the launch has at least SMs/2 of them: 5-10%
//     faster on the large dense shapes from M=128-256 and 10-45% on MoE
//     layers from 2048 tokens; otherwise 4 warps along N where K <= 2048
//     (the down projections: up to 2x at M=512 on 7168 x 256), else 2;
//   - 32 rows: 2 warps along N (4 was up to 45% slower on gate_up).
func defaultLayout(p Plan, sms int) (wn, bn, mode int) {
	switch p.MT {
	case 1:
		if p.ADiv == 0 && p.M <= 8 {
			return 2, tileN, modeSwap
		}
		return 4, tileN, 0
	case bigMT:
		return 4, 256, 0
	case 4:
		if p.N%256 == 0 && 2*p.MBlocks*(p.N/256) >= sms {
			return 4, 256, 0
		}
		if p.K <= 2048 {
			return 4, tileN, 0
		}
	}
	return 2, tileN, 0
}

// minUnits is the least work per block the default plan gives.
const minUnits = 4

func (m *Module) finish(p Plan, o Options) (Plan, error) {
	p.Stages = o.Stages
	if p.Stages == 0 {
		p.Stages = 4
	}
	p.WN, p.Mode, p.WP, p.BN = o.WN, o.Mode, o.WP, o.BN
	whole := false // the wgmma tile's default plan: whole tiles (one run a tile) rather than stream-K
	if p.WN == 0 && p.BN == 0 && !p.WP && (p.Mode == 0 || p.Mode == ModeFP4) && o.Stages == 0 {
		fp4 := p.Mode == ModeFP4
		p.WN, p.BN, p.Mode = defaultLayout(p, m.SMs)
		if p.MT == bigMT {
			p.Mode = m.bigMode()
			if p.Mode == modeWGMMA && !fp4 && o.Units == 0 && o.Splits == 0 {
				perSM := max(1, m.PerSM[Variant{bigMT, 4, 4, modeWGMMA, false, 256}])
				p.BN, whole = wgTiles(p.MBlocks, p.N, p.K/tileK, max(1, m.SMs)*perSM, p.ADiv == 0)
				p = m.wgDense(p, whole)
			}
		}
		if fp4 { // the MXFP4 kernels have no swapped-operand form
			p.Mode = ModeFP4
		}
	}
	if p.Mode == ModeFP4 && p.Group != 32 {
		return p, fmt.Errorf("w4a16: MXFP4 needs group 32 (got %d)", p.Group)
	}
	if p.WN == 0 {
		p.WN = 2
	}
	if p.BN == 0 {
		p.BN = tileN
	}
	if p.Mode == modeSwap && (p.ADiv > 0 || p.M > 8) {
		return p, fmt.Errorf("w4a16: swapped operands need a dense GEMM of at most 8 rows (M=%d)", p.M)
	}
	if p.N%p.BN != 0 {
		return p, fmt.Errorf("w4a16: N=%d: tiles of %d columns need N %% %d == 0", p.N, p.BN, p.BN)
	}
	if p.Mode == modeWGPersist && (p.ADiv > 0 || o.Splits > 0) {
		return p, fmt.Errorf("w4a16: the persistent wgmma tile runs whole tiles of dense GEMMs only")
	}
	v := p.Variant()
	if !slices.Contains(Variants, v) {
		return p, fmt.Errorf("w4a16: no kernel with %d rows, %d stages, %d warps along N, mode %d, warp-private %v, %d columns",
			16*p.MT, p.Stages, p.WN, p.Mode, p.WP, p.BN)
	}
	p.NBlocks = p.N / p.BN
	kiters := p.K / tileK
	tiles := int64(p.MBlocks) * int64(p.NBlocks)
	work := tiles * int64(kiters)
	switch {
	case whole, p.Mode == modeWGPersist:
		p.Units = kiters
	case o.Units > 0:
		p.Units = o.Units
	case o.Splits > 0:
		if o.Splits > kiters {
			return p, fmt.Errorf("w4a16: %d splits of K=%d: at most %d", o.Splits, p.K, kiters)
		}
		p.Units = (kiters + o.Splits - 1) / o.Splits
	default:
		// One wave: as many blocks as fit on the GPU at once.
		perSM := m.PerSM[v]
		if perSM == 0 {
			perSM = 2
		}
		slots := int64(max(1, m.SMs) * perSM)
		p.Units = int((work + slots - 1) / slots)
		// A floor of minUnits iterations a block: a block's fixed cost
		// (pipeline fill, reduction, a cut tile's partial sums) needs some
		// work to hide behind (tiny matrices cut 56 ways ran slower).
		p.Units = max(p.Units, min(kiters, minUnits))
	}
	blocks := (work + int64(p.Units) - 1) / int64(p.Units)
	if blocks > math.MaxInt32 || tiles > math.MaxInt32 {
		return p, fmt.Errorf("w4a16: %d tiles in %d blocks: too large a launch", tiles, blocks)
	}
	p.Blocks = int(blocks)
	if p.Mode == modeWGPersist {
		// One block a resident slot, whole tiles strided over the grid
		// (block b: tiles b, b + Blocks, ...); Options.Units, if set, is
		// the most tiles a block runs instead.
		p.Blocks = int(min(tiles, int64(max(1, m.SMs)*max(1, m.PerSM[v]))))
		if o.Units > 0 {
			p.Blocks = int((tiles + int64(o.Units) - 1) / int64(o.Units))
		}
	}
	p.MaxParts = 1
	for t := int64(0); t < tiles; t++ {
		t0 := t * int64(kiters)
		parts := int((t0+int64(kiters)-1)/int64(p.Units) - t0/int64(p.Units) + 1)
		p.MaxParts = max(p.MaxParts, parts)
	}
	if p.MaxParts >= parMinParts && !o.Serial && p.MT >= parMinMT && p.ADiv == 0 {
		// The parallel fixup's blocks wait for each other: only when the
		// occupancy query says the whole grid fits on the GPU at once; on
		// dense GEMMs of 64- and 128-row tiles cut in at least parMinParts
		// (bench/gpu-w4a16-runs/run15: at 2 parts it was 0-3% slower than the
		// serial fixup, on the MoE GEMMs at 2048 tokens too, which all cut in
		// 2; a 16- or 32-row tile's partials are small).
		if perSM := m.PerSM[v]; perSM > 0 && p.Blocks <= max(1, m.SMs)*perSM {
			p.Coresident = true
		}
	}
	p.Smem = v.Smem()
	return p, nil
}

// The wgmma tile's default plan (wgTiles), in units of one k iteration of
// a 128 x 256 tile, from the H200 run bench/gpu-w4a16-runs/run12 (dense
// Kimi shapes, M = 512-2048, whole tiles against stream-K, 256 and 128
// columns): a block's run of whole tiles costs wgSegment iterations more
// per tile (pipeline fill, epilogue); a stream-K run costs wgCut more per
// tile it touches (the fp32 partial written and summed: 6-14, a mean of
// 11 over the 13 stream-K plans); an iteration of the 128-column tile
// costs wg128 of the 256-column one (0.58-0.64 over whole-tile plans).
const (
	wgSegment = 3.3
	wgCut     = 11
	wg128     = 0.62
)

// With the parallel fixup (dense GEMMs, Plan.Coresident, tiles cut in at
// least parMinParts), a cut tile costs wgCutPar iterations instead of
// wgCut, in units of the tile's own iteration (fitted on
// bench/gpu-w4a16-runs/run15, the TP8 gate_up 512 x 7168 at M = 512-2048:
// 6.0-6.5 for the 128-column tile's stream-K, 6.4 for the 256-column one's;
// the 128-column tile's stream-K cut in 2 ran within 2% of that with either
// fixup, so its cut costs wgCutPar at any parts).
const (
	parMinParts = 3
	wgCutPar    = 6.4
)

// parMinMT is the fewest m16 tiles a block of a plan with the parallel
// fixup (Plan.Coresident): w4a16.cu compiles the fixup into the kernels of
// 64- and 128-row tiles only (PAR_MIN_BM = 16 * parMinMT), since in the 16-
// and 32-row kernels its code made nvcc spill in the main loop and the
// Kimi-K2.5 MoE layer ran 4-7% slower at 1-1024 tokens
// (bench/RESULTS-recal.md, bench/RESULTS-w4small.md).
const parMinMT = 4

// wgTiles picks the tile width (256 or 128 columns) and whether the default
// plan of the wgmma tile runs whole tiles, one block a tile (no partial
// sums), rather than stream-K's equal runs that cut tiles, for mblocks row
// blocks of n columns and kiters k iterations on slots resident blocks: the
// cheapest of whole 256-column tiles, whole 128-column tiles and 256-column
// stream-K by the costs above, and, for a dense GEMM (par: the parallel
// fixup), 128-column stream-K. Stream-K kept the GPU busy where 256-column
// tiles filled less than a wave, but its cut tiles cost more than the idle
// SMs of whole tiles elsewhere (run12: the expert down 7168 x 2048 at M =
// 512 in 30 us as 112 whole tiles, 56 us as stream-K); with the parallel
// fixup the narrow TP8 gate_up 512 x 7168 runs fastest as 128-column
// stream-K from M = 512 to 2048 (run15).
func wgTiles(mblocks, n, kiters, slots int, par bool) (bn int, whole bool) {
	waves := func(tiles int) float64 { return float64((tiles + slots - 1) / slots) }
	// streamK is the cost of a stream-K run over t tiles: its iterations
	// and a cut cost for each tile it touches.
	streamK := func(t int, cut128 bool) float64 {
		units := max((t*kiters+slots-1)/slots, min(kiters, minUnits))
		segs := (units + kiters - 1) / kiters
		if units%kiters != 0 {
			segs++ // a run that starts inside a tile
		}
		cut := float64(wgCut)
		if par && (cut128 || 2*units < kiters) { // cut in 3 or more: the parallel fixup
			cut = wgCutPar
		}
		return float64(units) + cut*float64(segs)
	}
	best, bn, whole := math.Inf(1), 256, false
	if n%256 == 0 {
		t := mblocks * n / 256
		if c := waves(t) * (float64(kiters) + wgSegment); c < best {
			best, whole = c, true
		}
		if c := streamK(t, false); c < best {
			best, whole = c, false
		}
	}
	if c := waves(mblocks*n/128) * (float64(kiters) + wgSegment) * wg128; c < best {
		best, bn, whole = c, 128, true
	}
	if par {
		if c := streamK(mblocks*n/128, true) * wg128; c < best {
			bn, whole = 128, false
		}
	}
	return bn, whole
}

// Two refinements of wgTiles' plan for dense GEMMs, from the H200 runs
// bench/gpu-w4a16-runs/run17-run23 (the TP8 shards, M = 512-2048):
//   - whole 256-column tiles of at most wgpMaxKIters k iterations run as
//     the persistent grid of the same tiles (w4a16_mt8_wgp_n256): the next
//     tile's first stages load while this one's epilogue runs, which stages
//     bf16 rather than fp32 (the TP8 down 7168 x 256, two iterations a
//     tile, run 23: 8.86 -> 8.33 us at M = 512, 15.75 -> 14.57 at 1024,
//     29.37 -> 26.10 at 2048, where the 128-column persistent grid, the
//     default of runs 20-21, took 27.53); without that kernel, more than
//     two waves of them run as the 128-column persistent grid
//     (w4a16_mt8_w4_wgp: 29.3 -> 26.4 us at M = 2048, runs 20-21; even with
//     the whole tiles at one and two waves). At 16 k iterations and more
//     (the expert gate_up and down, o_proj, dense up, the TP8 gate_up) the
//     persistent grid was 3% faster to 10% slower than whole tiles, mostly
//     slower (run 18; run 23: the TP8 gate_up 94.2 against 88.2 us);
//   - 128-column stream-K over at most SMs/wgNarrowDiv such tiles takes
//     the 64-row tile (w4a16_mt4_w4_wg, two blocks a multiprocessor: twice
//     the tiles, half the cut parts' length): the TP8 gate_up 512 x 7168 at
//     M = 512 in 17.5-18.0 us against 19.4-19.7 (runs 17-23; even at M =
//     1024, 32 such tiles, slower at 2048).
const (
	wgpMaxKIters = 4
	wgNarrowDiv  = 8
)

// wgDense applies those refinements to a dense plan of the wgmma tile
// (whole: wgTiles chose whole tiles), where the image has the kernels.
func (m *Module) wgDense(p Plan, whole bool) Plan {
	if p.ADiv != 0 {
		return p
	}
	if whole && p.BN == 256 && p.K/tileK <= wgpMaxKIters {
		slots := max(1, m.SMs) * max(1, m.PerSM[Variant{bigMT, 4, 4, modeWGMMA, false, 256}])
		if _, ok := m.fn[Variant{bigMT, 4, 4, modeWGPersist, false, 256}]; ok {
			p.Mode = modeWGPersist
		} else if _, ok := m.fn[Variant{bigMT, 4, 4, modeWGPersist, false, 128}]; ok && p.MBlocks*(p.N/256) > 2*slots {
			p.Mode, p.BN = modeWGPersist, 128
		}
	}
	narrow := Variant{4, 4, 4, modeWGMMA, false, 128}
	if _, ok := m.fn[narrow]; ok && !whole && p.BN == 128 && p.MBlocks*(p.N/128) <= m.SMs/wgNarrowDiv {
		p.MT, p.MBlocks = 4, (p.M+63)/64
	}
	return p
}

// PlanGEMM plans C[M,N] = A[M,K] x W.
func (m *Module) PlanGEMM(M, N, K, group int, o Options) (Plan, error) {
	if err := checkShape(N, K, group); err != nil {
		return Plan{}, err
	}
	if M <= 0 {
		return Plan{}, fmt.Errorf("w4a16: M=%d: want > 0", M)
	}
	p := Plan{M: M, N: N, K: K, Group: group, MT: o.MT}
	if p.MT == 0 {
		p.MT = chooseMT(M)
		if m.bigDefault(N, o) && bigDense(M, N, K, m.SMs) {
			p.MT = bigMT
		}
	}
	if p.MT != 1 && p.MT != 2 && p.MT != 4 && p.MT != bigMT {
		return Plan{}, fmt.Errorf("w4a16: MT=%d: want 1, 2, 4 or 8", p.MT)
	}
	p.MBlocks = (M + 16*p.MT - 1) / (16 * p.MT)
	return m.finish(p, o)
}

// moeBlockRows is the moe_align block size for an average of rows per
// touched expert: the rows of one kernel block.
func moeBlockRows(avgRowsPerExpert float64) int { return 16 * chooseMT(int(avgRowsPerExpert+0.999)) }

// MoEBlockRows is moeBlockRows for this module's W4A16 MoE GEMMs of ns
// columns (gate_up's and down's): 128 (the large-batch tile) from
// bigMoERows rows per touched expert where the device runs its wgmma form.
func (m *Module) MoEBlockRows(avgRowsPerExpert float64, ns ...int) int {
	if avgRowsPerExpert < bigMoERows {
		return moeBlockRows(avgRowsPerExpert)
	}
	for _, n := range ns {
		if !m.bigDefault(n, Options{}) {
			return moeBlockRows(avgRowsPerExpert)
		}
	}
	return 16 * bigMT
}

// moeBlock is the moe_align block for a MoE launch with options o: the
// large-batch tile's 128 rows where o asks for it (MT 8) or leaves the
// layout open and MoEBlockRows picks it, else moeBlockRows.
func (m *Module) moeBlock(avgRowsPerExpert float64, o Options, ns ...int) int {
	switch {
	case o.MT == bigMT:
		return 16 * bigMT
	case o == Options{}:
		return m.MoEBlockRows(avgRowsPerExpert, ns...)
	}
	return moeBlockRows(avgRowsPerExpert)
}

// bigDefault says whether a default plan of N columns with options o may
// take the large-batch tile: the options leave the layout open, N is a
// multiple of 256 and the wgmma kernel is loaded.
func (m *Module) bigDefault(N int, o Options) bool {
	if o.WN != 0 || o.BN != 0 || o.WP || o.Mode != 0 || o.Stages != 0 || N%256 != 0 {
		return false
	}
	return m.bigMode() == modeWGMMA
}

// bigDense says whether a dense M x N x K GEMM is large enough for the
// large-batch tile on sms multiprocessors (bigRows, bigWork).
func bigDense(M, N, K, sms int) bool {
	if M < bigRows {
		return false
	}
	tiles := (M + 16*bigMT - 1) / (16 * bigMT) * (N / 256)
	// From bigNarrowRows rows a long K (at least bigNarrowK iterations) also
	// takes it whatever the tiles: its stream-K with the parallel fixup
	// (run15: the TP8 gate_up 512 x 7168 at M = 512 in 19.4 us against the
	// 64-row tile's 21.3, at 1024 in 25.2 against 32.4).
	if M >= bigNarrowRows && K/tileK >= bigNarrowK {
		return true
	}
	return tiles*(K/tileK) >= bigWork || 2*tiles >= sms
}

// bigMode is the mode of the default large-batch tile: wgmma where the
// image has it, else mma.sync.
func (m *Module) bigMode() int {
	if _, ok := m.fn[Variant{bigMT, 4, 4, modeWGMMA, false, 256}]; ok {
		return modeWGMMA
	}
	return 0
}

// PlanMoE plans the grouped GEMM over an aligned routed batch: rows are
// a.Tokens*a.K ids, aDiv maps an id to its row of A.
func (m *Module) PlanMoE(a *Aligned, N, K, group, aDiv int, o Options) (Plan, error) {
	if err := checkShape(N, K, group); err != nil {
		return Plan{}, err
	}
	if a.Block%16 != 0 || (chooseMT(a.Block) != a.Block/16 && a.Block != 16*bigMT) {
		return Plan{}, fmt.Errorf("w4a16: moe block %d: want 16, 32, 64 or 128", a.Block)
	}
	if aDiv <= 0 {
		return Plan{}, fmt.Errorf("w4a16: moe a_div %d: want > 0", aDiv)
	}
	p := Plan{M: a.Tokens * a.K, N: N, K: K, Group: group, MT: a.Block / 16, MBlocks: a.Blocks(), ADiv: aDiv}
	if p.MBlocks == 0 {
		return Plan{}, fmt.Errorf("w4a16: moe batch has no rows")
	}
	return m.finish(p, o)
}

// Buffers are the device buffers of one launch. W and S hold the repacked
// weights (Weights.Q, Weights.S), expert after expert for MoE.
type Buffers struct {
	A, W, S, C          cuda.DevicePtr
	Workspace, Counters cuda.DevicePtr
	SortedIDs           cuda.DevicePtr // MoE only
	ExpertIDs           cuda.DevicePtr // MoE only
}

// Args marshals the kernel's parameters (kept for repeated launches).
func (p Plan) Args(b Buffers) (*cuda.Params, error) {
	if b.Counters == 0 || (p.MaxParts > 1 && b.Workspace == 0) {
		return nil, fmt.Errorf("w4a16: a plan that cuts tiles (%d parts) needs a workspace and counters", p.MaxParts)
	}
	if (p.ADiv > 0) != (b.SortedIDs != 0 && b.ExpertIDs != 0) {
		return nil, fmt.Errorf("w4a16: MoE plans need sorted and expert ids, dense plans neither")
	}
	aDiv := max(p.ADiv, 1)
	coresident := int32(0)
	if p.Coresident {
		coresident = 1
	}
	return cuda.MarshalParams(b.A, b.W, b.S, b.C, b.Workspace, b.Counters, b.SortedIDs, b.ExpertIDs,
		int32(p.M), int32(p.N), int32(p.K), int32(p.Group), int32(aDiv), int32(p.MBlocks), int32(p.Units), coresident)
}

// Launch runs the plan on the stream.
func (m *Module) Launch(p Plan, b Buffers, s cuda.Stream) error {
	args, err := p.Args(b)
	if err != nil {
		return err
	}
	return m.LaunchArgs(p, args, s)
}

// LaunchArgs runs the plan with arguments from Plan.Args.
func (m *Module) LaunchArgs(p Plan, args *cuda.Params, s cuda.Stream) error {
	f, ok := m.fn[p.Variant()]
	if !ok {
		return fmt.Errorf("w4a16: no kernel %s loaded", p.Variant().Name())
	}
	return f.LaunchParams(cuda.Dim3{X: p.Blocks, Y: 1, Z: 1}, cuda.Dim3{X: threads, Y: 1, Z: 1}, p.Smem, s, args)
}
