package sim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/comm"
	"github.com/moecast/moecast/internal/dtype"
	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/kernels"
	"github.com/moecast/moecast/model"
)

// sharedSim builds a sim of a shared config.json on 8 H200 at TP tp, EP
// ep (skipped without the shared data).
func sharedSim(t *testing.T, name string, tp, ep int) *Sim {
	t.Helper()
	m, err := model.LoadFile(filepath.Join(sharedConfigs, name+"_config.json"))
	if err != nil {
		t.Skipf("shared model configs not readable: %v", err)
	}
	g, _ := kernels.LookupGPU("h200-sxm")
	f, _ := comm.LookupFabric("nvlink4")
	s, err := New(Config{Model: m, KVCache: dtype.KVBF16, GPU: g, GPUs: 8, Fabric: f,
		Layout: model.Layout{TP: tp, EP: ep, DP: 8 / tp}, Graphs: true, AllReduce: comm.Auto, GPUMemoryUtilization: 0.9})
	require.NoError(t, err)
	return s
}

// TestHybridMemoryAndCost: recurrent layers hold a fixed state per
// sequence and their decode update does not grow with the context; the
// attention layers' KV does; sliding-window layers keep at most the
// window; compressed (DeepSeek-V4) layers a fraction of the context.
func TestHybridMemoryAndCost(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		tp, ep    int
		recurrent string // the decode-update op of the recurrent layers ("" for none)
		state     bool   // a recurrent state per sequence
		window    int    // the model's window (0: none)
	}{
		{"qwen3.5 gated deltanet", "Qwen--Qwen3.5-35B-A3B", 2, 8, "gated-deltanet recurrent update (decode)", true, 0},
		{"nemotron-3 mamba-2", "nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 2, 8, "mamba2 recurrent update (decode)", true, 0},
		{"kimi-k3 kda", "moonshotai--Kimi-K3", 8, 8, "kda recurrent update (decode)", true, 0},
		{"gemma-4 local/global", "google--gemma-4-26B-A4B", 2, 8, "", false, 1024},
		{"deepseek-v4 compressed", "deepseek-ai--DeepSeek-V4-Flash", 8, 8, "", false, 128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sharedSim(t, tt.file, tt.tp, tt.ep)
			short, err := s.Step(16, 1024)
			require.NoError(t, err)
			long, err := s.Step(16, 65536)
			require.NoError(t, err)
			mem := long.Memory
			assert.Equal(t, tt.state, mem.StatePerSeq > 0, "state per sequence %s", mem.StatePerSeq)
			assert.Equal(t, tt.window, mem.Window)
			// A sequence holds context x growing KV + window x windowed KV + state.
			perSeq := 65536*float64(mem.KVPerToken-mem.KVWindowPerToken) + float64(min(65536, mem.Window))*float64(mem.KVWindowPerToken) + float64(mem.StatePerSeq)
			seqs := ceilDiv(16, 8/s.sh.attnTP)
			assert.InEpsilon(t, float64(seqs)*perSeq, float64(mem.KV), 1e-9)
			assert.Less(t, perSeq, 65536*float64(mem.KVPerToken)+float64(mem.StatePerSeq)+1, "the window bounds the windowed layers")
			assert.Greater(t, long.Step.Time, short.Step.Time, "the attention layers read more context")
			if tt.recurrent == "" {
				return
			}
			opTime := func(ctx int) unit.Seconds {
				ops, err := s.Explain(16, ctx)
				require.NoError(t, err)
				for _, o := range ops {
					if o.Name == tt.recurrent {
						return o.Estimate.Time
					}
				}
				t.Fatalf("no op %q", tt.recurrent)
				return 0
			}
			assert.Equal(t, opTime(1024), opTime(65536), "the recurrent update reads the state, not the context")
		})
	}
}
