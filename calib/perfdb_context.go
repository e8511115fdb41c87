package calib

import (
	"fmt"
	"io"
	"strconv"
)

// Prefill (context) attention from the perf database: aiconfigurator's
// context_attention_perf (GQA/MHA) and context_mla_perf (MLA's un-absorbed
// prefill) tables, each row one attention call over batch_size prompts of
// isl tokens with no cached prefix, measured on the engine's own kernels
// (ai-dynamo/aiconfigurator @ 095f58a, collector/{vllm,sglang}/
// collect_attn.py and collect_mla.py). They become op prefill tables
// (kernels.PrefillTable: one chunk of `chunk` tokens after `prefix` cached
// ones), so the rows with batch_size 1 are read, at prefix 0; a row of
// several prompts is one varlen launch over all of them, which the table
// does not key, and is skipped (counted).

// readGQAContext reads context_attention_perf: heads and kv_heads per GPU,
// head_dim, KV-cache dtype and sliding window (window_size; 0 for full
// attention); bf16 queries, beam 1, step 0.
func (im *perfdbImport) readGQAContext(f perfdbFile, rd io.Reader) error {
	return im.eachGQA(f, rd, func(a *gqaRow, windowed bool) (string, error) {
		if windowed && a.str("window_size") != "" {
			var err error
			if a.window, err = strconv.Atoi(a.str("window_size")); err != nil || a.window < 0 {
				return "", a.errf("window_size %q is not a non-negative integer", a.str("window_size"))
			}
		}
		switch {
		case a.str("step") != "0":
			return "step > 0 (a prefill over a cached prefix; the rows read have none)", nil
		case a.batch != 1:
			return "batch_size > 1 (the prefill table keys one prompt a call)", nil
		}
		return "", nil
	}, func(g *groups, a gqaRow) error {
		ks := a.str("kernel_source")
		key := fmt.Sprintf("%s|%d|%s|%d", ks, a.dim, a.kv, a.window)
		name := fmt.Sprintf("prefill.%s-%s.d%d.kv-%s", f.engine, f.engVer, a.dim, a.kv)
		if a.window > 0 {
			name += fmt.Sprintf(".w%d", a.window)
		}
		x := g.get(key, func() Table {
			p := im.prov(f, ks, "eager", "unknown",
				"prefill (context) attention of one layer, aiconfigurator collector: one prompt of isl tokens, no cached prefix; heads and kv_heads per GPU; rows with batch_size 1 read (chunk = isl, prefix 0)",
				"latency ms -> latency_us (x1000, rounded to 1 ps)")
			p.GPULabel = a.str("device")
			return Table{Name: name, Op: string(OpPrefill), Keys: Keys{KVDtype: a.kv, HeadDim: a.dim, VHeadDim: a.dim, Window: a.window},
				Columns: []string{"heads", "kv_heads", "chunk", "prefix", "latency_us"}, Provenance: p}
		})
		point := fmt.Sprintf("(heads %d, kv_heads %d, chunk %d)", a.heads, a.kvHeads, a.isl)
		return x.add(a.record, point, []float64{float64(a.heads), float64(a.kvHeads), float64(a.isl), 0, a.lat})
	})
}

// readMLAContext reads context_mla_perf: MLA's prefill attention for
// DeepSeek-V3 dims (q/k head dim qk_nope 128 + qk_rope 64 = 192, v 128)
// over the up-projected, bf16 k and v; num_heads is heads per GPU
// (num_heads x tp_size = 128). Rows with a bf16 KV cache and bf16 MLA
// are read: the table keys the bf16 k/v the kernel attends over, and an
// fp8 KV cache runs another kernel path (skipped, counted).
func (im *perfdbImport) readMLAContext(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	err = c.each(func(r record) error {
		v, err := r.counts("num_heads", "batch_size", "isl", "tp_size")
		if err != nil {
			return err
		}
		heads, batch, isl := v[0], v[1], v[2]
		switch {
		case r.str("step") != "0":
			im.skip(f, "step > 0 (a prefill over a cached prefix; the rows read have none)")
			return nil
		case batch != 1:
			im.skip(f, "batch_size > 1 (the prefill table keys one prompt a call)")
			return nil
		case dtypeName(r.str("mla_dtype")) != "bf16" || dtypeName(r.str("kv_cache_dtype")) != "bf16":
			im.skip(f, "mla_dtype "+dtypeName(r.str("mla_dtype"))+", kv_cache_dtype "+dtypeName(r.str("kv_cache_dtype"))+" (bf16 MLA over a bf16 KV cache is read)")
			return nil
		}
		lat, err := r.latencyUs("latency", 1e3)
		if err != nil {
			return err
		}
		ks := r.str("kernel_source")
		name := fmt.Sprintf("prefill.%s-%s.mla.d%d-%d.kv-bf16", f.engine, f.engVer, dsNope+dsRope, dsVHeadDim)
		x := g.get(ks, func() Table {
			p := im.prov(f, ks, "eager", "unknown",
				"MLA prefill (context) attention of one layer for DeepSeek-V3 dims (q/k 192 = qk_nope 128 + qk_rope 64, v 128, un-absorbed), aiconfigurator collector: one prompt of isl tokens, no cached prefix; num_heads = heads per GPU; rows with batch_size 1 read (chunk = isl, prefix 0)",
				"latency ms -> latency_us (x1000, rounded to 1 ps)")
			p.GPULabel = r.str("device")
			return Table{Name: name, Op: string(OpPrefill), Keys: Keys{KVDtype: "bf16", HeadDim: dsNope + dsRope, VHeadDim: dsVHeadDim},
				Columns: []string{"heads", "kv_heads", "chunk", "prefix", "latency_us"}, Provenance: p}
		})
		point := fmt.Sprintf("(heads %d, chunk %d)", heads, isl)
		return x.add(r, point, []float64{float64(heads), float64(heads), float64(isl), 0, lat})
	})
	if err != nil {
		return err
	}
	g.nameByKernel()
	g.flush(im.file)
	return nil
}
