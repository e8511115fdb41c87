package trace

import (
	"regexp/syntax"
	"strings"
)

// A literal prefilter for the classification rules. Most rules are
// alternations of names ("act_and_mul|silu|gelu|..."), and Go's regexp
// scans a name that none of them matches at about 1 us per byte for such
// patterns; strings.Contains does it in a few ns. requiredLiterals finds,
// from the parsed expression, a set of strings one of which is in every
// string the expression matches: a necessary condition, so a name holding
// none of them is skipped without running the expression, and the result
// is the same.

// requiredLiterals returns the strings one of which every match of pattern
// contains, or nil when the expression gives no such set (a case-folded
// literal, a class or an empty match somewhere on every path).
func requiredLiterals(pattern string) []string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := required(re.Simplify())
	if !ok {
		return nil
	}
	for _, l := range lits {
		if l == "" {
			return nil
		}
	}
	return lits
}

// required returns a set of literals one of which every match of re holds.
func required(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			l, ok := required(s)
			if !ok {
				return nil, false
			}
			out = append(out, l...)
		}
		return out, true
	case syntax.OpConcat:
		// every part must match: any part's set will do; take the one whose
		// shortest literal is longest (the most selective)
		var best []string
		bestLen := 0
		for _, s := range re.Sub {
			if l, ok := required(s); ok {
				if m := minLen(l); m > bestLen {
					best, bestLen = l, m
				}
			}
		}
		return best, best != nil
	}
	return nil, false
}

func minLen(ls []string) int {
	m := -1
	for _, l := range ls {
		if m < 0 || len(l) < m {
			m = len(l)
		}
	}
	return max(m, 0)
}

// containsAny reports whether s contains one of lits.
func containsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}
