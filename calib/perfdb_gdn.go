package calib

import (
	"fmt"
	"io"
)

// Gated DeltaNet (Qwen3.5, Qwen3-Next linear attention) from the perf
// database: aiconfigurator's gdn_perf table (ai-dynamo/aiconfigurator @
// 095f58a, collector/sglang/collect_gdn.py and its vLLM sibling). Each
// row times one kernel of a GDN layer on one GPU, keyed by phase,
// batch_size, seq_len (tokens per sequence; 1 in generation), the key and
// value heads per GPU (num_k_heads, num_v_heads) and their dims; its
// d_model and model_name do not enter the kernel's inputs. Per phase the
// collector times two kernels separately:
//
//	context:    causal_conv1d_fn (the conv over packed q, k, v) and the
//	            chunked scan chunk_gated_delta_rule (vLLM:
//	            chunk_gated_delta_rule_flashinfer on Blackwell) with the
//	            q/k l2norm in the kernel, over given g and beta
//	generation: causal_conv1d_update and the fused recurrence
//	            fused_recurrent_gated_delta_rule_packed_decode (gating
//	            from a, b, A_log and dt_bias, l2norm and the fp32 state
//	            update in one kernel)
//
// The scan and the recurrence are the op sim's recurrent update prices
// (kernels.RecurrentShape): they become gdn tables, one per phase and
// kernel. The conv rows are skipped (sim prices the conv as its own op),
// and so are FlashInfer's bf16-state decode rows
// (flashinfer_gated_delta_rule_decode: SGLang selects it only for a
// bf16 mamba_ssm_dtype; the Qwen3.5 configs pin float32, the collector's
// docstring says).
func (im *perfdbImport) readGDN(f perfdbFile, rd io.Reader) error {
	c, err := newCSV(f.rel, rd, []string{"kernel_source", "phase", "batch_size", "seq_len", "num_k_heads", "head_k_dim",
		"num_v_heads", "head_v_dim", "latency", "device"})
	if err != nil {
		return err
	}
	var g groups
	seen := map[string]bool{}
	err = c.each(func(r record) error {
		ks := r.str("kernel_source")
		var phase string
		switch r.str("phase") {
		case "context":
			phase = "prefill"
		case "generation":
			phase = "decode"
		default:
			return r.errf("phase %q is neither context nor generation", r.str("phase"))
		}
		switch ks {
		case "causal_conv1d_fn", "causal_conv1d_update":
			im.skip(f, "the causal conv (sim prices it as its own op)")
			return nil
		case "flashinfer_gated_delta_rule_decode":
			im.skip(f, "FlashInfer's bf16-state decode (SGLang runs it only for a bf16 mamba_ssm_dtype)")
			return nil
		}
		v, err := r.counts("batch_size", "seq_len", "num_k_heads", "head_k_dim", "num_v_heads", "head_v_dim")
		if err != nil {
			return err
		}
		batch, seqLen, kh, kd, vh, vd := v[0], v[1], v[2], v[3], v[4], v[5]
		if phase == "decode" && seqLen != 1 {
			return r.errf("a generation row runs one token per sequence: seq_len must be 1, got %d", seqLen)
		}
		lat, err := r.latencyUs("latency", 1e3)
		if err != nil {
			return err
		}
		point := fmt.Sprintf("(k_heads %d, v_heads %d, seqs %d, seq_len %d)", kh, vh, batch, seqLen)
		key := fmt.Sprintf("%s|%s|%d|%d", phase, ks, kd, vd)
		if seen[key+point] {
			im.skip(f, "another model's row at a kernel shape already read (d_model is not an input of the kernel): the first row kept")
			return nil
		}
		seen[key+point] = true
		name := fmt.Sprintf("gdn.%s-%s.%s.k%d-v%d", f.engine, f.engVer, phase, kd, vd)
		x := g.get(key, func() Table {
			p := im.prov(f, ks, "eager", "unknown",
				"Gated DeltaNet state update of one layer, aiconfigurator collector: "+ks+" alone ("+r.str("phase")+" phase) over batch_size sequences of seq_len new tokens, num_k_heads and num_v_heads per GPU, fp32 state; the causal conv is a separate row, not read",
				"latency ms -> latency_us (x1000, rounded to 1 ps)")
			p.GPULabel = r.str("device")
			return Table{Name: name, Op: string(OpGDN), Keys: Keys{Phase: phase, HeadDim: kd, VHeadDim: vd},
				Columns: []string{"k_heads", "v_heads", "seqs", "seq_len", "latency_us"}, Provenance: p}
		})
		return x.add(r, point, []float64{float64(kh), float64(vh), float64(batch), float64(seqLen), lat})
	})
	if err != nil {
		return err
	}
	g.nameByKernel()
	g.flush(im.file)
	return nil
}
