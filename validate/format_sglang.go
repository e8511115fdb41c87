package validate

// SGLang `bench_serving --output-file`: JSONL, one object a run appended
// per line, with vLLM's key names for most figures and its own for a few
// (mean_e2e_latency_ms, total_input, accept_length, random_input_len,
// random_range_ratio). It is told from vLLM's by those keys, so it is
// tried first.
func init() {
	RegisterFormat(Format{
		Name:  "sglang",
		Looks: "JSON objects, one a line, with mean_e2e_latency_ms, random_input_len or accept_length: SGLang bench_serving --output-file",
		Order: 40,
		Detect: func(s *Sniff) bool {
			return !s.IsArray() && s.HasAny("mean_ttft_ms", "median_ttft_ms", "mean_tpot_ms") &&
				s.HasAny("mean_e2e_latency_ms", "random_input_len", "accept_length")
		},
		Read: func(name string, data []byte) ([]BenchResult, error) {
			rs, err := readVLLMKeyed(name, data, "sglang")
			for i := range rs {
				rs[i].Multi = true // SGLang appends: a file of one run is named by its line too
			}
			return rs, err
		},
	})
}
