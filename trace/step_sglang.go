package trace

import (
	"regexp"
	"strings"
)

// SGLang's step annotations (as in AMD-AGI/TraceLens @ 171dd74
// tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz and
// sglang_prefilldecode/): step[DECODE bs=N],
// step[EXTEND bs=N toks=M], step[MIXED bs=N ...] (also TARGET_VERIFY,
// DRAFT_EXTEND and PREFILL).
var reSGLangStep = regexp.MustCompile(`^step\[([A-Z_]+)(?:\s+bs=(\d+))?[^\]]*\]`)

// sglangStep delimits steps by SGLang's step[...] annotations, reading the
// kind from the forward mode and the batch from bs=N.
type sglangStep struct{}

func (sglangStep) match(name string) (stepInfo, bool) {
	if !strings.HasPrefix(name, "step[") {
		return stepInfo{}, false
	}
	sub := reSGLangStep.FindStringSubmatch(name)
	if sub == nil {
		return stepInfo{}, false
	}
	info := stepInfo{family: famEngine, delim: sglangStep{}}
	switch sub[1] {
	case "DECODE", "TARGET_VERIFY", "DRAFT_EXTEND":
		info.kind = KindDecode
	case "EXTEND", "PREFILL":
		info.kind = KindPrefill
	case "MIXED":
		info.kind = KindMixed
	}
	info.batch = count(sub[2])
	return info, true
}

func (sglangStep) extends(string) bool      { return false }
func (sglangStep) label(name string) string { return name }
