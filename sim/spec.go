package sim

import (
	"fmt"
	"math"

	"github.com/moecast/moecast/model"
)

// SpecMethod is the speculative-decoding method: TOML speculative.method.
type SpecMethod uint8

const (
	SpecNone   SpecMethod = iota
	SpecMTP               // the model's own MTP layer(s) drafting (DeepSeek-V3, arXiv 2412.19437 §2.2)
	SpecEAGLE3            // an EAGLE-3 draft head (arXiv 2503.01840)
	SpecNgram             // prompt-lookup n-gram drafting on the host
)

var specNames = [...]string{"none", "mtp", "eagle3", "ngram"}

func (m SpecMethod) String() string {
	if int(m) < len(specNames) {
		return specNames[m]
	}
	return fmt.Sprintf("spec(%d)", uint8(m))
}

// parseSpecMethod maps a TOML speculative.method value to a SpecMethod.
func parseSpecMethod(s string) (SpecMethod, bool) {
	for i, n := range specNames {
		if n == s {
			return SpecMethod(i), true
		}
	}
	return 0, false
}

// MaxDraftTokens bounds speculative.draft_tokens. vLLM accepts larger values,
// but acceptance beyond a dozen positions is negligible for the methods here
// and the bound catches typos.
const MaxDraftTokens = 16

// Spec configures speculative decoding.
type Spec struct {
	Method      SpecMethod
	DraftTokens int       // K
	Acceptance  []float64 // per-position conditional acceptance, len K (or 1 = same for all)
}

// Active reports whether the verify step runs more than one token per
// sequence.
func (s Spec) Active() bool { return s.Method != SpecNone }

// validate checks K and the acceptances; model-dependent checks (MTP layers
// present) are in New.
func (s Spec) validate() error {
	if s.Method > SpecNgram {
		return &model.FieldError{Field: "Spec.Method", Msg: fmt.Sprintf("unknown method %d (want none, mtp, eagle3 or ngram)", s.Method)}
	}
	if !s.Active() {
		return nil
	}
	if s.DraftTokens < 1 || s.DraftTokens > MaxDraftTokens {
		return &model.FieldError{Field: "Spec.DraftTokens", Msg: fmt.Sprintf("must be in [1, %d] with method %s, got %d", MaxDraftTokens, s.Method, s.DraftTokens)}
	}
	if n := len(s.Acceptance); n != 1 && n != s.DraftTokens {
		return &model.FieldError{Field: "Spec.Acceptance", Msg: fmt.Sprintf("want 1 value (the same at every position) or draft_tokens = %d values, got %d", s.DraftTokens, n)}
	}
	for i, a := range s.Acceptance {
		if !(a >= 0 && a <= 1) { // also rejects NaN
			return &model.FieldError{Field: "Spec.Acceptance", Msg: fmt.Sprintf("value %d is %g, outside [0, 1]", i+1, a)}
		}
	}
	return nil
}

// TokensPerStep is the expected number of tokens a sequence gains per
// verify step:
//
//	E = 1 + Σ_{k=1..K} Π_{i<=k} a_i
//
// with a_i the conditional acceptance of draft position i given that the
// earlier ones were accepted (Leviathan, Kalman, Matias 2023, arXiv
// 2211.17192). A single acceptance value a is used at every position
// (i.i.d.), which gives (1 - a^(K+1)) / (1 - a). Without speculative
// decoding E = 1.
func (s Spec) TokensPerStep() float64 {
	if !s.Active() || len(s.Acceptance) == 0 {
		return 1
	}
	e, p := 1.0, 1.0
	for k := 0; k < s.DraftTokens; k++ {
		a := s.Acceptance[0]
		if len(s.Acceptance) > 1 {
			a = s.Acceptance[k]
		}
		p *= a
		e += p
	}
	if math.IsNaN(e) {
		return 1
	}
	return e
}

// queryTokens is the number of tokens per sequence the target runs in one
// step: K+1 when verifying K drafts, else 1.
func (s Spec) queryTokens() int {
	if !s.Active() {
		return 1
	}
	return s.DraftTokens + 1
}
