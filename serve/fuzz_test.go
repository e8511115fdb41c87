package serve

import (
	"errors"
	"math"
	"testing"

	"github.com/moecast/moecast/internal/unit"

	"github.com/moecast/moecast/model"
)

// FuzzRun: any configuration either fails validation (*model.FieldError), cannot
// be served (*UnservableError), or completes every request with finite,
// non-negative metrics and the exact output lengths.
func FuzzRun(f *testing.F) {
	f.Add(uint8(0), uint16(4), uint16(20), uint16(500), uint16(20), 0.0, 1.0, 0.0, uint8(0), 0.7, uint32(1e5), uint8(16), false, uint64(0))
	f.Add(uint8(1), uint16(8), uint16(30), uint16(900), uint16(9), 5.0, 0.5, 0.3, uint8(2), 0.6, uint32(3000), uint8(1), true, uint64(3))
	f.Add(uint8(0), uint16(0), uint16(40), uint16(64), uint16(64), 50.0, 2.0, 0.9, uint8(3), 1.0, uint32(600), uint8(16), false, uint64(9))
	f.Add(uint8(1), uint16(3), uint16(10), uint16(1), uint16(1), math.Inf(1), math.Inf(1), 0.0, uint8(1), 0.0, uint32(10), uint8(4), false, uint64(1))
	f.Add(uint8(0), uint16(2), uint16(5), uint16(0), uint16(5), math.NaN(), -1.0, 1.0, uint8(40), 2.0, uint32(0), uint8(0), false, uint64(2))
	f.Fuzz(func(t *testing.T, eng uint8, c, requests, in, out uint16, rate, burst, rr float64, k uint8, acc float64,
		kvTokens uint32, bs uint8, mixed bool, seed uint64) {
		cfg := DefaultConfig(Engine(eng%3), "H200", 141e9)
		cfg.MaxNumBatchedTokens = 2048
		cfg.MaxNumSeqs = min(cfg.MaxNumSeqs, 256)
		cfg.MixedChunk = mixed
		cfg.Memory = Memory{KVBytesPerToken: 100, KVCapacity: unit.Bytes(kvTokens) * 100, BlockSize: int(bs), Groups: 1}
		if k > 0 {
			cfg.Spec = Spec{DraftTokens: int(k % 20), Acceptance: []float64{acc}, Lookahead: int(k % 20)}
		}
		if rate < 1 {
			rate = -rate // keep open loops short: rates below 1/s make long idle runs, not new paths
		}
		cfg.Workload = Workload{Requests: int(requests % 64), MaxConcurrency: int(c % 64), RequestRate: rate,
			Burstiness: burst, InputTokens: int(in % 4096), OutputTokens: int(out % 256), RangeRatio: rr, RangeStyle: RangeStyle(eng / 3 % 2)}
		cfg.Seed = seed
		r, err := Run(cfg, realistic)
		if err != nil {
			var fe *model.FieldError
			var ue *UnservableError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if r.Completed != cfg.Workload.Requests {
			t.Fatalf("completed %d of %d", r.Completed, cfg.Workload.Requests)
		}
		for _, v := range []float64{float64(r.Duration), r.RequestThroughput, r.OutputThroughput, r.TotalTokenThroughput,
			float64(r.TTFT.Mean), float64(r.TTFT.P99), float64(r.TPOT.Mean), float64(r.ITL.P99), float64(r.E2EL.Mean),
			r.MeanBatch, float64(r.KVPeakPerGPU), r.MeanAcceptanceLength} {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("metric %g not finite and >= 0: %+v", v, r)
			}
		}
		fixed := cfg.Workload.RangeRatio == 0 && cfg.Workload.RangeStyle == RangeSymmetric || cfg.Workload.RangeRatio == 1 && cfg.Workload.RangeStyle == RangeBelow
		if fixed && r.TotalOutputTokens != cfg.Workload.Requests*cfg.Workload.OutputTokens {
			t.Fatalf("output tokens %d, want %d", r.TotalOutputTokens, cfg.Workload.Requests*cfg.Workload.OutputTokens)
		}
		if r.KVPeakPerGPU > cfg.Memory.KVCapacity {
			t.Fatalf("peak KV %g above capacity %g", float64(r.KVPeakPerGPU), float64(cfg.Memory.KVCapacity))
		}
	})
}

// FuzzRunDisagg: a disaggregation with each pool's own settings (token
// budget, max_prefill_tokens, max_num_seqs, scheduler_recv_interval,
// attention DP ranks, KV capacity), speculative decoding with the
// synchronous worker, and vLLM capture sizes: it fails validation, cannot
// be served, or completes every request with finite, non-negative
// metrics; never a panic, an internal error or a hang.
func FuzzRunDisagg(f *testing.F) {
	f.Add(uint8(0), uint16(8), uint16(40), uint16(1024), uint16(32), uint32(0), uint32(0), uint16(0), uint8(0), uint8(1), uint8(0), false, uint32(1e6), uint32(1e6), uint8(0), uint64(0))
	f.Add(uint8(1), uint16(16), uint16(60), uint16(3000), uint16(16), uint32(1024), uint32(512), uint16(8), uint8(10), uint8(4), uint8(3), true, uint32(5000), uint32(2e5), uint8(3), uint64(1))
	f.Add(uint8(0), uint16(4), uint16(20), uint16(500), uint16(8), uint32(3), uint32(1), uint16(1), uint8(1), uint8(1), uint8(3), false, uint32(600), uint32(600), uint8(5), uint64(2))
	f.Add(uint8(1), uint16(2), uint16(10), uint16(100), uint16(4), uint32(1<<25), uint32(0), uint16(0), uint8(200), uint8(8), uint8(1), true, uint32(10), uint32(1), uint8(0), uint64(3))
	f.Fuzz(func(t *testing.T, eng uint8, c, requests, in, out uint16, pBudget, pPrefill uint32, dSeqs uint16, recv, groups, k uint8, sync bool,
		pTokens, dTokens uint32, sizes uint8, seed uint64) {
		e := Engine(eng % 2)
		cfg := disagg(point(e, int(c%64), int(requests%64), int(in%4096), int(out%128)), 1+int(eng/2%2), 1+int(eng/4%2), 50e9, 20e-6)
		cfg.Seed = seed
		d := cfg.Disagg
		d.Prefill.Memory.KVCapacity = unit.Bytes(pTokens) * d.Prefill.Memory.KVBytesPerToken
		d.Decode.Memory.KVCapacity = unit.Bytes(dTokens) * d.Decode.Memory.KVBytesPerToken
		d.Decode.Memory.Groups = 1 + int(groups%8)
		d.Prefill.MaxNumBatchedTokens = int(pBudget)
		d.Prefill.MaxPrefillTokens = int(pPrefill)
		d.Decode.MaxNumSeqs = int(dSeqs)
		d.Prefill.SchedulerRecvInterval = int(recv % 40)
		d.Decode.SchedulerRecvInterval = int(recv / 40)
		if k%8 > 0 {
			cfg.Spec = Spec{DraftTokens: int(k % 8), Acceptance: []float64{0.7}, Lookahead: int(k % 8), Sync: sync}
			if sync {
				cfg.AsyncScheduling = false
			}
		}
		if sizes > 0 && e == VLLM {
			cfg.CUDAGraphSizes = []int{int(sizes), int(sizes) / 2, int(sizes), 1 + int(sizes)*3}
		}
		r, err := Run(cfg, realistic)
		if err != nil {
			var fe *model.FieldError
			var ue *UnservableError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if r.Completed != cfg.Workload.Requests {
			t.Fatalf("completed %d of %d", r.Completed, cfg.Workload.Requests)
		}
		for _, v := range []float64{float64(r.Duration), r.RequestThroughput, r.OutputThroughput,
			float64(r.TTFT.Mean), float64(r.TTFT.P99), float64(r.TPOT.Mean), float64(r.ITL.P99), float64(r.E2EL.Mean), r.MeanBatch} {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("metric %g not finite and >= 0: %+v", v, r)
			}
		}
	})
}
