package cli

import (
	"testing"

	"github.com/moecast/moecast/serve"
	"github.com/stretchr/testify/assert"
)

// TestServingEvalVersion: plan's serving simulation follows
// runtime.engine_version as simulate does: vLLM's full-ISL admission from
// v0.19.0, its async scheduling from v0.14.0 (runtime.async_scheduling
// wins).
func TestServingEvalVersion(t *testing.T) {
	off := false
	for _, tc := range []struct {
		engine          serve.Engine
		version         string
		async           *bool
		fullISL, asyncs bool
	}{
		{serve.VLLM, "", nil, true, true},
		{serve.VLLM, "0.19.0", nil, true, true},
		{serve.VLLM, "0.18.1", nil, false, true},
		{serve.VLLM, "0.12.0", nil, false, false},
		{serve.VLLM, "", &off, true, false},
		{serve.SGLang, "", nil, false, true},
	} {
		e := &servingEval{version: tc.version, async: tc.async}
		cfg := serve.Config{AsyncScheduling: true, ReserveFullISL: true}
		e.versionDefaults(&cfg, tc.engine)
		assert.Equal(t, tc.fullISL, cfg.ReserveFullISL, "%v %q full ISL", tc.engine, tc.version)
		assert.Equal(t, tc.asyncs, cfg.AsyncScheduling, "%v %q async", tc.engine, tc.version)
	}
}
