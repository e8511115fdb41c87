package calib

import (
	"errors"
	"fmt"
	"strings"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
)

// Op names a calibration-table op: the value of a [[table]]'s op key
// (Table.Op holds it as written).
type Op string

// The ops a calibration table may have.
const (
	OpGEMM          Op = "gemm"
	OpMoE           Op = "moe"
	OpMLA           Op = "mla"
	OpGQA           Op = "gqa"
	OpPrefill       Op = "prefill"
	OpElementwise   Op = "elementwise"
	OpUnmapped      Op = "unmapped"
	OpAllReduce     Op = "allreduce"
	OpAllGather     Op = "allgather"
	OpReduceScatter Op = "reducescatter"
	OpAllToAll      Op = "alltoall"
	OpEP            Op = "ep"
	OpGDN           Op = "gdn"
)

// opDef is everything calib knows of one op: what its tables must hold
// (spec), how their rows form series (series: the columns that select a
// series, matched exactly by a lookup, and the axes interpolated within
// it), and how a validated table becomes a kernels or comm table (build).
// Adding an op is one row of ops and its build function.
type opDef struct {
	op Op
	// comm: the tables are collective or EP tables (comm.Tables), measured
	// on a GPU and fabric; else kernel tables (kernels.Tables), on a GPU.
	comm   bool
	spec   opSpec
	series series
	build  func(b *builder) (looer, error)
}

// ops is the op registry, in the order errors list the ops.
var ops = [...]opDef{
	{op: OpGEMM, spec: opSpec{ints: []string{"m", "n", "k"}, keys: func(k Keys) error {
		if err := need(k.Dtype != "", "key dtype is missing (weight format: bf16, fp8-b128, int4-g32, ...)"); err != nil {
			return err
		}
		return need(reGEMMDtype.MatchString(k.Dtype), fmt.Sprintf("key dtype %q is not a weight format name (bf16, fp16, fp8, fp8-b128, int4-g32, int8-channel, mxfp4, nvfp4, ...)", k.Dtype))
	}},
		series: series{[]string{"n", "k"}, []string{"m"}}, build: buildGEMM},
	{op: OpMoE, spec: opSpec{ints: []string{"tokens", "moe_tp", "ep"}, optional: []string{"working_set_bytes", "l2_resident"}, keys: func(k Keys) error {
		if k.Dtype == "" || k.Distribution == "" {
			return errors.New("keys dtype (quant) and distribution are required")
		}
		if err := oneOf("dtype", k.Dtype, moeQuants); err != nil {
			return err
		}
		if !reDistribution.MatchString(k.Distribution) {
			return fmt.Errorf("key distribution %q is unknown (balanced, uniform or power_law_<alpha>)", k.Distribution)
		}
		return need(k.Experts > 0 && k.TopK > 0 && k.TopK <= k.Experts && k.Hidden > 0 && k.Inter > 0,
			"keys experts, topk (<= experts), hidden and inter must be positive")
	}},
		series: series{[]string{"moe_tp", "ep"}, []string{"tokens"}}, build: buildMoE},
	{op: OpMLA, spec: opSpec{ints: []string{"heads", "batch", "kv_len"}, optional: []string{"working_set_bytes", "l2_resident"}, keys: func(k Keys) error {
		if err := need(k.Dtype != "" && k.KVDtype != "" && k.KVLoRARank > 0 && k.QKRopeDim > 0,
			"keys dtype, kv_dtype, kv_lora_rank and qk_rope_dim are required"); err != nil {
			return err
		}
		if err := oneOf("dtype", k.Dtype, mlaDtypes); err != nil {
			return err
		}
		return oneOf("kv_dtype", k.KVDtype, kvDtypes)
	}},
		series: series{[]string{"heads"}, []string{"batch", "kv_len"}}, build: buildMLA},
	{op: OpGQA, spec: opSpec{ints: []string{"heads", "kv_heads", "batch", "kv_len"}, keys: func(k Keys) error {
		if err := need(k.KVDtype != "" && k.HeadDim > 0, "keys kv_dtype and head_dim are required"); err != nil {
			return err
		}
		return oneOf("kv_dtype", k.KVDtype, kvDtypes)
	}},
		series: series{[]string{"heads", "kv_heads"}, []string{"batch", "kv_len"}}, build: buildGQA},
	// prefill: causal attention of one chunk of new tokens against its
	// cached prefix (GQA: head_dim for q/k and v; MLA's un-absorbed
	// prefill: head_dim 192, v_head_dim 128), by heads and kv_heads per GPU.
	{op: OpPrefill, spec: opSpec{ints: []string{"heads", "kv_heads", "chunk"}, nonneg: []string{"prefix"}, keys: func(k Keys) error {
		if err := need(k.KVDtype != "" && k.HeadDim > 0 && k.VHeadDim > 0 && k.Window >= 0,
			"keys kv_dtype, head_dim and v_head_dim are required (window, when set, positive)"); err != nil {
			return err
		}
		return oneOf("kv_dtype", k.KVDtype, kvDtypes)
	}},
		series: series{[]string{"heads", "kv_heads"}, []string{"chunk", "prefix"}}, build: buildPrefill},
	// elementwise: small memory-bound kernels (norms, rotary, KV-cache
	// writes, top-k) by the bytes one kernel moves; no keys.
	{op: OpElementwise, spec: opSpec{reals: []string{"bytes"}, keys: func(k Keys) error {
		return need(k == Keys{}, "op elementwise takes no keys (its rows are keyed by bytes alone)")
	}},
		series: series{nil, []string{"bytes"}}, build: buildElementwise},
	// unmapped: a traced step's kernels that map to no modelled op, per
	// layer, by the step's tokens (calib from-trace); no keys.
	{op: OpUnmapped, spec: opSpec{ints: []string{"tokens"}, keys: func(k Keys) error {
		return need(k == Keys{}, "op unmapped takes no keys (its rows are keyed by tokens alone)")
	}},
		series: series{nil, []string{"tokens"}}, build: buildUnmapped},
	{op: OpAllReduce, comm: true, spec: opSpec{ints: []string{"ranks"}, reals: []string{"bytes"}, inplace: true, keys: collectiveKeys},
		series: series{[]string{"ranks"}, []string{"bytes"}}, build: buildCollective},
	{op: OpAllGather, comm: true, spec: opSpec{ints: []string{"ranks"}, reals: []string{"bytes"}, inplace: true, keys: collectiveKeys},
		series: series{[]string{"ranks"}, []string{"bytes"}}, build: buildCollective},
	{op: OpReduceScatter, comm: true, spec: opSpec{ints: []string{"ranks"}, reals: []string{"bytes"}, inplace: true, keys: collectiveKeys},
		series: series{[]string{"ranks"}, []string{"bytes"}}, build: buildCollective},
	{op: OpAllToAll, comm: true, spec: opSpec{ints: []string{"ranks"}, reals: []string{"bytes"}, inplace: true, keys: collectiveKeys},
		series: series{[]string{"ranks"}, []string{"bytes"}}, build: buildCollective},
	{op: OpEP, comm: true, spec: opSpec{ints: []string{"hidden", "topk", "experts", "ranks", "tokens_per_rank"}, keys: func(k Keys) error {
		if err := need(k.Impl != "" && (k.Phase == "dispatch" || k.Phase == "combine"),
			`keys impl and phase ("dispatch" or "combine") are required`); err != nil {
			return err
		}
		return oneOf("impl", k.Impl, epImpls)
	}},
		series: series{[]string{"hidden", "topk", "experts", "ranks"}, []string{"tokens_per_rank"}}, build: buildEP},
	// gdn: the state update of a Gated DeltaNet layer (the chunked scan of
	// a prefill, the recurrence of a decode step) over seqs sequences of
	// seq_len new tokens each, by key and value heads per GPU; keys phase
	// (prefill or decode), head_dim (keys) and v_head_dim (values).
	{op: OpGDN, spec: opSpec{ints: []string{"k_heads", "v_heads", "seqs", "seq_len"}, keys: func(k Keys) error {
		if k.Phase == "" {
			return need(false, `key phase ("prefill" or "decode") is required`)
		}
		if err := need(k.Phase == "prefill" || k.Phase == "decode", fmt.Sprintf(`key phase %q: want "prefill" or "decode"`, k.Phase)); err != nil {
			return err
		}
		return need(k.HeadDim > 0 && k.VHeadDim > 0 && k == Keys{Phase: k.Phase, HeadDim: k.HeadDim, VHeadDim: k.VHeadDim},
			"keys head_dim and v_head_dim are required, and no other key than phase")
	}},
		series: series{[]string{"k_heads", "v_heads"}, []string{"seq_len", "seqs"}}, build: buildGDN},
}

// series names the columns that select a series of a table (matched
// exactly by a lookup) and the axes interpolated within it.
type series struct{ keys, axes []string }

// opFor is the registry row of op name, or false.
func opFor(name string) (*opDef, bool) {
	for i := range ops {
		if string(ops[i].op) == name {
			return &ops[i], true
		}
	}
	return nil, false
}

// opNames lists the ops in registry order: "gemm, moe, ...".
func opNames() string {
	names := make([]string, len(ops))
	for i := range ops {
		names[i] = string(ops[i].op)
	}
	return strings.Join(names, ", ")
}

// builder is one validated table on its way to a lookup table: its name
// in lookups (file#table), effective provenance, column layout, and the
// kernels and comm tables it joins.
type builder struct {
	name string
	prov Provenance
	t    *Table
	c    *colIndex
	kt   *kernels.Tables
	ct   *comm.Tables
	// deferred builds the MoE, GQA and GDN curves on first use
	// (File.deferred: the embedded calibrations)
	deferred bool
}

func (b *builder) col(r []float64, n string) float64 { return r[b.c.idx[n]] }
func (b *builder) ival(r []float64, n string) int    { return int(b.col(r, n)) }
func (b *builder) lat(r []float64) unit.Seconds {
	return unit.Seconds(r[b.c.lat]) * b.c.latScale
}
func (b *builder) flag(r []float64, n string) bool { i, ok := b.c.idx[n]; return ok && r[i] == 1 }

func gemmPoints(b *builder) []kernels.GEMMPoint {
	t, ival, lat := b.t, b.ival, b.lat
	pts := make([]kernels.GEMMPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.GEMMPoint{M: ival(r, "m"), N: ival(r, "n"), K: ival(r, "k"), Latency: lat(r), Row: i + 1}
	}
	return pts
}

func buildGEMM(b *builder) (looer, error) {
	name, k, kt := b.name, b.t.Keys, b.kt
	tb, err := kernels.NewGEMMTable(name, k.Dtype, gemmPoints(b))
	if err != nil {
		return nil, err
	}
	kt.GEMMs = append(kt.GEMMs, tb)
	return tb, nil
}

func moePoints(b *builder) []kernels.MoEPoint {
	t, ival, lat, flag := b.t, b.ival, b.lat, b.flag
	pts := make([]kernels.MoEPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.MoEPoint{Tokens: ival(r, "tokens"), MoETP: ival(r, "moe_tp"), EP: ival(r, "ep"),
			Latency: lat(r), L2Resident: flag(r, "l2_resident"), Row: i + 1}
	}
	return pts
}

func moeKey(k Keys) kernels.MoEKey {
	return kernels.MoEKey{Quant: k.Dtype, Experts: k.Experts, TopK: k.TopK, Hidden: k.Hidden, Inter: k.Inter, Distribution: k.Distribution}
}

func buildMoE(b *builder) (looer, error) {
	t, name, kt, prov := b.t, b.name, b.kt, b.prov
	newTable := kernels.NewMoETable
	if b.deferred {
		newTable = kernels.NewMoETableDeferred
	}
	tb, err := newTable(name, moeKey(t.Keys), moePoints(b))
	if err != nil {
		return nil, err
	}
	if r := tb.Raised(); len(r) > 0 {
		t.addCorrection(prov, envelopeCorrection(r))
	}
	kt.MoEs = append(kt.MoEs, tb)
	return tb, nil
}

func mlaPoints(b *builder) []kernels.MLAPoint {
	t, ival, lat, flag := b.t, b.ival, b.lat, b.flag
	pts := make([]kernels.MLAPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.MLAPoint{Heads: ival(r, "heads"), Batch: ival(r, "batch"), KVLen: ival(r, "kv_len"),
			Latency: lat(r), L2Resident: flag(r, "l2_resident"), Row: i + 1}
	}
	return pts
}

func mlaKey(k Keys) kernels.MLAKey {
	return kernels.MLAKey{GEMMDtype: k.Dtype, KV: k.KVDtype, KVLoRARank: k.KVLoRARank, QKRopeDim: k.QKRopeDim,
		Hidden: k.Hidden, QLoRARank: k.QLoRARank, QKNopeDim: k.QKNopeDim, VHeadDim: k.VHeadDim}
}

// memBW is the peak DRAM bandwidth of GPU preset gpu (0: unknown): it
// prices the KV read an fp8-KV query saves when a bf16-KV MLA table
// answers it (kernels.Tables.MLAModule).
func memBW(gpu string) unit.BytesPerSecond {
	if g, ok := kernels.LookupGPU(gpu); ok {
		return g.MemBW
	}
	return 0
}

func buildMLA(b *builder) (looer, error) {
	tb, err := kernels.NewMLATable(b.name, mlaKey(b.t.Keys), mlaPoints(b))
	if err != nil {
		return nil, err
	}
	tb.MemBW = memBW(b.prov.GPU)
	tb.LegacyCollector = LegacyMLA(b.prov.GPU, b.prov.Engine, b.prov.EngineVersion, originLabel(b.prov, string(OpMLA)))
	b.kt.MLAs = append(b.kt.MLAs, tb)
	return tb, nil
}

func gqaPoints(b *builder) []kernels.GQAPoint {
	t, ival, lat := b.t, b.ival, b.lat
	pts := make([]kernels.GQAPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.GQAPoint{Heads: ival(r, "heads"), KVHeads: ival(r, "kv_heads"), Batch: ival(r, "batch"),
			KVLen: ival(r, "kv_len"), Latency: lat(r), Row: i + 1}
	}
	return pts
}

func gqaKey(k Keys) kernels.GQAKey { return kernels.GQAKey{HeadDim: k.HeadDim, KV: k.KVDtype} }

func buildGQA(b *builder) (looer, error) {
	kt := b.kt
	newTable := kernels.NewGQATable
	if b.deferred {
		newTable = kernels.NewGQATableDeferred
	}
	tb, err := newTable(b.name, gqaKey(b.t.Keys), gqaPoints(b))
	if err != nil {
		return nil, err
	}
	kt.GQAs = append(kt.GQAs, tb)
	return tb, nil
}

func prefillPoints(b *builder) []kernels.PrefillPoint {
	t, ival, lat := b.t, b.ival, b.lat
	pts := make([]kernels.PrefillPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.PrefillPoint{Heads: ival(r, "heads"), KVHeads: ival(r, "kv_heads"), Chunk: ival(r, "chunk"),
			Prefix: ival(r, "prefix"), Latency: lat(r), Row: i + 1}
	}
	return pts
}

func prefillKey(k Keys) kernels.PrefillKey {
	return kernels.PrefillKey{QKDim: k.HeadDim, VDim: k.VHeadDim, KV: k.KVDtype, Window: k.Window}
}

func buildPrefill(b *builder) (looer, error) {
	tb, err := kernels.NewPrefillTable(b.name, prefillKey(b.t.Keys), prefillPoints(b))
	if err != nil {
		return nil, err
	}
	b.kt.Prefills = append(b.kt.Prefills, tb)
	return tb, nil
}

func buildElementwise(b *builder) (looer, error) {
	t, name, kt, lat, col := b.t, b.name, b.kt, b.lat, b.col
	pts := make([]kernels.ElementwisePoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.ElementwisePoint{Bytes: unit.Bytes(col(r, "bytes")), Latency: lat(r), Row: i + 1}
	}
	tb, err := kernels.NewElementwiseTable(name, pts)
	if err != nil {
		return nil, err
	}
	kt.Elementwises = append(kt.Elementwises, tb)
	return tb, nil
}

func buildUnmapped(b *builder) (looer, error) {
	t, name, kt, ival, lat := b.t, b.name, b.kt, b.ival, b.lat
	pts := make([]kernels.UnmappedPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.UnmappedPoint{Tokens: ival(r, "tokens"), Latency: lat(r), Row: i + 1}
	}
	tb, err := kernels.NewUnmappedTable(name, pts)
	if err != nil {
		return nil, err
	}
	kt.Unmappeds = append(kt.Unmappeds, tb)
	return tb, nil
}

func buildEP(b *builder) (looer, error) {
	t, name, k, ct, ival, lat := b.t, b.name, b.t.Keys, b.ct, b.ival, b.lat
	pts := make([]comm.EPPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = comm.EPPoint{Hidden: ival(r, "hidden"), TopK: ival(r, "topk"), Experts: ival(r, "experts"),
			Ranks: ival(r, "ranks"), TokensPerRank: ival(r, "tokens_per_rank"), Latency: lat(r), Row: i + 1}
	}
	tb, err := comm.NewEPTable(name, comm.EPKey{Phase: k.Phase, Impl: k.Impl}, pts)
	if err != nil {
		return nil, err
	}
	ct.EPs = append(ct.EPs, tb)
	return tb, nil
}

// buildCollective builds the NCCL-style collectives (allreduce,
// allgather, reducescatter, alltoall).
func buildCollective(b *builder) (looer, error) {
	t, name, k, ct, ival, lat, col := b.t, b.name, b.t.Keys, b.ct, b.ival, b.lat, b.col
	op, ok := cost.ParseCategory(t.Op)
	if !ok || !op.IsCollective() {
		return nil, fmt.Errorf("op %q has no table type", t.Op)
	}
	pts := make([]comm.Point, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = comm.Point{Ranks: ival(r, "ranks"), Bytes: unit.Bytes(col(r, "bytes")), Latency: lat(r), Row: i + 1}
	}
	tb, err := comm.NewTable(name, op, k.Impl, k.Mode, pts)
	if err != nil {
		return nil, err
	}
	ct.Colls = append(ct.Colls, tb)
	return tb, nil
}

func gdnPoints(b *builder) []kernels.GDNPoint {
	t, ival, lat := b.t, b.ival, b.lat
	pts := make([]kernels.GDNPoint, len(t.Rows))
	for i, r := range t.Rows {
		pts[i] = kernels.GDNPoint{KHeads: ival(r, "k_heads"), VHeads: ival(r, "v_heads"), Seqs: ival(r, "seqs"),
			SeqLen: ival(r, "seq_len"), Latency: lat(r), Row: i + 1}
	}
	return pts
}

func buildGDN(b *builder) (looer, error) {
	k := b.t.Keys
	newTable := kernels.NewGDNTable
	if b.deferred {
		newTable = kernels.NewGDNTableDeferred
	}
	tb, err := newTable(b.name, kernels.GDNKey{Phase: k.Phase, KDim: k.HeadDim, VDim: k.VHeadDim}, gdnPoints(b))
	if err != nil {
		return nil, err
	}
	b.kt.GDNs = append(b.kt.GDNs, tb)
	return tb, nil
}
