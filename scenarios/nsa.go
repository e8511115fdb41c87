package scenarios

import (
	"fmt"
	"sort"
	"strings"

	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/serve"
)

// SGLang runs DeepSeek Sparse Attention layers (GLM-5, DeepSeek-V3.2)
// through its NSA attention backend, whose prefill implementation is
// --nsa-prefill-backend (runtime.nsa_prefill_backend). Where the command
// line does not set it, SGLang picks it from the KV cache dtype: an
// fp8_e4m3 cache takes flashmla_auto, a bf16 cache flashmla_sparse on
// Blackwell and Hopper (server_args.py _set_default_nsa_backends; the
// default on SM100 for a DSA model's "auto" KV cache is fp8_e4m3,
// _set_default_nsa_kv_cache_dtype; sgl-project/sglang PR #20326,
// 2026-03-11, documents the table: flashmla_kv "Default decode for FP8",
// flashmla_auto "Auto-selects flashmla_sparse or flashmla_kv"). On
// Blackwell flashmla_auto runs an extend whose KV is shorter than 512 x
// its new tokens, a fresh prompt's chunk, through flashmla_sparse
// (nsa_backend.py set_nsa_prefill_impl: "Heuristic based on benchmarking
// flashmla_kv vs flashmla_sparse + dequantize_k_cache_paged"), which pads
// the rank's q heads to 128 on Blackwell (64 on Hopper) for
// flash_mla_sparse_fwd (_forward_flashmla_sparse). SGLang's dense
// MHA_ONE_SHOT shortcut for prompts no longer than index_topk is off for
// GlmMoeDsaForCausalLM on Blackwell ("Force NSA prefill to use sparse MLA
// (i.e. disable MHA_ONE_SHOT) for GlmMoeDsaForCausalLM on Blackwell",
// server_args.py _handle_model_specific_adjustments, since PR #18521,
// 2026-02-10, and PR #20062, 2026-03-09). So every prefill chunk of GLM-5
// on B200/B300 under SGLang's default prefill backend attends through the
// FlashMLA sparse kernel at 128 padded heads (sim.Config.SparsePrefill,
// kernels.SparseMLA); decodes take flashmla_kv's split-KV decode kernel,
// which moecast keeps pricing as the MLA decode kernel over the selected
// keys. A command line with --nsa-prefill-backend trtllm (InferenceX's
// GLM-5 FP8 script) runs TRT-LLM's sparse MLA kernel instead, which
// moecast does not price apart.

// nsaPrefillBackends are runtime.nsa_prefill_backend's values: SGLang's
// --nsa-prefill-backend choices (server_args.py NSA_CHOICES).
var nsaPrefillBackends = map[string]bool{
	"flashmla_sparse": true, "flashmla_kv": true, "flashmla_auto": true, "fa3": true,
	"tilelang": true, "aiter": true, "trtllm": true,
}

// nsaPrefillBackendNames lists nsaPrefillBackends for messages.
func nsaPrefillBackendNames() string {
	n := make([]string, 0, len(nsaPrefillBackends))
	for k := range nsaPrefillBackends {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// glmDSAArch is the architecture whose prefill never takes SGLang's
// MHA_ONE_SHOT path on Blackwell.
const glmDSAArch = "GlmMoeDsaForCausalLM"

// buildNSAPrefill reads runtime.nsa_prefill_backend and sets
// sim.Config.SparsePrefill (setSparsePrefill).
func (s *Scenario) buildNSAPrefill() error {
	b := s.doc.raw.Runtime.NSAPrefillBackend
	if b != "" && !nsaPrefillBackends[b] {
		return s.doc.errorf("runtime.nsa_prefill_backend", "unknown backend %q (want one of %s)", b, nsaPrefillBackendNames())
	}
	s.Serving.NSAPrefillBackend = b
	if b != "" && (s.Serving.Engine != serve.SGLang || !s.dsaModel()) {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: runtime.nsa_prefill_backend %q is SGLang's prefill backend for DeepSeek Sparse Attention layers; "+
			"this scenario runs %s with no such layers, so it is ignored", s.pos("runtime.nsa_prefill_backend"), b, s.Serving.Engine))
	}
	s.setSparsePrefill()
	return nil
}

// dsaModel reports whether the model's attention layers carry a DSA
// indexer (index_topk).
func (s *Scenario) dsaModel() bool {
	m := s.Config.Model
	return m != nil && m.Attn.IndexHeads > 0 && m.Attn.IndexTopK > 0
}

// NSAPrefillImpl is the prefill implementation SGLang's NSA backend runs
// the scenario's DSA layers with: runtime.nsa_prefill_backend, else
// SGLang's default for the KV cache (flashmla_auto on an fp8 cache,
// flashmla_sparse on a bf16 one); "" where SGLang does not run DSA layers.
func (s *Scenario) NSAPrefillImpl() string {
	if s.Serving.Engine != serve.SGLang || !s.dsaModel() {
		return ""
	}
	if b := s.Serving.NSAPrefillBackend; b != "" {
		return b
	}
	if s.Config.KVCache == dtype.KVFP8 || kernels.SparseMLAHeadTile(s.Config.GPU.Arch) == 128 {
		// SGLang's DSA KV cache is fp8_e4m3 on SM100 unless set (auto)
		return "flashmla_auto"
	}
	return "flashmla_sparse"
}

// sparsePrefillDefault reports whether SGLang runs every prefill chunk of
// the scenario's DSA layers through FlashMLA's sparse kernel: GLM-5's
// architecture on Blackwell (no MHA_ONE_SHOT) with a FlashMLA prefill
// implementation.
func (s *Scenario) sparsePrefillDefault() bool {
	m := s.Config.Model
	if m == nil || m.Architecture != glmDSAArch || kernels.SparseMLAHeadTile(s.Config.GPU.Arch) != 128 {
		return false
	}
	switch s.NSAPrefillImpl() {
	case "flashmla_sparse", "flashmla_auto":
		return true
	}
	return false
}

// setSparsePrefill sets sim.Config.SparsePrefill as sparsePrefillDefault
// says, or off with the sglang-sparse-prefill mechanism off.
func (s *Scenario) setSparsePrefill() {
	s.Config.SparsePrefill = !s.Serving.NoSparsePrefill && s.sparsePrefillDefault()
}
