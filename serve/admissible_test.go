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

// TestSGLangPrefillPoolNeverAdmissible: a disaggregated SGLang prefill
// pool admits by the same new-token ratio (each prefill request asks for
// its prompt plus its one token), so a prompt its pool holds as blocks but
// that admission can never take is reported unservable, naming the
// prefill pool's need, as the aggregated engine's is; a pool one block
// larger serves it.
func TestSGLangPrefillPoolNeverAdmissible(t *testing.T) {
	run := func(prefillTokens int) error {
		cfg := DefaultConfig(SGLang, "H200", 141e9)
		cfg.Memory = Memory{KVBytesPerToken: 100, KVCapacity: 1e6, BlockSize: 4, Groups: 1}
		cfg.Workload = Workload{Requests: 4, MaxConcurrency: 2, RequestRate: math.Inf(1), Burstiness: 1, InputTokens: 12, OutputTokens: 8}
		pre := Pool{Workers: 1, GPUs: 1, Memory: Memory{KVBytesPerToken: 100, KVCapacity: unit.Bytes(prefillTokens) * 100, BlockSize: 4, Groups: 1}, Coster: realistic}
		dec := Pool{Workers: 1, GPUs: 1, Memory: cfg.Memory, Coster: realistic}
		cfg.Disagg = &Disagg{Prefill: pre, Decode: dec, KVBytesPerToken: 100, TransferBandwidth: math.Inf(1)}
		_, err := Run(cfg, realistic)
		return err
	}
	var ue *UnservableError
	require.True(t, errors.As(run(12), &ue), "12 tokens of blocks hold the prompt, SGLang's admission needs 12 + 1 + 1")
	require.Equal(t, 14, ue.Tokens)
	require.NoError(t, run(16), "14 <= 16")
}
