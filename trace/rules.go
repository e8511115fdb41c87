package trace

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/moecast/moecast/internal/cost"
	"github.com/moecast/moecast/internal/infile"
)

// defaultRulesTOML is the embedded default rule file (rules.toml).
//
//go:embed rules.toml
var defaultRulesTOML string

// Rule maps kernel names that match Regexp to a category and an op.
type Rule struct {
	Match    string // the regular expression as written (RE2 syntax, unanchored search)
	Category cost.Category
	Op       string
	File     string // where the rule was read from ("rules.toml" for the defaults)
	Line     int    // line of the rule's [[rule]] header, from 1

	re   *regexp.Regexp
	lits []string // one of these is in every name re matches; nil: no filter (rules_literals.go)
}

// Rules is an ordered rule list: the first rule whose expression matches a
// kernel name decides its class.
type Rules struct {
	list []Rule
}

// Len is the number of rules.
func (rs *Rules) Len() int { return len(rs.list) }

// List returns the rules in order of precedence.
func (rs *Rules) List() []Rule { return rs.list }

// DefaultRules returns the embedded default rules, parsed once. It panics if
// the embedded file is malformed, which a test guards against (a programmer
// error). The result is shared: do not modify it.
func DefaultRules() *Rules {
	defaultOnce.Do(func() {
		rs, err := ParseRules("rules.toml", []byte(defaultRulesTOML))
		if err != nil {
			panic("embedded rules.toml: " + err.Error())
		}
		defaultRules = rs
	})
	return defaultRules
}

var (
	defaultOnce  sync.Once
	defaultRules *Rules
)

// WithOverrides returns a rule list in which the rules of extra are tried
// before those of rs (user rules take precedence over the defaults).
func (rs *Rules) WithOverrides(extra *Rules) *Rules {
	if extra == nil {
		return rs
	}
	out := &Rules{list: make([]Rule, 0, len(extra.list)+len(rs.list))}
	out.list = append(out.list, extra.list...)
	out.list = append(out.list, rs.list...)
	return out
}

// wireRules mirrors the TOML rule file.
type wireRules struct {
	Rule []wireRule `toml:"rule"`
}

type wireRule struct {
	Match    *string `toml:"match"`
	Category *string `toml:"category"`
	Op       string  `toml:"op"`
}

// RuleError is an error in a rule file, with its position.
type RuleError struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *RuleError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ParseRules reads a rule file: [[rule]] tables with match (regex), category
// (one of internal/cost's categories, not idle or launch) and op. Errors name
// file:line: TOML syntax, unknown keys, a missing match or category, a bad
// regular expression, an unknown category.
func ParseRules(file string, data []byte) (*Rules, error) {
	var w wireRules
	if err := infile.CheckDepth(file, data, infile.MaxDepth); err != nil {
		return nil, err
	}
	md, err := toml.Decode(string(data), &w)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &RuleError{File: file, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &RuleError{File: file, Msg: err.Error()}
	}
	lines := strings.Split(string(data), "\n")
	headers := ruleHeaderLines(lines)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		last := k[len(k)-1]
		return nil, &RuleError{File: file, Line: keyLine(lines, last), Msg: fmt.Sprintf("unknown key %q", k.String())}
	}
	rs := &Rules{list: make([]Rule, 0, len(w.Rule))}
	for i, wr := range w.Rule {
		line := 0
		if i < len(headers) {
			line = headers[i]
		}
		fail := func(format string, args ...any) error {
			return &RuleError{File: file, Line: line, Msg: fmt.Sprintf("rule %d: ", i+1) + fmt.Sprintf(format, args...)}
		}
		if wr.Match == nil || *wr.Match == "" {
			return nil, fail("missing match")
		}
		if wr.Category == nil {
			return nil, fail("missing category")
		}
		re, err := regexp.Compile(*wr.Match)
		if err != nil {
			return nil, fail("match: %v", err)
		}
		c, ok := cost.ParseCategory(*wr.Category)
		if !ok || c == cost.Idle || c == cost.Launch {
			return nil, fail("unknown category %q (want attention, gemm, moe, allreduce, allgather, reducescatter, alltoall, elementwise, sampling or other)", *wr.Category)
		}
		rs.list = append(rs.list, Rule{Match: *wr.Match, Category: c, Op: wr.Op, File: file, Line: line, re: re, lits: requiredLiterals(*wr.Match)})
	}
	return rs, nil
}

// ruleHeaderLines returns the 1-based line numbers of the [[rule]] headers.
func ruleHeaderLines(lines []string) []int {
	var out []int
	for i, l := range lines {
		t := strings.SplitN(l, "#", 2)[0]
		if strings.Join(strings.Fields(t), "") == "[[rule]]" {
			out = append(out, i+1)
		}
	}
	return out
}

// keyLine returns the first line that assigns key, or 0.
func keyLine(lines []string, key string) int {
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, key) {
			rest := strings.TrimSpace(t[len(key):])
			if strings.HasPrefix(rest, "=") {
				return i + 1
			}
		}
		if t == "["+key+"]" || t == "[["+key+"]]" {
			return i + 1
		}
	}
	return 0
}

// Class is the classification of one kernel name.
type Class struct {
	Category cost.Category
	Op       string
	Rule     int  // index of the deciding rule in the list; -1 when none matched
	Matched  bool // false: no rule matched (category other, op "unclassified")
}

// Classifier classifies kernel names through a rule list and caches the
// decision per name, so that the regular expressions run once per distinct
// name (a few hundred in a trace) and each event costs one map lookup. A
// Classifier is not safe for concurrent use; give each goroutine its own
// (they may share the Rules).
type Classifier struct {
	rules *Rules
	cache map[string]Class
}

// NewClassifier returns a classifier over rs (DefaultRules when nil).
func NewClassifier(rs *Rules) *Classifier {
	if rs == nil {
		rs = DefaultRules()
	}
	return &Classifier{rules: rs, cache: make(map[string]Class, 512)}
}

// MaxRuleName bounds the bytes of a kernel name that the rules see: longer
// names are classified by their first MaxRuleName bytes. Go's regexp is
// linear in its input but slow on unanchored alternations (some rules cost
// ~1 us per byte), so without the bound a trace of many distinct, very
// long names would take minutes to classify. The identifying part of a
// kernel name comes first (namespace and kernel, then template arguments
// and parameter list): the 157 distinct kernel names of the testdata traces
// (up to 1,677 bytes) classify the same when cut at 256 bytes.
const MaxRuleName = 1024

// Classify returns the class of a kernel (or memcpy/memset) name.
func (c *Classifier) Classify(name string) Class {
	if cl, ok := c.cache[name]; ok {
		return cl
	}
	cl := Class{Category: cost.Other, Op: "unclassified", Rule: -1}
	seen := name
	if len(seen) > MaxRuleName {
		seen = seen[:MaxRuleName]
	}
	for i := range c.rules.list {
		r := &c.rules.list[i]
		if r.lits != nil && !containsAny(seen, r.lits) {
			continue // cannot match: none of the strings every match holds is there
		}
		if r.re.MatchString(seen) {
			cl = Class{Category: r.Category, Op: r.Op, Rule: i, Matched: true}
			break
		}
	}
	c.cache[name] = cl
	return cl
}

// collectiveCategory maps the "Collective name" arg that recent PyTorch
// writes on NCCL kernels (and on record_param_comms) to a category.
func collectiveCategory(name string) (cost.Category, bool) {
	n := strings.ToLower(strings.TrimLeft(name, "_"))
	switch {
	case strings.HasPrefix(n, "allreduce") || strings.HasPrefix(n, "all_reduce"):
		return cost.AllReduce, true
	case strings.HasPrefix(n, "allgather") || strings.HasPrefix(n, "all_gather"):
		return cost.AllGather, true
	case strings.HasPrefix(n, "reduce_scatter") || strings.HasPrefix(n, "reducescatter"):
		return cost.ReduceScatter, true
	case strings.HasPrefix(n, "all_to_all") || strings.HasPrefix(n, "alltoall") || n == "send" || n == "recv":
		return cost.AllToAll, true
	}
	return 0, false
}
