// Package plan searches deployments of an MoE model: it enumerates the
// parallel layouts the engines run on the GPU types offered, screens each at
// a grid of concurrencies, filters them by service-level objectives, and
// keeps the Pareto front of output tokens/s per GPU against tokens/s per
// user (both maximised). It also runs sweeps: the Cartesian product of named
// values over a function the caller supplies.
//
// plan knows no scenario keys and reads no files: the caller builds the
// Space (model, GPU options, runtime settings) and, for a sweep, maps each
// named value onto its own configuration.
//
// # Layouts
//
// A replica is one copy of the model on n GPUs of one node (n at most the
// node's GPU count and Space.MaxGPUs); replicas do not talk to each other.
// Where the GPU option has a NIC (GPUOption.NIC) and Space.MaxGPUs exceeds
// a node, a replica may also span whole nodes (2, 3, ... nodes up to
// MaxGPUs): of its layouts only those with the experts over all its GPUs
// (wide EP) and tensor-parallel groups inside a node (or data-parallel
// attention) are emitted, priced with the collectives across nodes on the
// NIC (sim.Config.NIC, comm's multi-node models and DeepEP tables).
// For each n, Enumerate emits, in this order, for every split n = TP x DP
// (TP ascending):
//
//   - TP x DP with EP = 1 (experts tensor-split over all n GPUs) and with
//     EP = n (vLLM --enable-expert-parallel sets EP = TP x DP; SGLang's
//     --ep-size is its TP size, the GPU count). DP > 1 is vLLM's
//     --data-parallel-size: attention runs TP-way inside each of DP groups.
//   - With DP = 1 and TP > 1 also SGLang's data-parallel attention
//     (--tp n --dp n --enable-dp-attention): attention unsplit on every
//     GPU, the MLP side over TP = n, EP 1 or n. SGLang's hybrid with an
//     attention TP between 1 and n is not modelled by sim and not emitted.
//
// each for every KV-cache dtype and speculative-decoding setting given.
// sim.New is the judge: a layout it refuses (TP not dividing the heads, EP
// not dividing the experts, a quantization group split, MTP on a model
// without MTP layers, ...) is a Rejection with sim's reason, never a
// Candidate. Duplicate layouts are not emitted: with TP = 1 data-parallel
// attention is the same layout as DP = n, and with n = 1 EP = n is EP = 1.
//
// Each layout carries the engines that run it (Candidate.Engine), as
// serve's engine table says (serve.Engine.Runs): vLLM every layout without
// data-parallel attention, SGLang those with DP = 1.
//
// # Memory
//
// A candidate's concurrency range is [1, MaxConcurrency]: the most
// sequences of Workload.Input + Workload.Output tokens whose KV cache fits
// next to the weights and reserves (sim's memory model, sim.Memory.MaxBatch
// at that context). Concurrencies above it lose for memory without being
// priced; a candidate whose weights leave no room for one sequence has
// MaxConcurrency 0.
//
// # Evaluators
//
// An Evaluator prices a candidate at a concurrency: output tokens/s of the
// replica, tokens/s per user, TPOT p99 and, when it can, TTFT p99. Screen
// is the fast one, built on sim's decode step at the mean decode context
// Input + Output/2: every step of a steady decode batch costs the same, so
// its TPOT p99 is that step's TPOT; it prices no prefill, so it has no
// TTFT (Metrics.HasTTFT is false) and its throughput leaves out the time
// prefill takes from decoding. A TTFT objective is then not checked, and
// Result.Warnings says so. A serving simulation plugs in through the same
// interface, either alone (Options.Evaluator) or as a second stage
// (Options.Refine) that re-prices only the points the screen puts within a
// margin of its front; the others are Screened.
//
// # Front, verdicts, targets
//
// Point a dominates b when a is at least as good on both axes and better on
// one. Each priced point is on the front, or lost for an SLO (which ones),
// or is dominated (by a front point, named), or, with Refine, was screened
// out (by a screen-front point, named); an unpriced one lost for memory. The best deployment is the
// front point of the highest tokens/s per GPU or, with a throughput or
// request-rate target, the one needing the fewest GPUs in total for it
// (replicas = ceil(target / replica output tokens/s); a request rate r
// needs r x Workload.Output output tokens/s).
package plan
