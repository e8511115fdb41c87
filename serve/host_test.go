package serve

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/cost"
)

// TestHostOverlapByEngine: the host work of a prefill step adds to the
// step under vLLM's async scheduling (it hides decode steps only) and is
// hidden under SGLang's overlap scheduler (every batch); with the overlap
// off both add it. One request, one prefill step: TTFT is that step's
// wall time.
func TestHostOverlapByEngine(t *testing.T) {
	free := linear{Fixed: 5e-3, PerDecode: 1e-5, PerPrefill: 1e-5}
	const in, host = 100, 2e-3
	g := free.Fixed + free.PerPrefill*in
	cases := []struct {
		name  string
		e     Engine
		async bool
		want  float64
	}{
		{"vllm async", VLLM, true, g + host},
		{"vllm sync", VLLM, false, g + host},
		{"sglang overlap", SGLang, true, g},
		{"sglang no overlap", SGLang, false, g + host},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(tc.e, 1, 1, in, 2)
			cfg.Host = HostOverhead{PerStep: host}
			cfg.AsyncScheduling = tc.async
			r, err := Run(cfg, free)
			require.NoError(t, err)
			within(t, float64(r.TTFT.Mean), tc.want, 1e-12, "TTFT of one prefill step")
		})
	}
}

// TestHostLongerThanGPU: overlapped host work still bounds the step when
// it is the longer of the two (wall = max), so a decode step of GPU time
// below the host work costs the host work; without overlap it adds. The
// time beyond the GPU is booked as cost.Other.
func TestHostLongerThanGPU(t *testing.T) {
	free := linear{Fixed: 1e-3, PerDecode: 1e-6, PerPrefill: 1e-6}
	const host = 4e-3
	for _, e := range Engines() {
		cfg := point(e, 4, 4, 1, 65)
		cfg.Host = HostOverhead{PerStep: host}
		cfg.AsyncScheduling = true
		over, err := Run(cfg, free)
		require.NoError(t, err)
		within(t, float64(over.TPOT.Mean), host, 1e-12, e.String()+" overlapped TPOT = host")
		cfg.AsyncScheduling = false
		sync, err := Run(cfg, free)
		require.NoError(t, err)
		within(t, float64(sync.TPOT.Mean), free.decode(4, 1, 0)+host, 1e-9, e.String()+" sync TPOT = GPU + host")
		assert.Greater(t, float64(sync.Breakdown[cost.Other]), float64(over.Breakdown[cost.Other]), e.String())
	}
}

func TestAsyncDefault(t *testing.T) {
	cases := []struct {
		e    Engine
		v    string
		want bool
	}{
		{VLLM, "0.11.2", false},
		{VLLM, "0.12.0", false},
		{VLLM, "v0.13.0", false},
		{VLLM, "0.14.0", true},
		{VLLM, "0.15.1", true},
		{VLLM, "0.19.0", true},
		{VLLM, "1.0", true},
		{VLLM, "", true},
		{VLLM, "nightly-5b8c30d62b754b57", true},
		{VLLM, "0", true},
		{SGLang, "0.5.1.post1", true},
		{SGLang, "", true},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, AsyncDefault(tc.e, tc.v), "%s %q", tc.e, tc.v)
	}
}

// TestEngineHost: every engine of the table has its measured host work,
// and SGLang's overlap covers prefill steps where vLLM's does not.
func TestEngineHost(t *testing.T) {
	for _, e := range Engines() {
		h := EngineHost(e)
		assert.Greater(t, float64(h.PerStep), 0.0, e.String())
		assert.Less(t, float64(h.PerStep), 10e-3, "%s: a host pass of a step is milliseconds", e)
	}
	assert.False(t, engines[VLLM].overlapPrefill)
	assert.True(t, engines[SGLang].overlapPrefill)
	assert.Zero(t, EngineHost(Engine(99)))
	assert.True(t, AsyncDefault(Engine(99), "0.1"))
}

// TestSpecSync: SGLang's V1 EAGLE worker (Spec.Sync) runs without overlap
// and pays the host work once per forward: three on a decode (draft,
// verify, draft extend), two on a prefill (target and draft extend). With
// acceptance 0 every verify step emits one token, so TPOT is one verify
// step's wall time and TTFT the prefill step's.
func TestSpecSync(t *testing.T) {
	free := linear{Fixed: 5e-3, PerDecode: 1e-5, PerPrefill: 1e-5}
	const in, host = 100, 0.7e-3
	const k = 2
	prefill := free.Fixed + free.PerPrefill*in
	verify := free.decode(1, k+1, 0)
	cases := []struct {
		name        string
		sync, async bool
		ttft, tpot  float64
	}{
		{"v2 overlapped", false, true, prefill, verify},
		{"no overlap", false, false, prefill + host, verify + host},
		{"v1 sync", true, false, prefill + 2*host, verify + 3*host},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(SGLang, 1, 1, in, 5)
			cfg.Host = HostOverhead{PerStep: host}
			cfg.Spec = Spec{DraftTokens: k, Acceptance: []float64{0}, Lookahead: k, Sync: tc.sync}
			cfg.AsyncScheduling = tc.async
			r, err := Run(cfg, free)
			require.NoError(t, err)
			within(t, float64(r.TTFT.Mean), tc.ttft, 1e-12, "TTFT")
			within(t, float64(r.TPOT.Mean), tc.tpot, 1e-12, "TPOT")
		})
	}

	cfg := point(SGLang, 1, 1, in, 5)
	cfg.Spec = Spec{DraftTokens: k, Acceptance: []float64{0.5}, Sync: true}
	cfg.AsyncScheduling = true
	_, err := Run(cfg, free)
	assert.ErrorContains(t, err, "Spec.Sync")
	cfg.Spec = Spec{Sync: true}
	cfg.AsyncScheduling = false
	_, err = Run(cfg, free)
	assert.ErrorContains(t, err, "Spec.Sync")
}

func TestSpecSyncDefault(t *testing.T) {
	cases := []struct {
		e    Engine
		v    string
		want bool
	}{
		{SGLang, "0.5.9", true},
		{SGLang, "v0.5.9", true},
		{SGLang, "0.5.10.post1", true},
		{SGLang, "0.4.6", true},
		{SGLang, "0.5.11", false},
		{SGLang, "0.6.0", false},
		{SGLang, "", false},
		{SGLang, "nightly-dev-20260402-d7256eb6", false},
		{VLLM, "0.5.9", false},
		{VLLM, "", false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, SpecSyncDefault(tc.e, tc.v), "%s %q", tc.e, tc.v)
	}
	assert.Equal(t, 3, SpecSyncForwards(false))
	assert.Equal(t, 2, SpecSyncForwards(true))
}

func TestVersionPatch(t *testing.T) {
	for v, want := range map[string]int{"0.5.9": 9, "v0.5.10.post1": 10, "0.5.3rc1": 3, "0.5": 0, "0.5.x": 0, "": 0} {
		assert.Equal(t, want, versionPatch(v), v)
	}
}

// TestSpecPrepBubble: vLLM's async scheduling with an EAGLE/MTP draft
// before v0.19.0 (Spec.PrepBubble) hides a verify step's host work behind
// its draft passes alone: with acceptance 0 every verify step emits one
// token, so TPOT is the verify step's GPU time plus the host work beyond
// the draft share of it (hidden whole where the draft outlasts it); the
// prefill step pays the host work either way; the bubble needs async
// scheduling and drafts, and a share in [0, 1).
func TestSpecPrepBubble(t *testing.T) {
	free := linear{Fixed: 5e-3, PerDecode: 1e-5, PerPrefill: 1e-5}
	const in, host = 100, 1.5e-3
	const k = 1
	prefill := free.Fixed + free.PerPrefill*in
	verify := free.decode(1, k+1, 0)
	cases := []struct {
		name   string
		bubble bool
		share  float64
		tpot   float64
	}{
		{"zero bubble", false, 0, verify},
		{"bubble, small draft", true, 0.05, verify + host - 0.05*verify},
		{"bubble, draft outlasts the host", true, 0.5, verify},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := point(VLLM, 1, 1, in, 5)
			cfg.Host = HostOverhead{PerStep: host}
			cfg.Spec = Spec{DraftTokens: k, Acceptance: []float64{0}, Lookahead: k, PrepBubble: tc.bubble, DraftShare: tc.share}
			cfg.AsyncScheduling = true
			r, err := Run(cfg, free)
			require.NoError(t, err)
			within(t, float64(r.TTFT.Mean), prefill+host, 1e-12, "TTFT")
			within(t, float64(r.TPOT.Mean), tc.tpot, 1e-12, "TPOT")
		})
	}

	cfg := point(VLLM, 1, 1, in, 5)
	cfg.Spec = Spec{DraftTokens: k, Acceptance: []float64{0.5}, Lookahead: k, PrepBubble: true}
	cfg.AsyncScheduling = false
	_, err := Run(cfg, free)
	assert.ErrorContains(t, err, "Spec.PrepBubble")
	cfg.AsyncScheduling = true
	cfg.Spec.DraftShare = 1
	_, err = Run(cfg, free)
	assert.ErrorContains(t, err, "Spec.DraftShare")

	for _, tc := range []struct {
		e    Engine
		v    string
		want bool
	}{
		{VLLM, "0.16.0.dev", true}, {VLLM, "0.18.1", true}, {VLLM, "0.19.0", false},
		{VLLM, "", false}, {VLLM, "nightly", false}, {SGLang, "0.5.9", false},
	} {
		assert.Equal(t, tc.want, SpecPrepBubbleDefault(tc.e, tc.v), "%s %q", tc.e, tc.v)
	}
}

// TestProfileDefaults: vLLM's dummy sampler sorts from v0.12 to v0.16
// (FlashInfer's sampler off by default from PR #26859 until the Triton
// kernels of PR #33538), runs the Triton kernel from v0.17 to v0.19
// (until PR #40376 turned FlashInfer's back on), and its indexer
// workspace is kept from v0.14 on, the newest included; SGLang has none.
func TestProfileDefaults(t *testing.T) {
	for _, tc := range []struct {
		e                       Engine
		v                       string
		sort, triton, workspace bool
	}{
		{VLLM, "0.10.2", false, false, false}, {VLLM, "0.11.0", false, false, false},
		{VLLM, "0.12.0", true, false, false}, {VLLM, "0.13.0", true, false, false},
		{VLLM, "0.15.1", true, false, true}, {VLLM, "0.16.0.dev", true, false, true},
		{VLLM, "0.17.0", false, true, true}, {VLLM, "0.18.1", false, true, true},
		{VLLM, "0.19.0", false, true, true}, {VLLM, "0.20.0", false, false, true},
		{VLLM, "", false, false, true}, {VLLM, "nightly", false, false, true},
		{SGLang, "0.5.9", false, false, false}, {SGLang, "", false, false, false},
	} {
		assert.Equal(t, tc.sort, SamplerSortDefault(tc.e, tc.v), "sort %s %q", tc.e, tc.v)
		assert.Equal(t, tc.triton, SamplerTritonDefault(tc.e, tc.v), "triton %s %q", tc.e, tc.v)
		assert.Equal(t, tc.workspace, IndexerWorkspaceDefault(tc.e, tc.v), "workspace %s %q", tc.e, tc.v)
		// The all-reduce fusion pass: from v0.16 (PR #34299, merged
		// 2026-02-11, in the 0.16.0.dev nightlies after it), the newest
		// included, as the indexer workspace from there on.
		ar := tc.e == VLLM && (tc.workspace && !strings.HasPrefix(tc.v, "0.15"))
		assert.Equal(t, ar, ARFusionDefault(tc.e, tc.v), "ar fusion %s %q", tc.e, tc.v)
	}
}
