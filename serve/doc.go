// Package serve is a request-level, deterministic, discrete-event serving
// simulator: it runs a serving engine's scheduler (vLLM V1 or SGLang) over
// the workload `vllm bench serve` sends and reports what that benchmark
// reports (TTFT, TPOT, ITL, E2E latency, throughput), plus what only a
// simulator knows (mean decode batch, mixed steps, preemptions, peak KV,
// time per category, mean acceptance length).
//
// Run is a pure function of its Config and StepCoster: no files, no clock;
// randomness only from rand.New(rand.NewPCG(Config.Seed, 1)). Times are
// unit.Seconds (float64 seconds) from the benchmark's start.
//
// # Parts
//
// Run is an engine-agnostic event loop (run.go) over parts chosen by the
// configuration, each a small interface with its implementations in
// files of their own:
//
//   - Load (workload.go): the requests, their lengths and arrival times.
//     Workload, vllm bench serve's random dataset with a closed loop or
//     gamma arrivals, is the built-in one; Config.Load takes a caller's
//     (a request log, a trace).
//   - client (client.go): vllm bench serve's sender, at most
//     MaxConcurrency requests in flight, and the API server's front end
//     (Config.FrontEnd) the requests cross one at a time before the
//     engine sees them.
//   - instance (instance.go): one engine instance, a scheduler over a KV
//     cache and a waiting queue, building one step at a time.
//   - scheduler: one per engine, sched_vllm.go and sched_sglang.go, made
//     by the engine's row of the engine table (engine.go), which also
//     holds the engine's name, setting names, defaults by GPU, validation,
//     KV block size and the layouts it runs. Adding an engine is one row
//     and one scheduler file.
//   - kvCache (kvcache.go): slots reserved per request; blockPool, paged
//     blocks pooled over the attention groups, is the one implementation.
//   - StepCoster: the price of one step (SimCoster: sim.StepBatch).
//
// The loop jumps the clock to the client's next send when the instance is
// idle; otherwise it has the scheduler build a step, prices it, advances
// the clock by the step's wall time, and applies the outcome (chunks
// computed, tokens streamed, finished requests freed, the scheduler told
// of each), then lets the client send what arrived. Nothing in the loop
// depends on the engine. docs/decisions/0005-serve-design.md says where
// disaggregated prefill/decode, prefix caching, request logs and per-rank
// DP scheduling plug in.
//
// # Time
//
// The engine runs one step at a time with no gap between steps: a step
// takes the coster's GPU time plus the host overhead (Config.Host), which
// async scheduling hides behind the GPU on steps without prefill
// (wall = max(GPU, host)) and which otherwise adds (vLLM's async
// scheduling, vllm-project/vllm PRs #27614/#27914: it hides host work of
// decode steps, not of prefill; on by default from vLLM v0.14.0, off
// before). SGLang's overlap scheduler hides it on every step, prefill
// included (AsyncDefault, host.go). Config.Host is each engine's host
// work per step measured on the CPU side of profiler traces (EngineHost,
// host.go).
// Every token of a step is streamed at the step's end. A request sent
// during a step is seen by the scheduler at the step's end.
//
// # Front end
//
// A sent request first crosses the API server (Config.FrontEnd; sources
// there): one at a time, in the order sent, each for PerRequest plus
// PerInputToken per prompt token (tokenisation, TokenizeTime = 3.6 us/token
// measured; the zero FrontEnd is the library default, see FrontEnd), then
// waits in the engine core's input queue, which the engine drains at its
// step boundaries. A disaggregated deployment's front end (Dynamo's
// frontend) tokenises each request on its own, concurrent requests in
// parallel, before the prefill pool's router takes it (disaggFrontEnd). TTFT counts from the send, as vllm
// bench serve measures it. In a closed loop this breaks the lockstep waves
// an engine alone would run: the first wave's prompts arrive one by one,
// so the first is prefilled alone and the rest in later steps; under vLLM
// the early requests' decodes run beside the later prefills, so the wave's
// requests finish at different steps. Not modelled: output
// detokenisation and streaming in the API server, the client's own HTTP
// time.
//
// # Step costs from sim
//
// SimCoster prices steps with sim.StepBatch (memoised on sim.StepKey, which
// is exact); SimMemory takes the KV bytes per token and the usable KV
// memory per GPU from sim's memory model, the block size the engine sets
// for the attention backend and the DP-attention groups; SimSpec maps
// sim's speculative decoding; SimConfig puts them on DefaultConfig with
// the engine's measured host work per step (EngineHost). sim prices the
// launch costs per step (graph replay, piecewise and eager launches);
// Config.Host the host work before the launch (see SimCoster).
//
// # Workload
//
// Source: vllm-project/vllm `vllm/benchmarks/serve.py` @ def9ce8 and
// `vllm/benchmarks/datasets.py` @ f2e97dd.
//
// Requests are ready at their arrival times: all at t = 0 with
// RequestRate = +Inf, else cumulative gamma(burstiness) intervals rescaled
// so that the last arrival is at n/rate, as vllm bench serve's get_request
// does. A ready request is sent when fewer than MaxConcurrency are in
// flight, so RequestRate = +Inf with MaxConcurrency = C is the closed
// loop (C sent at t = 0, the next when one finishes). Lengths are fixed,
// or uniform on vLLM's random-dataset range [floor(L(1-r)), ceil(L(1+r))];
// every request generates exactly its output length (--ignore-eos).
// Prefix caching is nil (random prompts). With Config.Load the caller's
// requests replace the random dataset and arrivals; the client still
// limits them to MaxConcurrency in flight, and Result.RequestRate is the
// number of requests over the last arrival (+Inf when all arrive at 0).
//
// # vLLM V1
//
// Source: vllm-project/vllm
// `vllm/v1/core/sched/scheduler.py` @ b4622cf,
// `vllm/config/scheduler.py` @ 1f8758d.
//
// Each step has a budget of MaxNumBatchedTokens. Running requests, in the
// order they were admitted, take their decode (1+K tokens) or the rest of
// their prefill, capped by the budget; when a request's KV blocks cannot
// be allocated the newest running request is preempted (blocks freed,
// put at the head of the waiting queue; recomputed from scratch, or with
// RecoverPreempted only the blocks the free queue has evicted since) until
// it fits or is the one preempted. Then, only if nothing was preempted,
// waiting requests are admitted in order while budget remains and fewer
// than MaxNumSeqs run, the last chunked to the remaining budget; with
// ReserveFullISL (scheduler_reserve_full_isl, v0.19.0+) a waiting request
// is admitted only when its whole sequence fits in the free blocks, and
// admission stops at the first that does not. KV slots
// are allocated per request in blocks of Memory.BlockSize for computed +
// new tokens (+ Spec.Lookahead for running requests). With
// LongPrefillTokenThreshold (long_prefill_token_threshold) no request gets
// more prefill tokens than it in a step, in either pass;
// MaxNumPartialPrefills limits nothing in V1 (scheduler.py never reads it)
// but above 1 sets an unset threshold to 4% of MaxModelLen
// (SchedulerConfig.__post_init__, `vllm/config/scheduler.py` @ 01230b4).
// With PrefillScheduleInterval N > 1 (--prefill-schedule-interval,
// vllm-project/vllm PR #44558) on DP ranks (Memory.Groups > 1), a step
// whose DP wave counter (DPEngineCoreProc.step_counter, `vllm/v1/engine/
// core.py` @ 00080ee; shared by the ranks, 0 after they go idle) is not a
// multiple of N defers prefill work while a running request decodes:
// chunks in progress are skipped in the running pass and admission stops
// at the first waiting request with more than one token to compute; it
// does not defer when the last step that took prefills left requests
// waiting (prefill_capacity_bound). One engine without DP never throttles
// (EngineCore._should_throttle_prefills returns False).
//
// # SGLang
//
// Source: sgl-project/sglang `python/sglang/srt/server_args.py` and
// `python/sglang/srt/managers/scheduler.py`.
//
// Prefill first: when a prefill batch can be formed (the chunk in progress,
// then waiting requests in order, at most min(MaxPrefillTokens,
// MaxNumBatchedTokens = chunked_prefill_size) tokens, less one per running
// decode with MixedChunk, at most one request chunked) it runs as its own
// step, with the decodes in it only when MixedChunk is set; otherwise one
// decode step of every running request. With ScheduleConservativeness > 0
// (SGLang's default 1) admission is SGLang's PrefillAdder's: a waiting
// request joins only while its prompt less its cached prefix
// (extend_input_len) plus min(output, 4096) tokens fit in the free and
// evictable KV (cached blocks no request holds) less each running
// request's min(remaining output, 4096) x new_token_ratio, less the
// evictable part of its own prefix, which admission locks; an admitted
// whole prompt reserves its extend and output, a chunk (new or in
// progress) its tokens; the ratio
// starts at 0.7 x ScheduleConservativeness, falls by (init - 0.14 x init) /
// 600 each decode step to 0.14 x init, is reset from the running requests
// after a retraction ((generated + 20 per request) / their outputs) and to
// its start when nothing runs (global_config.py @ 025ea29). A decode that
// cannot get its KV retracts the newest request (the one whose prefill is
// in progress, if it has no chunk in this step, else the newest running
// one; SGLang's retract_decode picks by progress). With
// PrefillDecodeInterval N (--prefill-decode-interval, sgl-project/sglang
// PR #35017; later than the corpus's 0.5.5-0.5.10) the N rounds after a
// step with prefill chunks run the decode batch only; a round with nothing
// to decode is idle and costs no step. With SchedulerRecvInterval N
// (--scheduler-recv-interval; SchedulerRecvSkipper,
// scheduler_recv_skipper.py @ 70310f0) the scheduler takes arrived
// requests only when its count (+1 per decode step, +1000 per extend or
// mixed step) reaches N: a request arriving while others decode waits up
// to N-1 decode steps; an idle engine receives at once.
//
// SGLang's memory: its KV pool is GPU memory x mem_fraction_static -
// weights (model_runner.py profile_max_num_token; activations, CUDA
// graphs and NCCL buffers live outside the fraction), the fraction its
// server's default when not given (DefaultMemFraction: server_args.py
// _handle_gpu_memory_settings, by GPU memory, TP, DP attention,
// chunked_prefill_size, cuda_graph_max_bs and version; 0.852 on a B200 at
// TP8, 0.821 before 0.5.3), and max_running_requests, when not given, what
// the pool holds (DefaultMaxRunning: min(tokens / 2, clamp(tokens /
// context_len x 512, 2048, 4096)) per DP rank).
//
// CUDA graphs: decode steps above the engine's capture size (vLLM the
// largest of its cudagraph_capture_sizes, by default min(2 x max_num_seqs
// x (1 + K), 512) tokens; SGLang cuda_graph_max_bs by GPU memory and TP)
// are priced eagerly (CaptureSize, sim.Config.CaptureSize). Both engines
// pad a smaller decode batch to the next size of their capture list
// (CaptureBatches, sim.Config.CaptureBatches: SGLang's batch sizes, vLLM's
// token sizes); SGLang runs prefill and mixed steps without graphs
// (EagerPrefill, sim.Config.EagerPrefill). vLLM's padding of mixed steps
// to the next piecewise size is not modelled.
//
// Scheduling ahead: with AsyncScheduling and ScheduleAhead the engine
// builds each step while the previous one runs (vLLM's batch queue,
// SGLang's overlap loop), so a request that reaches the engine during a
// step joins the step after the next one (client.stepEnd hands over only
// what arrived by the finished step's start); an idle engine takes a
// request at once. Disaggregated pools do not model it.
//
// # Speculative decoding
//
// Every decode is a verify step of 1+K tokens priced by the coster as one
// decode Seq. Position i's draft is accepted with its conditional
// acceptance if every earlier one was; the accepted drafts plus one token
// stream as one chunk (one ITL), truncated at the output length. With
// Spec.Sync (SGLang's V1 EAGLE worker, the default up to v0.5.10:
// SpecSyncDefault) the step runs without overlap and its host work is paid
// once per model forward: three on a decode (draft, target verify, draft
// extend), two on a prefill (SpecSyncForwards).
//
// # Metrics
//
// Source: vllm-project/vllm `vllm/benchmarks/serve.py` @ def9ce8 and
// `vllm/benchmarks/lib/endpoint_request_func.py` @ 3aee4a4.
//
// As vllm bench serve computes them: TTFT from send to the first chunk,
// E2EL from send to the last, TPOT = (E2EL - TTFT)/(output - 1) per
// request with output > 1, ITL the gaps between consecutive chunks of a
// request pooled over requests (a preempted request's gap includes its
// recompute); mean, median, std and percentiles with numpy's linear
// interpolation; duration from t = 0 to the last token; throughputs =
// totals / duration.
//
// # What cannot be served
//
// Run returns an *UnservableError when the longest request (input + output
// - 1 tokens, + K + Lookahead with speculative decoding) does not fit in
// one group's KV cache. An open-loop point whose completions fall more
// than 10% behind its arrivals over the second half of the arrival window
// is marked Overloaded: its latencies grow with the number of requests.
//
// Prefix caching (prefixcache.go), dependent turns (workload_deps.go) and
// disaggregated prefill/decode (disagg.go) are described in their files.
//
// DP ranks (Memory.Groups > 1) under vLLM are engine cores of their own,
// each with its own scheduler, budget and KV cache, fed by vLLM's DP load
// balancer and stepping in lockstep, a step lasting as long as its slowest
// rank's batch (dpranks.go). SGLang's DP-attention ranks are schedulers of
// their own the same way, fed by its DataParallelController (round robin;
// on a disaggregated prefill server by the request's bootstrap room), in
// an aggregated run and in either pool of a disaggregated one; vLLM's
// disaggregated pools keep their ranks pooled.
//
// Not modelled: the scheduler's own pass between steps (Config.Host holds the model runner's part, the
// part the traces show), the client's HTTP time, and the
// placeholder tokens of async scheduling. Multi-node replicas are priced
// by sim and comm (hardware.nic).
package serve
