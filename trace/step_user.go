package trace

import (
	"regexp"
	"strings"
)

// userStep delimits steps by --step REGEX, which replaces the built-in
// families. Kind and batch come from the named groups "kind" and "batch"
// when the expression has them, else from the built-in grammars when the
// name is one of theirs.
type userStep struct{ re *regexp.Regexp }

func (u userStep) match(name string) (stepInfo, bool) {
	if !u.re.MatchString(name) {
		return stepInfo{}, false
	}
	info := parseStepName(name)
	info.family, info.delim = famUser, u
	if sub := u.re.FindStringSubmatch(name); sub != nil {
		for i, g := range u.re.SubexpNames() {
			switch g {
			case "batch":
				info.batch = count(sub[i])
			case "kind":
				if k, ok := ParseStepKind(strings.ToLower(sub[i])); ok {
					info.kind = k
				}
			}
		}
	}
	return info, true
}

func (userStep) extends(string) bool      { return false }
func (userStep) label(name string) string { return name }
