package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the two lexers the engine-argument importer needs: a
// POSIX-shell-like word splitter for command lines, and a reader of the
// Python literals that the engines print in their logs (a dict repr for
// vLLM's "non-default args: {...}", a dataclass repr for SGLang's
// "server_args=ServerArgs(...)").

// maxArgsBytes bounds the text the importer reads (a server log is
// searched for its argument line; a command line is far smaller).
const maxArgsBytes = 64 << 20

// maxPyDepth bounds the nesting of a Python literal.
const maxPyDepth = 64

// shellWords splits a command line into words as a POSIX shell would for
// the forms engine command lines use: blanks separate words; '...' quotes
// literally; "..." quotes with \" \\ \$ \` escapes; a backslash outside
// quotes escapes the next character, and backslash-newline joins lines; a
// '#' that begins a word starts a comment to the end of the line. Variable
// expansion and command substitution are not performed (the words keep
// "$X" as written). An unterminated quote is a *pyError at its offset.
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inTok bool
	)
	flush := func() {
		if inTok {
			words = append(words, cur.String())
			cur.Reset()
			inTok = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] == '\n' {
					i++
					continue
				}
				if s[i+1] == '\r' && i+2 < len(s) && s[i+2] == '\n' {
					i += 2
					continue
				}
				cur.WriteByte(s[i+1])
				i++
			}
			inTok = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, &pyError{Off: i, Msg: "unterminated ' quote"}
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inTok = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("\"\\$`\n", s[j+1]) >= 0 {
					if s[j+1] != '\n' {
						cur.WriteByte(s[j+1])
					}
					j++
					continue
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, &pyError{Off: i, Msg: "unterminated \" quote"}
			}
			i = j
			inTok = true
		case c == '#' && !inTok:
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		default:
			cur.WriteByte(c)
			inTok = true
		}
	}
	flush()
	return words, nil
}

// pyKind is the kind of a Python literal.
type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList // a list, tuple or set
	pyDict
	pyCall   // Name(arg, key=value, ...): a dataclass or object repr
	pyOpaque // <...>, a bare name (an enum member), anything else kept as text
)

// pyValue is one Python literal as printed by repr(). Raw is its source
// text, for messages and for the kinds kept as text.
type pyValue struct {
	Kind  pyKind
	Bool  bool
	Int   int64
	Float float64
	Str   string    // pyStr; the name of a pyCall
	Items []pyValue // pyList; positional arguments of a pyCall
	Keys  []string  // pyDict and pyCall keyword arguments: the key as text (a str key without quotes)
	Vals  []pyValue // the values of Keys
	Raw   string
}

// get returns the value of key in a dict or call, and whether it is there.
func (v pyValue) get(key string) (pyValue, bool) {
	for i, k := range v.Keys {
		if k == key {
			return v.Vals[i], true
		}
	}
	return pyValue{}, false
}

// falsy reports whether v is Python-false: None, False, 0, 0.0, an empty
// string, list or dict.
func (v pyValue) falsy() bool {
	switch v.Kind {
	case pyNone:
		return true
	case pyBool:
		return !v.Bool
	case pyInt:
		return v.Int == 0
	case pyFloat:
		return v.Float == 0
	case pyStr:
		return v.Str == ""
	case pyList:
		return len(v.Items) == 0
	case pyDict:
		return len(v.Keys) == 0
	}
	return false
}

// text is the value as a command-line word: strings unquoted, others as
// printed.
func (v pyValue) text() string {
	if v.Kind == pyStr {
		return v.Str
	}
	return v.Raw
}

// pyParser reads Python literals from src, tracking the offset for errors.
type pyParser struct {
	src string
	pos int
}

// pyError is a parse error at a byte offset of the literal.
type pyError struct {
	Off int
	Msg string
}

func (e *pyError) Error() string { return fmt.Sprintf("offset %d: %s", e.Off, e.Msg) }

func (p *pyParser) errorf(format string, args ...any) error {
	return &pyError{Off: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// value reads one literal at p.pos.
func (p *pyParser) value(depth int) (pyValue, error) {
	if depth > maxPyDepth {
		return pyValue{}, p.errorf("literal nested more than %d deep", maxPyDepth)
	}
	p.skipSpace()
	if p.pos >= len(p.src) {
		return pyValue{}, p.errorf("unexpected end of text, want a value")
	}
	start := p.pos
	var (
		v   pyValue
		err error
	)
	switch c := p.src[p.pos]; {
	case c == '\'' || c == '"':
		v, err = p.str()
	case c == '[' || c == '(' || c == '{':
		v, err = p.container(depth)
	case c == '<':
		v, err = p.angle()
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		v, err = p.number()
	case isIdentStart(c):
		v, err = p.name(depth)
	default:
		return pyValue{}, p.errorf("unexpected %q, want a value", p.src[p.pos:p.pos+utf8RuneLen(p.src[p.pos:])])
	}
	if err != nil {
		return pyValue{}, err
	}
	v.Raw = p.src[start:p.pos]
	return v, nil
}

func utf8RuneLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return max(n, 1)
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdent(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// str reads a quoted string with Python's escapes (as repr() writes them).
func (p *pyParser) str() (pyValue, error) {
	q := p.src[p.pos]
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return pyValue{Kind: pyStr, Str: b.String()}, nil
		case c == '\n':
			return pyValue{}, &pyError{Off: start, Msg: "string not closed on its line"}
		case c == '\\' && p.pos+1 < len(p.src):
			e := p.src[p.pos+1]
			p.pos += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.pos+n > len(p.src) {
					return pyValue{}, p.errorf("short \\%c escape", e)
				}
				r, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
				if err != nil || r > utf8.MaxRune {
					return pyValue{}, p.errorf("bad \\%c escape %q", e, p.src[p.pos:p.pos+n])
				}
				b.WriteRune(rune(r))
				p.pos += n
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return pyValue{}, &pyError{Off: start, Msg: "string not closed"}
}

// number reads an int or a float (inf and nan are names).
func (p *pyParser) number() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.src) && strings.IndexByte("+-.0123456789eE_xXabcdefABCDEF", p.src[p.pos]) >= 0 {
		if (p.src[p.pos] == '+' || p.src[p.pos] == '-') && p.pos > start && p.src[p.pos-1] != 'e' && p.src[p.pos-1] != 'E' {
			break
		}
		p.pos++
	}
	t := strings.ReplaceAll(p.src[start:p.pos], "_", "")
	if t == "-" || t == "+" {
		// "-inf"
		if strings.HasPrefix(p.src[p.pos:], "inf") {
			p.pos += 3
			return pyValue{Kind: pyOpaque}, nil
		}
		return pyValue{}, p.errorf("%q is not a number", t)
	}
	if i, err := strconv.ParseInt(t, 0, 64); err == nil {
		return pyValue{Kind: pyInt, Int: i, Float: float64(i)}, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return pyValue{}, &pyError{Off: start, Msg: fmt.Sprintf("%q is not a number", t)}
	}
	return pyValue{Kind: pyFloat, Float: f}, nil
}

// name reads None, True, False, a dotted name (an enum member, inf, nan),
// or a call Name(...).
func (p *pyParser) name(depth int) (pyValue, error) {
	start := p.pos
	for p.pos < len(p.src) && (isIdent(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	id := p.src[start:p.pos]
	if p.pos < len(p.src) && (p.src[p.pos] == '\'' || p.src[p.pos] == '"') && strings.Contains("b r u f rb br", id) && len(id) <= 2 {
		return p.str() // a prefixed string: b'...', r"..."
	}
	switch id {
	case "None":
		return pyValue{Kind: pyNone}, nil
	case "True":
		return pyValue{Kind: pyBool, Bool: true}, nil
	case "False":
		return pyValue{Kind: pyBool}, nil
	}
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		v, err := p.container(depth)
		if err != nil {
			return pyValue{}, err
		}
		v.Kind, v.Str = pyCall, id
		return v, nil
	}
	return pyValue{Kind: pyOpaque}, nil
}

// angle reads <...> (an object repr), balancing nested brackets and
// skipping quoted strings.
func (p *pyParser) angle() (pyValue, error) {
	start := p.pos
	depth := 0
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				p.pos++
				return pyValue{Kind: pyOpaque}, nil
			}
		case '\'', '"':
			if _, err := p.str(); err != nil {
				return pyValue{}, err
			}
			continue
		case '\n':
			return pyValue{}, &pyError{Off: start, Msg: "<...> not closed on its line"}
		}
		p.pos++
	}
	return pyValue{}, &pyError{Off: start, Msg: "<...> not closed"}
}

// container reads [...], (...), {...} at p.pos: a list, tuple or set into
// Items; a dict into Keys/Vals; the arguments of a call (positional into
// Items, key=value into Keys/Vals).
func (p *pyParser) container(depth int) (pyValue, error) {
	open := p.src[p.pos]
	close := map[byte]byte{'[': ']', '(': ')', '{': '}'}[open]
	start := p.pos
	p.pos++
	v := pyValue{Kind: pyList}
	isDict := false
	for n := 0; ; n++ {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return pyValue{}, &pyError{Off: start, Msg: fmt.Sprintf("%c not closed", open)}
		}
		if p.src[p.pos] == close {
			p.pos++
			break
		}
		if n > 0 {
			if p.src[p.pos] != ',' {
				return pyValue{}, p.errorf("want ',' or %q, got %q", close, p.src[p.pos:p.pos+utf8RuneLen(p.src[p.pos:])])
			}
			p.pos++
			p.skipSpace()
			if p.pos < len(p.src) && p.src[p.pos] == close { // trailing comma
				p.pos++
				break
			}
		}
		// key=value (call arguments)
		if open == '(' && p.pos < len(p.src) && isIdentStart(p.src[p.pos]) {
			j := p.pos
			for j < len(p.src) && isIdent(p.src[j]) {
				j++
			}
			if j < len(p.src) && p.src[j] == '=' && (j+1 >= len(p.src) || p.src[j+1] != '=') {
				key := p.src[p.pos:j]
				p.pos = j + 1
				val, err := p.value(depth + 1)
				if err != nil {
					return pyValue{}, err
				}
				v.Keys, v.Vals = append(v.Keys, key), append(v.Vals, val)
				continue
			}
		}
		item, err := p.value(depth + 1)
		if err != nil {
			return pyValue{}, err
		}
		p.skipSpace()
		if open == '{' && p.pos < len(p.src) && p.src[p.pos] == ':' {
			if n > 0 && !isDict {
				return pyValue{}, p.errorf("a set item followed by a dict key")
			}
			isDict = true
			p.pos++
			val, err := p.value(depth + 1)
			if err != nil {
				return pyValue{}, err
			}
			v.Keys, v.Vals = append(v.Keys, item.text()), append(v.Vals, val)
			continue
		}
		if isDict {
			return pyValue{}, p.errorf("want ':' after a dict key")
		}
		v.Items = append(v.Items, item)
	}
	if open == '{' && (isDict || len(v.Items) == 0) {
		v.Kind = pyDict
		v.Items = nil
	}
	return v, nil
}

// parsePy reads one literal that must fill src (spaces aside).
func parsePy(src string) (pyValue, error) {
	p := &pyParser{src: src}
	v, err := p.value(0)
	if err != nil {
		return v, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return v, p.errorf("unexpected %q after the value", p.src[p.pos:p.pos+utf8RuneLen(p.src[p.pos:])])
	}
	return v, nil
}

// parsePyPrefix reads one literal at the start of src and returns the rest.
func parsePyPrefix(src string) (pyValue, string, error) {
	p := &pyParser{src: src}
	v, err := p.value(0)
	if err != nil {
		return v, "", err
	}
	return v, src[p.pos:], nil
}
