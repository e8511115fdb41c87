package scenarios

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/moecast/moecast/internal/unit"
	"github.com/moecast/moecast/serve"
)

// workload.lengths: a file of (input, output) lengths that each request
// draws one pair from, seeded (serve.Workload.Lengths). Two formats, by
// the file's name:
//
//   - .jsonl (or .json): one object per line with the input and output
//     lengths under any of the names below (Mooncake traces' input_length
//     and output_length, LLMServingSim's input_toks and output_toks);
//     other fields are ignored.
//   - otherwise CSV with a header naming the two columns.
//
// Input names: input_length, input_tokens, input_toks, input_len, isl,
// prompt_tokens; output names: output_length, output_tokens, output_toks,
// output_len, osl, completion_tokens. A line without both, or a length
// outside [1, 4194304], is an error naming the file and line.
var (
	inputNames  = []string{"input_length", "input_tokens", "input_toks", "input_len", "isl", "prompt_tokens"}
	outputNames = []string{"output_length", "output_tokens", "output_toks", "output_len", "osl", "completion_tokens"}
)

// maxLengthPairs bounds the pairs read from one file.
const maxLengthPairs = 1 << 24

// buildSessions reads workload.lengths, workload.turns and
// workload.think_time.
func (s *Scenario) buildSessions(w *rawWorkload) error {
	d := s.doc
	v := &s.Serving
	if w.Lengths != "" {
		if w.Trace != "" {
			return d.errorf("workload.lengths", "a replayed trace sets the lengths: give workload.trace or workload.lengths, not both")
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"input_tokens", w.InputTokens != nil}, {"output_tokens", w.OutputTokens != nil}, {"range_ratio", w.RangeRatio != nil}, {"range_style", w.RangeStyle != ""}} {
			if k.set {
				return d.errorf("workload.lengths", "the lengths file sets the lengths: workload.%s is not read with it", k.key)
			}
		}
		data, name, err := s.ReadRelative(w.Lengths)
		if err != nil {
			return d.errorf("workload.lengths", "%v", err)
		}
		pairs, err := readLengths(name, data)
		if err != nil {
			return err
		}
		v.Lengths, v.LengthsFile = pairs, name
		// The means, for reports and the plan's sizing.
		var in, out int64
		for _, p := range pairs {
			in += int64(p.In)
			out += int64(p.Out)
		}
		n := int64(len(pairs))
		v.InputTokens, v.OutputTokens = int((in+n/2)/n), int((out+n/2)/n)
	}
	if w.Turns != nil {
		t := *w.Turns
		if t < 1 || t > serve.MaxTurns {
			return d.errorf("workload.turns", "%d must be in [1, %d] (1 = independent requests)", t, serve.MaxTurns)
		}
		if w.Trace != "" {
			return d.errorf("workload.turns", "a replayed trace sets its own turns (session_id, wait_for): give workload.trace or workload.turns, not both")
		}
		v.Turns = t
	}
	if w.ThinkTime != "" {
		if v.Turns <= 1 {
			return d.errorf("workload.think_time", "is the wait between a session's turns: set workload.turns > 1")
		}
		t, err := unit.ParseSeconds(w.ThinkTime)
		if err == nil && !(t >= 0 && t <= 1e6) {
			err = fmt.Errorf("%q must be in [0, 1e6] s", w.ThinkTime)
		}
		if err != nil {
			return d.wrap("workload.think_time", err)
		}
		v.ThinkTime = t
	}
	return nil
}

// readLengths parses a lengths file (see the formats above).
func readLengths(name string, data []byte) ([]serve.LengthPair, error) {
	bad := func(line int, format string, args ...any) error {
		return &Error{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	var pairs []serve.LengthPair
	add := func(line int, in, out int64) error {
		if in < 1 || in > maxLengthTokens || out < 1 || out > maxLengthTokens {
			return bad(line, "input %d, output %d tokens: each must be in [1, %d]", in, out, maxLengthTokens)
		}
		if len(pairs) >= maxLengthPairs {
			return bad(line, "more than %d length pairs", maxLengthPairs)
		}
		pairs = append(pairs, serve.LengthPair{In: int(in), Out: int(out)})
		return nil
	}
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".jsonl") || strings.HasSuffix(lower, ".json") {
		for i, ln := range bytes.Split(data, []byte("\n")) {
			ln = bytes.TrimSpace(ln)
			if len(ln) == 0 {
				continue
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(ln, &obj); err != nil {
				return nil, bad(i+1, "not a JSON object: %v", err)
			}
			get := func(names []string) (int64, bool) {
				for _, k := range names {
					if raw, ok := obj[k]; ok {
						f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
						if err != nil || f != float64(int64(f)) {
							return -1, true
						}
						return int64(f), true
					}
				}
				return 0, false
			}
			in, okIn := get(inputNames)
			out, okOut := get(outputNames)
			if !okIn || !okOut {
				return nil, bad(i+1, "no input and output lengths (want one of %s and one of %s)", strings.Join(inputNames, ", "), strings.Join(outputNames, ", "))
			}
			if err := add(i+1, in, out); err != nil {
				return nil, err
			}
		}
	} else {
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		header, err := r.Read()
		if err != nil {
			return nil, bad(1, "no CSV header: %v", err)
		}
		ci, co := -1, -1
		for j, h := range header {
			h = strings.ToLower(strings.TrimSpace(h))
			for _, k := range inputNames {
				if h == k && ci < 0 {
					ci = j
				}
			}
			for _, k := range outputNames {
				if h == k && co < 0 {
					co = j
				}
			}
		}
		if ci < 0 || co < 0 {
			return nil, bad(1, "the header names no input and output length column (want one of %s and one of %s)",
				strings.Join(inputNames, ", "), strings.Join(outputNames, ", "))
		}
		for {
			rec, err := r.Read()
			line, _ := r.FieldPos(0)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, bad(line, "%v", err)
			}
			if len(rec) <= max(ci, co) {
				return nil, bad(line, "%d fields, the lengths are in columns %d and %d", len(rec), ci+1, co+1)
			}
			in, err1 := strconv.ParseInt(strings.TrimSpace(rec[ci]), 10, 64)
			out, err2 := strconv.ParseInt(strings.TrimSpace(rec[co]), 10, 64)
			if err1 != nil || err2 != nil {
				return nil, bad(line, "lengths %q, %q are not integers", rec[ci], rec[co])
			}
			if err := add(line, in, out); err != nil {
				return nil, err
			}
		}
	}
	if len(pairs) == 0 {
		return nil, bad(0, "no length pairs")
	}
	return pairs, nil
}

// maxLengthTokens is the longest prompt or output a pair may give (as
// workload.input_tokens).
const maxLengthTokens = 1 << 22
