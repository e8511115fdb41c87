package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/moecast/moecast/internal/infile"
)

// Manifest is an accuracy corpus (`moecast validate corpus`): entries,
// each a deployment's scenario and the measured results for it, and the
// sources they came from. Paths in it are relative to its directory.
//
//	[[source]]
//	name = "aiconfigurator"      # named by entries' source
//	origin = "owner/repo @ commit, path"
//	license = "Apache-2.0"
//	mapping = "how one row becomes one simulated point"
//
//	[[entry]]
//	name = "a/b"                 # unique
//	source = "aiconfigurator"
//	scenario = "a/b.toml"        # or skip = "why moecast cannot express it"
//	results = ["a/b.csv"]        # result files or directories, any format validate bench reads
//	format = "aiconfigurator"    # optional: skip detection
//	gpu = "b200_sxm"             # partition keys (optional; else from the results)
//	model = "DeepSeek-R1"
//	engine = "sglang"
//	checkpoint = "fp8"           # the checkpoint's quantization, as the source names it
//	baseline = "a/summary.txt"   # optional: a peer's own error on the same work
//	exclude = "why"              # optional: the measured rows do not represent the
//	                             # engine (a corpus rule's finding): counted, not scored
type Manifest struct {
	File string // the manifest's path (in FS)
	Dir  string // its directory in FS
	FS   fs.FS
	// Root is the directory on disk that FS reads, "" when FS is not on
	// disk (the shipped corpus): the entries' scenarios name their files
	// by it (Scenario.InputFiles).
	Root    string
	Sources []ManifestSource
	Entries []ManifestEntry
}

// ManifestSource is one [[source]].
type ManifestSource struct {
	Name    string `toml:"name"`
	Origin  string `toml:"origin"`
	License string `toml:"license"`
	Mapping string `toml:"mapping"`
}

// ManifestEntry is one [[entry]]. Paths are resolved against the
// manifest's directory (Manifest.Path).
type ManifestEntry struct {
	Name       string   `toml:"name"`
	Source     string   `toml:"source"`
	Scenario   string   `toml:"scenario"`
	Skip       string   `toml:"skip"`
	Results    []string `toml:"results"`
	Format     string   `toml:"format"`
	GPU        string   `toml:"gpu"`
	Model      string   `toml:"model"`
	Engine     string   `toml:"engine"`
	Checkpoint string   `toml:"checkpoint"`
	Baseline   string   `toml:"baseline"`
	// Exclude is why the entry's measured rows are left out of the score
	// although moecast can express the deployment: a corpus rule found
	// they do not represent the engine (validate/corpus/gen states the
	// rule and its evidence). Its rows are counted as skipped.
	Exclude string `toml:"exclude"`
	Line    int    `toml:"-"` // 1-based line of its [[entry]]
}

// Path resolves p, relative to the manifest, in FS.
func (m *Manifest) Path(p string) string { return path.Clean(path.Join(m.Dir, p)) }

// Scenario loads the entry's scenario from the manifest's file system.
func (m *Manifest) Scenario(e ManifestEntry) (_ *Scenario, err error) {
	defer asInput(&err)
	s, err := parseFS(m.FS, m.Path(e.Scenario))
	if s != nil {
		s.root = m.Root
	}
	return s, err
}

// ReadManifest reads and checks the manifest at p in fsys: every key known,
// every entry named once with results and a scenario or a skip reason,
// every path inside the manifest's directory tree.
func ReadManifest(fsys fs.FS, p string) (_ *Manifest, err error) {
	defer asInput(&err)
	data, err := infile.ReadFS(fsys, p, infile.MaxScenario)
	if err != nil {
		return nil, fmt.Errorf("read corpus manifest: %w", err)
	}
	if err := infile.CheckDepth(p, data, infile.MaxDepth); err != nil {
		return nil, err
	}
	var raw struct {
		Source []ManifestSource `toml:"source"`
		Entry  []ManifestEntry  `toml:"entry"`
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&raw)
	if err != nil {
		return nil, tomlError(p, err)
	}
	// which entries give skip or exclude at all: one given empty is an
	// error, not an entry scored after all
	var given struct {
		Entry []struct {
			Skip    *string `toml:"skip"`
			Exclude *string `toml:"exclude"`
		} `toml:"entry"`
	}
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&given); err != nil {
		return nil, tomlError(p, err)
	}
	lines := entryLines(data)
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0].String()
		return nil, &Error{File: p, Line: keyLines(data)[k], Msg: fmt.Sprintf("unknown key %q", k)}
	}
	m := &Manifest{File: p, Dir: path.Dir(p), FS: fsys, Sources: raw.Source, Entries: raw.Entry}
	sources := map[string]bool{}
	for _, s := range raw.Source {
		sources[s.Name] = true
	}
	seen := map[string]bool{}
	for i := range m.Entries {
		e := &m.Entries[i]
		if i < len(lines) {
			e.Line = lines[i]
		}
		bad := func(key, format string, args ...any) error {
			return &Error{File: p, Line: e.Line, Key: fmt.Sprintf("entry[%d].%s", i+1, key), Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case e.Name == "":
			return nil, bad("name", "missing")
		case seen[e.Name]:
			return nil, bad("name", "%q names two entries", e.Name)
		case len(e.Results) == 0:
			return nil, bad("results", "missing: the measured results of %q", e.Name)
		case e.Scenario == "" && e.Skip == "":
			return nil, bad("scenario", "missing: give the entry's scenario, or skip = \"why moecast cannot express it\"")
		case e.Source != "" && len(raw.Source) > 0 && !sources[e.Source]:
			return nil, bad("source", "%q is not a [[source]] of the manifest", e.Source)
		}
		if i < len(given.Entry) {
			for _, r := range []struct {
				key, what string
				v         *string
			}{
				{"skip", "why moecast cannot express the entry", given.Entry[i].Skip},
				{"exclude", "why its measured rows do not represent the engine (the corpus rule and its finding)", given.Entry[i].Exclude},
			} {
				switch {
				case r.v == nil:
				case strings.TrimSpace(*r.v) == "":
					return nil, bad(r.key, "empty: give %s, or leave the key out", r.what)
				case strings.ContainsAny(*r.v, "\r\n"):
					return nil, bad(r.key, "%q: one line, please (it is a row of the report's table of reasons)", *r.v)
				}
			}
		}
		seen[e.Name] = true
		// named are the files the entry names, keyOf their keys.
		named := append([]string{e.Scenario, e.Baseline}, e.Results...)
		keyOf := func(j int) string { return [...]string{"scenario", "baseline", "results"}[min(j, 2)] }
		for j, q := range named {
			key := keyOf(j)
			if q != "" && (path.IsAbs(q) || strings.HasPrefix(m.Path(q), "../") || !fs.ValidPath(m.Path(q))) {
				return nil, bad(key, "%q: want a path inside the manifest's directory", q)
			}
		}
		for j, q := range e.Results {
			if k := slices.IndexFunc(e.Results[:j], func(o string) bool { return m.Path(o) == m.Path(q) }); k >= 0 {
				return nil, bad("results", "%q (item %d) repeats item %d: its rows would be scored twice", q, j+1, k+1)
			}
		}
		for j, q := range named {
			key := keyOf(j)
			if q == "" {
				continue
			}
			// The file is there and is a file: a manifest naming what is
			// not there is refused, not scored as an unreadable entry.
			switch st, err := fs.Stat(fsys, m.Path(q)); {
			case m.Path(q) == path.Clean(p):
				return nil, bad(key, "%q is the manifest itself", q)
			case errors.Is(err, fs.ErrNotExist):
				return nil, bad(key, "%q: no such file", q)
			case err != nil:
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return nil, bad(key, "%q: %v", q, err)
			case st.IsDir():
				return nil, bad(key, "%q is a directory, want a file", q)
			case !st.Mode().IsRegular():
				// a FIFO or device would block or never end the read
				return nil, bad(key, "%q is not a regular file (%v)", q, st.Mode().Type())
			}
		}
	}
	if len(m.Entries) == 0 {
		return nil, &Error{File: p, Msg: "no [[entry]]: nothing to score"}
	}
	return m, nil
}

// entryLines lists the line of each [[entry]] header.
func entryLines(data []byte) []int {
	var out []int
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "[[entry]]" {
			out = append(out, i+1)
		}
	}
	return out
}
