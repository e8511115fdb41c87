package scenarios

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A deployment from the engine's own words: the importer behind `moecast
// scenario from-vllm-args`. It reads what an engine was started with, in
// one of four forms, and writes a scenario file:
//
//   - a `vllm serve MODEL ...` (or `python -m vllm.entrypoints.openai.api_server
//     --model MODEL ...`, or `docker run ... vllm/vllm-openai --model MODEL ...`)
//     command line;
//   - the vLLM server's "non-default args: {...}" log line (a Python dict of
//     the argparse destinations that differ from their defaults:
//     log_non_default_args in vllm/entrypoints/utils.py, vllm-project/vllm @
//     97c10e4; later releases moved it to
//     vllm/entrypoints/serve/utils/api_utils.py);
//   - a `python -m sglang.launch_server --model-path MODEL ...` (or `sglang
//     serve --model-path MODEL ...`) command line;
//   - SGLang's "server_args=ServerArgs(...)" log line (the dataclass repr of
//     every field, `logger.info(f"{server_args=}")` at start-up in
//     python/sglang/srt/entrypoints/engine.py, sgl-project/sglang @ 18bfdd1).
//
// Flag names and their destinations are vLLM's EngineArgs.add_cli_args
// (vllm/engine/arg_utils.py @ 99d7eb5) and SGLang's ServerArgs
// (python/sglang/srt/server_args.py; the aliases as docs.sglang.io's
// server-arguments page lists them). Each table entry says what it sets.
// Every flag the importer reads but does not model is listed in a warning,
// never dropped silently; a setting moecast cannot express (pipeline
// parallelism, a separate draft LLM, an FP4 KV cache) is an error.

// Deployment is a serving deployment as read from an engine's arguments,
// before the hardware (which the arguments do not name) is added.
type Deployment struct {
	Engine string // "vllm" or "sglang"
	Source string // what was read, in words ("vllm serve command line")
	Model  string // the model as the engine was given it: a Hugging Face id or a path
	// Settings are the scenario keys the arguments set, in file order, each
	// with the argument it came from.
	Settings []Setting
	// Spec is the speculative decoding the arguments configure (Method ""
	// when none). The acceptance rate is never among an engine's arguments.
	Spec SpecArgs
	// Ignored lists the arguments read but not modelled ("--enable-dbo",
	// "quantization='fp8'"), for a warning.
	Ignored []string
	// Warnings are other remarks on the conversion.
	Warnings []string
}

// Setting is one scenario key the engine's arguments set.
type Setting struct {
	Key   string // dotted TOML key: "parallel.tp"
	Value string // TOML literal: 8, "fp8", true
	From  string // the argument as written: "--tensor-parallel-size 8"
}

// SpecArgs is the speculative decoding of a deployment.
type SpecArgs struct {
	Method      string // "mtp", "eagle3" or "ngram"; "" = none
	DraftTokens int    // K, tokens drafted per step
	From        string
}

// Get returns the value set for key, and whether it is set.
func (d *Deployment) Get(key string) (string, bool) {
	for _, s := range d.Settings {
		if s.Key == key {
			return s.Value, true
		}
	}
	return "", false
}

// set records key = value (a TOML literal) from the argument from,
// replacing an earlier value of key.
func (d *Deployment) set(key, value, from string) {
	for i := range d.Settings {
		if d.Settings[i].Key == key {
			d.Settings[i] = Setting{key, value, from}
			return
		}
	}
	d.Settings = append(d.Settings, Setting{key, value, from})
}

func (d *Deployment) setInt(key string, v int, from string) { d.set(key, strconv.Itoa(v), from) }

func (d *Deployment) warnf(format string, args ...any) {
	d.Warnings = append(d.Warnings, fmt.Sprintf(format, args...))
}

// engineArg is one argument: its destination name (the engine's field,
// "tensor_parallel_size"), the flag as written, and its value. A value from
// a command line is the word as a pyStr (a bare flag: pyBool true; --no-X:
// pyBool false); from a log it is the printed literal.
type engineArg struct {
	Dest string
	Flag string
	Val  pyValue
	At   string // where it was read: "argument 7", "offset 812"
	// Text is the argument as written when written() would not rebuild
	// it (a dotted vLLM flag, whose value is wrapped in a dict).
	Text string
}

// written is the argument as the user wrote it, for messages and comments.
func (a engineArg) written() string {
	if a.Text != "" {
		return a.Text
	}
	if strings.HasPrefix(a.Flag, "-") {
		switch {
		case a.Val.Kind == pyBool && a.Val.Raw == "":
			return a.Flag
		default:
			return a.Flag + " " + a.Val.text()
		}
	}
	return a.Flag + "=" + a.Val.Raw
}

// argsError is the error for argument a of the input file.
func argsError(file string, line int, a engineArg, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if a.At != "" {
		msg = a.At + ": " + msg
	}
	return &Error{File: file, Line: line, Key: a.Flag, Msg: msg}
}

// ReadEngineArgs reads a deployment from text: a server log holding vLLM's
// "non-default args: {...}" line or SGLang's "server_args=ServerArgs(...)"
// line (the last one, when the server started several times), or else a
// vllm/SGLang command line (shell quoting and backslash-newline
// continuations as a shell reads them). name is the file name for errors.
func ReadEngineArgs(name string, data []byte) (_ *Deployment, err error) {
	defer asInput(&err)
	if len(data) > maxArgsBytes {
		return nil, &Error{File: name, Msg: fmt.Sprintf("%d bytes is more than the %d an engine's arguments or log may hold here", len(data), maxArgsBytes)}
	}
	text := string(data)
	const vllmMark, sglMark = "non-default args: ", "server_args=ServerArgs("
	vi, si := strings.LastIndex(text, vllmMark), strings.LastIndex(text, sglMark)
	switch {
	case vi >= 0 && vi > si:
		off := vi + len(vllmMark)
		line := 1 + strings.Count(text[:off], "\n")
		v, _, err := parsePyPrefix(text[off:])
		if err != nil {
			return nil, pyPosError(name, text, off, "vLLM non-default args", err)
		}
		if v.Kind != pyDict {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("vLLM non-default args: want a {...} dict, got %.40q", v.Raw)}
		}
		d := &Deployment{Engine: "vllm", Source: "vLLM non-default args log line"}
		if n := strings.Count(text, vllmMark); n > 1 {
			d.warnf("%s:%d: the log holds %d non-default args lines (the server started %d times); read the last", name, line, n, n)
		}
		args := make([]engineArg, len(v.Keys))
		for i, k := range v.Keys {
			args[i] = engineArg{Dest: k, Flag: k, Val: v.Vals[i]}
		}
		if err := d.fromVLLM(name, line, args, false); err != nil {
			return nil, err
		}
		return d, nil
	case si >= 0:
		off := si + len("server_args=")
		line := 1 + strings.Count(text[:off], "\n")
		v, _, err := parsePyPrefix(text[off:])
		if err != nil {
			return nil, pyPosError(name, text, off, "SGLang ServerArgs", err)
		}
		if v.Kind != pyCall {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("SGLang server_args: want ServerArgs(...), got %.40q", v.Raw)}
		}
		d := &Deployment{Engine: "sglang", Source: "SGLang ServerArgs log line"}
		if n := strings.Count(text, sglMark); n > 1 {
			d.warnf("%s:%d: the log holds %d server_args lines (the server started %d times); read the last", name, line, n, n)
		}
		args := make([]engineArg, len(v.Keys))
		for i, k := range v.Keys {
			args[i] = engineArg{Dest: k, Flag: k, Val: v.Vals[i]}
		}
		if err := d.fromSGLang(name, line, args, true); err != nil {
			return nil, err
		}
		return d, nil
	}
	words, err := shellWords(text)
	if err != nil {
		return nil, pyPosError(name, text, 0, "command line", err)
	}
	return engineArgv(name, words)
}

// pyPosError turns a literal's parse error at offset off of text into an
// *Error with the line of the error.
func pyPosError(name, text string, off int, what string, err error) error {
	line := 1 + strings.Count(text[:off], "\n")
	if pe, ok := err.(*pyError); ok {
		at := min(off+pe.Off, len(text))
		line = 1 + strings.Count(text[:at], "\n")
		col := at - (strings.LastIndexByte(text[:at], '\n') + 1) + 1
		return &Error{File: name, Line: line, Msg: fmt.Sprintf("%s: column %d: %s", what, col, pe.Msg)}
	}
	return &Error{File: name, Line: line, Msg: what + ": " + err.Error()}
}

// EngineArgv reads a deployment from a command line already split into
// words (what follows `--` on moecast's command line).
// One word holding a whole command line (quoted as one argument) is split
// as a shell would.
func EngineArgv(words []string) (_ *Deployment, err error) {
	defer asInput(&err)
	if len(words) == 1 && strings.ContainsAny(words[0], " \t\n") {
		w, err := shellWords(words[0])
		if err != nil {
			return nil, pyPosError("<args>", words[0], 0, "command line", err)
		}
		words = w
	}
	return engineArgv("<args>", words)
}

// shellStops end a command inside a script.
var shellStops = []string{"&&", "||", "|", ";", "&"}

// engineArgv finds the engine's command in words and reads its arguments.
func engineArgv(name string, words []string) (*Deployment, error) {
	vars := map[string]string{} // a script's assignments before the command
	for i, w := range words {
		if k, v, ok := shellAssign(w); ok {
			vars[k] = expandVars(v, vars)
			continue
		}
		var (
			d     *Deployment
			start int // index in words of the first argument
			model string
		)
		switch {
		case path.Base(w) == "vllm" && i+1 < len(words) && words[i+1] == "serve":
			d = &Deployment{Engine: "vllm", Source: "vllm serve command line"}
			start = i + 2
			if start < len(words) && !strings.HasPrefix(words[start], "-") {
				model = words[start] // vllm serve's positional model_tag
				start++
			}
		case w == "vllm.entrypoints.openai.api_server":
			d = &Deployment{Engine: "vllm", Source: "vLLM api_server command line"}
			start = i + 1
		case path.Base(strings.SplitN(w, ":", 2)[0]) == "vllm-openai" && i > 0:
			// `docker run ... vllm/vllm-openai:TAG --model M ...`: the
			// image's entrypoint is the api_server, the words after it its
			// arguments.
			d = &Deployment{Engine: "vllm", Source: "vllm-openai container command line"}
			start = i + 1
		case w == "sglang.launch_server":
			d = &Deployment{Engine: "sglang", Source: "sglang.launch_server command line"}
			start = i + 1
		case path.Base(w) == "sglang" && i+1 < len(words) && words[i+1] == "serve":
			// SGLang's `sglang serve` CLI takes launch_server's arguments
			// (docs.sglang.io's CLI reference).
			d = &Deployment{Engine: "sglang", Source: "sglang serve command line"}
			start = i + 2
		default:
			continue
		}
		rest := slices.Clone(words[start:])
		for k := range rest {
			rest[k] = expandVars(rest[k], vars)
		}
		model = expandVars(model, vars)
		if j := slices.IndexFunc(rest, func(w string) bool {
			return slices.Contains(shellStops, w) || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || strings.HasPrefix(w, "1>")
		}); j >= 0 {
			rest = rest[:j]
		}
		if d.Engine == "vllm" {
			args, err := splitFlags(name, rest, start+1, vllmBools, vllmRead, vllmAliases)
			if err != nil {
				return nil, err
			}
			if model != "" {
				args = append([]engineArg{{Dest: "model_tag", Flag: "MODEL", Val: pyValue{Kind: pyStr, Str: model, Raw: model},
					At: fmt.Sprintf("argument %d", start)}}, args...)
			}
			if err := d.fromVLLM(name, 0, args, true); err != nil {
				return nil, err
			}
			return d, nil
		}
		args, err := splitFlags(name, rest, start+1, sglangBools, sglangRead, sglangAliases)
		if err != nil {
			return nil, err
		}
		if err := d.fromSGLang(name, 0, args, false); err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, &Error{File: name, Msg: "found none of `vllm serve`, `python -m vllm.entrypoints.openai.api_server`, a vllm/vllm-openai container, `python -m sglang.launch_server`, `sglang serve`, " +
		"a \"non-default args: {...}\" line (vLLM's log) or a \"server_args=ServerArgs(...)\" line (SGLang's log)"}
}

// shellAssign splits a shell assignment word, NAME=value (what a script
// sets before the command: MODEL="org/name", PORT=8000).
func shellAssign(w string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(w, "=")
	if !ok || name == "" || !isIdentStart(name[0]) {
		return "", "", false
	}
	for i := 1; i < len(name); i++ {
		if !isIdent(name[i]) {
			return "", "", false
		}
	}
	return name, value, true
}

// shellVar matches $NAME, ${NAME} and ${NAME:-default}.
var shellVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// expandVars replaces the variables of w that the script set (or that
// carry a default); others stay as written, for the error to name.
func expandVars(w string, vars map[string]string) string {
	if !strings.Contains(w, "$") {
		return w
	}
	return shellVar.ReplaceAllStringFunc(w, func(m string) string {
		sub := shellVar.FindStringSubmatch(m)
		name := sub[1] + sub[3]
		if v, ok := vars[name]; ok {
			return v
		}
		if sub[1] != "" && strings.Contains(m, ":-") {
			return sub[2]
		}
		return m
	})
}

// splitFlags turns the words after the engine's command into arguments:
// "--flag value", "--flag=value", "-tp 8", bare boolean flags and their
// "--no-" forms. Underscores in flag names read as dashes (vLLM's
// FlexibleArgumentParser and SGLang both accept them). A flag in single
// takes one word; another takes the plain words after it (argparse's
// nargs="+"). A word that is not a flag and follows none is an error. first is the 1-based index of words[0]
// in the whole command, for messages.
func splitFlags(name string, words []string, first int, bools, single map[string]bool, aliases map[string]string) ([]engineArg, error) {
	var out []engineArg
	for i := 0; i < len(words); i++ {
		w := words[i]
		at := fmt.Sprintf("argument %d", first+i)
		if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
			return nil, &Error{File: name, Key: w, Msg: at + ": a value that follows no flag"}
		}
		flag, val, hasVal := strings.Cut(w, "=")
		norm := strings.ReplaceAll(strings.TrimLeft(flag, "-"), "_", "-")
		sub := ""
		if j := strings.IndexByte(norm, '.'); j >= 0 { // vLLM: --speculative-config.method eagle3
			norm, sub = norm[:j], strings.ReplaceAll(norm[j+1:], "-", "_")
		}
		if a, ok := aliases[norm]; ok {
			norm = a
		}
		neg := false
		if rest, ok := strings.CutPrefix(norm, "no-"); ok && bools[rest] {
			norm, neg = rest, true
		}
		a := engineArg{Dest: strings.ReplaceAll(norm, "-", "_"), Flag: flag, At: at}
		switch {
		case hasVal:
			a.Val = pyValue{Kind: pyStr, Str: val, Raw: val}
		case bools[norm]:
			a.Val = pyValue{Kind: pyBool, Bool: !neg}
		case i+1 < len(words) && (!strings.HasPrefix(words[i+1], "-") || isNumeric(words[i+1])):
			i++
			a.Val = pyValue{Kind: pyStr, Str: words[i], Raw: words[i]}
			// nargs="+" lists (--cuda-graph-bs 1 2 4): the following plain
			// words belong to a flag the importer does not read.
			for !single[a.Dest] && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-") {
				i++
				a.Val.Str += " " + words[i]
				a.Val.Raw = a.Val.Str
			}
		default:
			a.Val = pyValue{Kind: pyBool, Bool: true} // an unknown flag with no value
		}
		if sub != "" {
			a.Text = a.written()
			a.Val = pyValue{Kind: pyDict, Keys: []string{sub}, Vals: []pyValue{a.Val}, Raw: fmt.Sprintf("{%q: %s}", sub, a.Val.Raw)}
		}
		out = append(out, a)
	}
	return out, nil
}

func isNumeric(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// argInt reads an integer argument; human allows vLLM's human_readable_int
// suffixes (k = 1e3, m = 1e6, g = 1e9 with decimals; K, M, G = 2^10, 2^20,
// 2^30; vllm/engine/arg_utils.py human_readable_int).
func argInt(a engineArg, human bool) (int, error) {
	switch a.Val.Kind {
	case pyInt:
		if a.Val.Int < -1<<31 || a.Val.Int > 1<<31-1 {
			return 0, fmt.Errorf("%d is out of range", a.Val.Int)
		}
		return int(a.Val.Int), nil
	case pyStr:
		s := strings.TrimSpace(a.Val.Str)
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
		if human && len(s) > 1 {
			mult := map[byte]float64{'k': 1e3, 'm': 1e6, 'g': 1e9, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}[s[len(s)-1]]
			if f, err := strconv.ParseFloat(s[:len(s)-1], 64); err == nil && mult > 0 && f >= 0 && f*mult < 1<<31 {
				if s[len(s)-1] >= 'A' && s[len(s)-1] <= 'Z' && f != float64(int64(f)) {
					return 0, fmt.Errorf("%q: a binary multiplier (K, M, G) needs a whole number", s)
				}
				return int(f * mult), nil
			}
		}
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return 0, fmt.Errorf("%s is not an integer", a.Val.Raw)
}

// argFloat reads a number argument.
func argFloat(a engineArg) (float64, error) {
	switch a.Val.Kind {
	case pyInt, pyFloat:
		return a.Val.Float, nil
	case pyStr:
		f, err := strconv.ParseFloat(strings.TrimSpace(a.Val.Str), 64)
		if err == nil {
			return f, nil
		}
		return 0, fmt.Errorf("%q is not a number", a.Val.Str)
	}
	return 0, fmt.Errorf("%s is not a number", a.Val.Raw)
}

// argBool reads a boolean argument (a bare flag, True/False, or the words
// true/false as SGLang's config files and dotted vLLM keys write them).
func argBool(a engineArg) (bool, error) {
	switch a.Val.Kind {
	case pyBool:
		return a.Val.Bool, nil
	case pyStr:
		switch strings.ToLower(a.Val.Str) {
		case "true", "1", "yes":
			return true, nil
		case "false", "0", "no":
			return false, nil
		}
	case pyNone:
		return false, nil
	}
	return false, fmt.Errorf("%s is not true or false", a.Val.Raw)
}

// argStr reads a string argument; None reads as "".
func argStr(a engineArg) string {
	if a.Val.Kind == pyNone {
		return ""
	}
	return a.Val.text()
}

// kvCacheValue maps an engine's KV-cache dtype to model.kv_cache: "" for
// the model's own dtype (auto), "bf16" or "fp8"; an error for a dtype
// moecast does not price.
func kvCacheValue(d *Deployment, s string) (string, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return "", nil
	case "bf16", "bfloat16":
		return "bf16", nil
	case "fp16", "float16", "half":
		d.warnf("KV-cache dtype %q priced as bf16 (the same 2 bytes per value)", s)
		return "bf16", nil
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla":
		return "fp8", nil
	}
	return "", fmt.Errorf("KV-cache dtype %q has no moecast equivalent (want auto, bf16 or an fp8 type)", s)
}

// ignore records an argument read but not modelled.
func (d *Deployment) ignore(a engineArg) { d.Ignored = append(d.Ignored, a.written()) }

// quoteTOML is s as a TOML basic string.
func quoteTOML(s string) string { return strconv.Quote(s) }
