package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/moecast/moecast/internal/infile"
)

// Override sets one scenario key, named by its dotted TOML name
// ("parallel.tp", "hardware.gpu", "speculative.acceptance"), to a value
// as written on a command line ("4", "h200-sxm", "[0.7, 0.5]"). It is what
// `moecast sweep --set KEY=V1,V2,...` applies, one value at a time.
type Override struct {
	Key, Value string
}

// String is "key=value" on one line (newlines written as \n).
func (o Override) String() string { return oneLine.Replace(o.Key + "=" + o.Value) }

// overrideKeys lists every key an Override may name, sorted.
func overrideKeys() []string {
	var keys []string
	walkKeys(reflect.TypeOf(raw{}), "", func(key string, _ reflect.Type) { keys = append(keys, key) })
	slices.Sort(keys)
	return keys
}

// walkKeys calls f for every leaf key of the TOML struct type t.
func walkKeys(t reflect.Type, prefix string, f func(key string, t reflect.Type)) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("toml")
		if tag == "" || tag == "-" {
			continue
		}
		key := prefix + tag
		ft := sf.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			walkKeys(ft, key+".", f)
			continue
		}
		f(key, sf.Type)
	}
}

// CheckOverrideKey reports whether key names a scenario key: nil, or an
// error naming the unknown key (and the keys of its table, when the table
// exists).
func CheckOverrideKey(key string) error {
	_, err := fieldType(key)
	return err
}

func fieldType(key string) (reflect.Type, error) {
	t := reflect.TypeOf(raw{})
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("unknown scenario key %q: %s is not a table", key, strings.Join(parts[:i], "."))
		}
		sf, ok := fieldByTag(t, p)
		if !ok {
			var have []string
			for j := range t.NumField() {
				if tag := t.Field(j).Tag.Get("toml"); tag != "" {
					have = append(have, strings.Join(append(slices.Clone(parts[:i]), tag), "."))
				}
			}
			return nil, fmt.Errorf("unknown scenario key %q (have: %s)", key, strings.Join(have, ", "))
		}
		t = sf.Type
	}
	if t.Kind() == reflect.Struct || (t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct) {
		return nil, fmt.Errorf("scenario key %q is a table: set one of its keys (e.g. %s.%s)", key, key, firstTag(t))
	}
	return t, nil
}

func firstTag(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Field(0).Tag.Get("toml")
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if sf := t.Field(i); sf.Tag.Get("toml") == tag {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// ParseWith is Parse with overrides applied to the decoded document before
// it is validated: each Override replaces its key's value (or sets it
// when the file leaves it out). An override error names the key and the
// value ("--set parallel.tp=x: want an integer"); a scenario that the
// overrides make invalid fails as the file would, with the key's line in
// the file where it has one.
func ParseWith(name string, data []byte, overrides []Override) (_ *Scenario, err error) {
	defer asInput(&err)
	return parseWith(name, data, nil, dirOf(name), overrides)
}

// ReadSourceIn is ReadSource with "-" reading the scenario from stdin
// (named StdinName; relative paths resolve against the current directory).
func ReadSourceIn(arg string, stdin io.Reader) (_ *Source, err error) {
	defer asInput(&err)
	if arg != infile.Stdin {
		return ReadSource(arg)
	}
	data, err := infile.ReadFile(infile.Stdin, stdin, infile.MaxScenario)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return &Source{name: StdinName, data: data, dir: "."}, nil
}

// OpenWith is Open with overrides (see ParseWith); arg "" is the embedded
// default.
func OpenWith(arg string, overrides []Override) (_ *Scenario, err error) {
	defer asInput(&err)
	src, err := ReadSource(arg)
	if err != nil {
		return nil, err
	}
	return src.Parse(overrides)
}

// Source is a scenario's text read once, as Open resolves its argument, so
// that a sweep applies many sets of overrides without reading it again.
type Source struct {
	name string
	data []byte
	fsys fs.FS // nil: the OS file system
	dir  string
}

// Name is the file the scenario was read from ("embedded:<name>.toml" for
// a shipped one).
func (src *Source) Name() string { return src.name }

// ReadSource reads the scenario arg names (a file, else a shipped
// scenario's name; "" is the embedded default).
func ReadSource(arg string) (_ *Source, err error) {
	defer asInput(&err)
	if arg == "" {
		arg = DefaultName
	}
	if _, err := os.Stat(arg); err != nil && errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(arg, `/\`) {
		file := strings.TrimSuffix(arg, ".toml") + ".toml"
		if data, eerr := embedded.ReadFile(file); eerr == nil {
			return &Source{name: embeddedPrefix + file, data: data, fsys: embedded, dir: "."}, nil
		}
		return nil, fmt.Errorf("read scenario: %w (nor is %q a shipped scenario: %s)", err, arg, strings.Join(Names(), ", "))
	}
	data, err := infile.ReadFile(arg, nil, infile.MaxScenario)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return &Source{name: arg, data: data, dir: dirOf(arg)}, nil
}

// Parse validates the source with overrides applied (see ParseWith).
func (src *Source) Parse(overrides []Override) (_ *Scenario, err error) {
	defer asInput(&err)
	return parseWith(src.name, src.data, src.fsys, src.dir, overrides)
}

func parseWith(file string, data []byte, fsys fs.FS, dir string, overrides []Override) (*Scenario, error) {
	d, err := decode(file, data)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		if err := d.override(o); err != nil {
			return nil, fmt.Errorf("--set %s: %w", o, err)
		}
		d.overridden = append(d.overridden, o.Key)
	}
	prefetchTables(d.raw.Plan.GPUs, d.raw.Hardware.GPU)
	s := &Scenario{File: file, doc: d, fsys: fsys, dir: dir}
	if err := s.build(); err != nil {
		return nil, err
	}
	if err := s.buildPlan(); err != nil {
		return nil, err
	}
	if _, err := s.Sim(); err != nil {
		return nil, err
	}
	return s, nil
}

// override sets one key of d.raw from its command-line text.
func (d *doc) override(o Override) error {
	if _, err := fieldType(o.Key); err != nil {
		return err
	}
	v := reflect.ValueOf(&d.raw).Elem()
	for _, p := range strings.Split(o.Key, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		sf, _ := fieldByTag(v.Type(), p)
		v = v.FieldByIndex(sf.Index)
	}
	return setValue(v, strings.TrimSpace(o.Value))
}

// setValue parses text into v by v's type: strings as given, numbers and
// booleans as TOML writes them, arrays as "[a, b]" or one element.
func setValue(v reflect.Value, text string) error {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := setValue(p.Elem(), text); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString(unquote(text))
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		v.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", text)
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not a boolean (want true or false)", text)
		}
		v.SetBool(b)
	case reflect.Slice:
		items := []string{text}
		if strings.HasPrefix(text, "[") {
			if !strings.HasSuffix(text, "]") {
				return fmt.Errorf("%q: an array is missing its closing ]", text)
			}
			items = nil
			if inner := strings.TrimSpace(text[1 : len(text)-1]); inner != "" {
				for _, it := range strings.Split(inner, ",") {
					items = append(items, strings.TrimSpace(it))
				}
			}
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, it := range items {
			if err := setValue(s.Index(i), it); err != nil {
				return fmt.Errorf("item %d: %w", i+1, err)
			}
		}
		v.Set(s)
	case reflect.Interface:
		// hardware.calibration (a string or an array of strings),
		// speculative.acceptance (a number or an array of numbers): the
		// value as TOML reads it; a bare word is a string.
		var doc map[string]any
		if err := infile.CheckDepth("--set", []byte(text), infile.MaxDepth); err != nil {
			return err
		}
		if _, err := toml.Decode("v = "+text, &doc); err == nil && doc["v"] != nil {
			v.Set(reflect.ValueOf(doc["v"]))
			return nil
		}
		v.Set(reflect.ValueOf(unquote(text)))
	default:
		return fmt.Errorf("cannot be set from the command line")
	}
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// IsWorkloadKey reports whether key changes only what predict asks of the
// deployment (workload.batch, workload.context), not the deployment: a
// sweep applies such keys to a loaded Scenario with Workload instead of
// loading it again.
func IsWorkloadKey(key string) bool { return key == "workload.batch" || key == "workload.context" }

// Workload returns s's batch sizes and context with the overrides of
// workload keys (IsWorkloadKey) applied and checked; other keys are an
// error.
func (s *Scenario) Workload(overrides []Override) (batches []int, context int, err error) {
	batches, context = s.Batches, s.Context
	for _, o := range overrides {
		switch o.Key {
		case "workload.batch":
			var b []int
			if n, err := strconv.Atoi(o.Value); err == nil { // the common case, without reflection
				b = []int{n}
			} else if err := setValue(reflect.ValueOf(&b).Elem(), strings.TrimSpace(o.Value)); err != nil {
				return nil, 0, fmt.Errorf("--set %s: %w", o, err)
			}
			if err := CheckBatches(b); err != nil {
				return nil, 0, fmt.Errorf("--set %s: %w", o, err)
			}
			batches = b
		case "workload.context":
			n, err := strconv.Atoi(strings.TrimSpace(o.Value))
			if err != nil {
				return nil, 0, fmt.Errorf("--set %s: %q is not an integer", o, o.Value)
			}
			if err := CheckContext(n); err != nil {
				return nil, 0, fmt.Errorf("--set %s: %w", o, err)
			}
			context = n
		default:
			return nil, 0, fmt.Errorf("--set %s: not a workload key", o)
		}
	}
	return batches, context, nil
}

// CheckOverride reports whether o names a scenario key and its value has
// the key's type (an integer for parallel.tp, a number or an array of
// numbers for speculative.acceptance, ...); whether the value is valid for
// the scenario is for ParseWith to say.
func CheckOverride(o Override) (err error) {
	defer asInput(&err)
	t, err := fieldType(o.Key)
	if err != nil {
		return err
	}
	v := reflect.New(t).Elem()
	if err := setValue(v, strings.TrimSpace(o.Value)); err != nil {
		return fmt.Errorf("--set %s: %w", o, err)
	}
	if t.Kind() == reflect.Interface && numberKeys[o.Key] {
		items, one := v.Interface(), true
		if arr, ok := items.([]any); ok {
			for i, it := range arr {
				if !isNumber(it) {
					return fmt.Errorf("--set %s: item %d: %s is not a number", o, i+1, quoteValue(it))
				}
			}
			one = false
		}
		if one && !isNumber(items) {
			return fmt.Errorf("--set %s: item 1: %s is not a number", o, quoteValue(items))
		}
	}
	return nil
}

// numberKeys are the keys of interface type that take a number or an
// array of numbers (the others, hardware.calibration, take strings).
var numberKeys = map[string]bool{"speculative.acceptance": true}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, int64:
		return true
	}
	return false
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}
