package serve

import (
	"errors"
	"math"
	"testing"

	"github.com/moecast/moecast/internal/unit"
	"github.com/stretchr/testify/require"
)

// TestSGLangNeverAdmissible: a request that fits the cache as vLLM holds
// it (prompt + output - 1 tokens) but that SGLang's ratio admission can
// never take (prompt + output must be below the whole pool) is reported
// unservable, not left waiting on an idle engine (FuzzRun found it as "a
// step scheduled nothing").
func TestSGLangNeverAdmissible(t *testing.T) {
	run := func(e Engine, kvTokens int) error {
		cfg := DefaultConfig(e, "H200", 141e9)
		cfg.Memory = Memory{KVBytesPerToken: 100, KVCapacity: unit.Bytes(kvTokens) * 100, BlockSize: 4, Groups: 1}
		cfg.Workload = Workload{Requests: 6, MaxConcurrency: 19, RequestRate: math.Inf(1), Burstiness: 1, InputTokens: 2, OutputTokens: 91}
		_, err := Run(cfg, realistic)
		return err
	}
	var ue *UnservableError
	require.True(t, errors.As(run(SGLang, 93), &ue), "92 tokens of blocks, SGLang needs 2 + 91 + 1")
	require.Equal(t, 94, ue.Tokens)
	require.NoError(t, run(SGLang, 96), "94 <= 96")
	require.NoError(t, run(VLLM, 93), "vLLM holds 2 + 91 - 1 = 92 tokens")
}
