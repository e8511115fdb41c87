package calib

import "strings"

// fusedMLACollector lists the (GPU preset, vLLM release) whose perf
// database MLA decode module rows were collected with aiconfigurator's
// fused-op collector: at ai-dynamo/aiconfigurator @ 095f58a only
// systems/data/b200_sxm/mla/vllm/0.24.0 (its collection_meta.yaml:
// "Re-collected 2026-07-27 on B200 with the fused-op collector fix
// (ai-dynamo/aiconfigurator#1423)", norm_dispatch:
// vllm_c_eager_surrogate). Every other system's and release's rows are
// the legacy collector's (collection_meta.yaml without norm_dispatch).
var fusedMLACollector = map[string]bool{"b200-sxm 0.24.0": true}

// LegacyMLA says whether an MLA module table of GPU preset gpu, measured
// on engine at version, with source-policy origin label origin
// (originLabel: "perfdb vllm 0.24.0 mla rows" for the perf database's),
// holds the legacy collector's rows, whose native norm/rotary chain
// kernels.LegacyMLAOverhead takes off. Only the perf database's vLLM rows
// are; moecast's own kernels and another source's are not.
func LegacyMLA(gpu, engine, version, origin string) bool {
	return engine == "vllm" && strings.HasPrefix(origin, "perfdb ") && !fusedMLACollector[gpu+" "+version]
}
