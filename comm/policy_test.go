package comm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/unit"
)

func TestPolicyChooseReasons(t *testing.T) {
	noP2P := fabric(t, "pcie-gen5")
	noP2P.P2P = false
	tests := []struct {
		name   string
		policy Policy
		fabric Fabric
		ranks  int
		bytes  unit.Bytes
		want   Impl
		reason string
	}{
		{"single rank", VLLMPolicy, fabric(t, "nvlink4"), 1, 14336, NCCL, "single rank: no communication"},
		{"no p2p", VLLMPolicy, noP2P, 2, 14336, NCCL, "vLLM uses NCCL: no P2P between the GPUs"},
		{"too large", VLLMPolicy, fabric(t, "nvlink4"), 8, 8 * unit.MiB, NCCL, "vLLM uses NCCL: 8 MiB at or above its custom all-reduce's 8 MiB limit"},
		{"odd ranks", SGLangPolicy, fabric(t, "nvlink4"), 3, 14336, NCCL, "SGLang uses NCCL: its custom all-reduce runs on 2, 4, 6 or 8 GPUs, not 3"},
		{"two ranks", SGLangPolicy, fabric(t, "pcie-gen5"), 2, 4 * unit.MiB, OneShot, "SGLang custom all-reduce: one-shot, always on 2 GPUs"},
		{"pcie 4 ranks", VLLMPolicy, fabric(t, "pcie-gen5"), 4, 14336, NCCL, "vLLM uses NCCL: its custom all-reduce is off on more than 2 GPUs without NVLink (4)"},
		{"4 ranks below 512 KiB", VLLMPolicy, fabric(t, "nvlink4"), 4, 300 * unit.KiB, OneShot, "vLLM custom all-reduce: one-shot below 512 KiB on <= 4 GPUs"},
		{"8 ranks below 256 KiB", SGLangPolicy, fabric(t, "nvlink4"), 8, 255 * unit.KiB, OneShot, "SGLang custom all-reduce: one-shot below 256 KiB on <= 8 GPUs"},
		{"8 ranks 1 MiB", VLLMPolicy, fabric(t, "nvlink4"), 8, unit.MiB, TwoShot, "vLLM custom all-reduce: two-shot above the one-shot limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Choose(tt.fabric, tt.ranks, tt.bytes)
			assert.Equal(t, tt.want, got.Impl)
			assert.Equal(t, tt.reason, got.Reason)
			c := Comm{Fabric: tt.fabric, Policy: tt.policy}
			assert.Equal(t, tt.want, c.ChooseAllReduce(tt.ranks, tt.bytes), "Comm resolves Auto through its policy")
		})
	}
}

func TestPolicyRefusal(t *testing.T) {
	noP2P := fabric(t, "pcie-gen5")
	noP2P.P2P = false
	tests := []struct {
		name   string
		policy Policy
		fabric Fabric
		ranks  int
		impl   Impl
		want   string
	}{
		{"nccl never refused", VLLMPolicy, noP2P, 8, NCCL, ""},
		{"one rank", VLLMPolicy, noP2P, 1, OneShot, ""},
		{"runs", SGLangPolicy, fabric(t, "nvlink4"), 8, TwoShot, ""},
		{"no p2p", VLLMPolicy, noP2P, 2, OneShot, "fabric pcie-gen5 has no P2P, so no custom all-reduce can run; NCCL is priced"},
		{"odd ranks", SGLangPolicy, fabric(t, "nvlink4"), 3, OneShot, "stock SGLang runs its custom all-reduce on 2, 4, 6 or 8 GPUs, not 3 (it uses NCCL); priced as asked, from a table of that kernel or its model"},
		{"pcie 4", VLLMPolicy, fabric(t, "pcie-gen5"), 4, OneShot, "stock vLLM disables its custom all-reduce on more than 2 GPUs without NVLink (it uses NCCL on this 4-GPU pcie-gen5 group); priced as asked, for a patched engine, from a table of that kernel or its model, never from the engine's measured all-reduce"},
		{"twoshot on 2", VLLMPolicy, fabric(t, "nvlink4"), 2, TwoShot, "stock vLLM always runs the one-shot kernel on 2 GPUs; priced as asked, from a table of that kernel or its model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.policy.Refusal(tt.fabric, tt.ranks, tt.impl))
		})
	}
}

// An SGLang scenario reads SGLang's measured all-reduce, and vLLM's only
// where the file has no SGLang table; vLLM never reads SGLang's.
func TestTablesEngineEntryPoint(t *testing.T) {
	vllm := arTable(t, "f#vllm", "vllm", "", 1)
	sgl := arTable(t, "f#sglang", "sglang", "", 2)
	tests := []struct {
		name   string
		colls  []*Table
		policy Policy
		impl   Impl
		table  string
	}{
		{"vllm reads vllm", []*Table{sgl, vllm}, VLLMPolicy, OneShot, "f#vllm"},
		{"sglang reads sglang", []*Table{vllm, sgl}, SGLangPolicy, OneShot, "f#sglang"},
		{"sglang auto", []*Table{vllm, sgl}, SGLangPolicy, Auto, "f#sglang"},
		{"sglang falls back to vllm", []*Table{vllm}, SGLangPolicy, TwoShot, "f#vllm"},
		{"vllm never reads sglang", []*Table{sgl}, VLLMPolicy, OneShot, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := &Tables{Colls: tt.colls}
			e, ok := ts.AllReduceFor(tt.policy, tt.impl, 8, 16384)
			require.Equal(t, tt.table != "", ok)
			assert.Equal(t, tt.table, e.Source.Table)
			c := Comm{Fabric: fabric(t, "nvlink4"), Graphs: true, Tables: ts, Policy: tt.policy}
			if ok && tt.impl != TwoShot {
				assert.Equal(t, tt.table, c.AllReduce(Auto, 8, 16384).Source.Table, "Comm asks its engine's entry point")
			}
		})
	}
}
