package scenarios

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadManifest(t *testing.T) {
	good := `[[source]]
name = "s"
license = "MIT"

[[entry]]
name = "a"
source = "s"
scenario = "a.toml"
results = ["a.csv", "more/b.json"]
gpu = "h100_sxm"

[[entry]]
name = "b"
skip = "disaggregated"
results = ["b.csv"]

[[entry]]
name = "c"
scenario = "a.toml"
exclude = "TTFT beyond the server's own capacity"
results = ["c.json"]
`
	files := fstest.MapFS{"c/manifest.toml": {Data: []byte(good)}}
	for _, f := range []string{"c/a.toml", "c/a.csv", "c/more/b.json", "c/b.csv", "c/c.json"} {
		files[f] = &fstest.MapFile{Data: []byte("x")}
	}
	m, err := ReadManifest(files, "c/manifest.toml")
	require.NoError(t, err)
	require.Len(t, m.Entries, 3)
	assert.Equal(t, "TTFT beyond the server's own capacity", m.Entries[2].Exclude)
	assert.Empty(t, m.Entries[0].Exclude)
	assert.Equal(t, 5, m.Entries[0].Line)
	assert.Equal(t, 12, m.Entries[1].Line)
	assert.Equal(t, "c/more/b.json", m.Path(m.Entries[0].Results[1]))
	assert.Equal(t, "MIT", m.Sources[0].License)

	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", "[[entry]]\nname = \"a\"\nresult = [\"x\"]\n", `unknown key "entry.result"`},
		{"no results", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\n", "m.toml:1: entry[1].results: missing"},
		{"no scenario", "[[entry]]\nname = \"a\"\nresults = [\"a\"]\n", "m.toml:1: entry[1].scenario: missing"},
		{"twice", "[[entry]]\nname = \"a\"\nskip = \"x\"\nresults = [\"a\"]\n[[entry]]\nname = \"a\"\nskip = \"x\"\nresults = [\"a\"]\n", `m.toml:5: entry[2].name: "a" names two entries`},
		{"outside", "[[entry]]\nname = \"a\"\nskip = \"x\"\nresults = [\"../a\"]\n", `entry[1].results: "../a": want a path inside`},
		{"scenario outside", "[[entry]]\nname = \"a\"\nscenario = \"../../etc/passwd\"\nresults = [\"a\"]\n", `entry[1].scenario: "../../etc/passwd": want a path inside`},
		{"baseline absolute", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nbaseline = \"/etc/passwd\"\nresults = [\"a\"]\n", `entry[1].baseline: "/etc/passwd": want a path inside`},
		{"type", "[[entry]]\nname = 3\n", "m.toml:2"},
		{"empty exclude", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nexclude = \"\"\nresults = [\"a\"]\n", "m.toml:1: entry[1].exclude: empty"},
		{"blank exclude", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nexclude = \" \\t \"\nresults = [\"a\"]\n", "m.toml:1: entry[1].exclude: empty"},
		{"exclude of two lines", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nexclude = \"x\\ny\"\nresults = [\"a\"]\n", `m.toml:1: entry[1].exclude: "x\ny": one line`},
		{"empty skip", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nskip = \"\"\nresults = [\"a\"]\n", "m.toml:1: entry[1].skip: empty"},
		{"unknown source", "[[source]]\nname = \"s\"\n[[entry]]\nname = \"a\"\nsource = \"t\"\nskip = \"x\"\nresults = [\"a\"]\n", `entry[1].source: "t" is not a [[source]]`},
		// Session 9: a results file listed twice was scored twice (its
		// rows weighed double in every MAPE); a manifest without entries
		// scored nothing, exit 0.
		{"results repeated", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nresults = [\"r.csv\", \"b.csv\", \"./r.csv\"]\n", `m.toml:1: entry[1].results: "./r.csv" (item 3) repeats item 1`},
		{"no entries", "[[source]]\nname = \"s\"\n", "m.toml: no [[entry]]"},
		{"empty", "", "m.toml: no [[entry]]"},
		// Session 11: a file the manifest names and does not hold was
		// scored as an "unreadable results" or "cannot express" skip, exit
		// 0; a FIFO hung the read.
		{"scenario missing", "[[entry]]\nname = \"a\"\nscenario = \"nope.toml\"\nresults = [\"r.csv\"]\n", `m.toml:1: entry[1].scenario: "nope.toml": no such file`},
		{"results missing", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nresults = [\"r.csv\", \"nope.json\"]\n", `m.toml:1: entry[1].results: "nope.json": no such file`},
		{"baseline missing", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nbaseline = \"nope.toml\"\nresults = [\"r.csv\"]\n", `m.toml:1: entry[1].baseline: "nope.toml": no such file`},
		{"skipped entry's results missing", "[[entry]]\nname = \"a\"\nskip = \"x\"\nresults = [\"nope.csv\"]\n", `m.toml:1: entry[1].results: "nope.csv": no such file`},
		{"scenario is the manifest", "[[entry]]\nname = \"a\"\nscenario = \"m.toml\"\nresults = [\"r.csv\"]\n", `m.toml:1: entry[1].scenario: "m.toml" is the manifest itself`},
		{"results are the manifest", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nresults = [\"./d/../m.toml\"]\n", `m.toml:1: entry[1].results: "./d/../m.toml" is the manifest itself`},
		{"results a directory", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nresults = [\"d\"]\n", `m.toml:1: entry[1].results: "d" is a directory, want a file`},
		{"results a FIFO", "[[entry]]\nname = \"a\"\nscenario = \"a.toml\"\nresults = [\"fifo\"]\n", `m.toml:1: entry[1].results: "fifo" is not a regular file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := fstest.MapFS{"m.toml": {Data: []byte(tc.in)}, "a.toml": {}, "a": {}, "r.csv": {}, "d/x": {},
				"fifo": {Mode: fs.ModeNamedPipe}}
			_, err := ReadManifest(files, "m.toml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzReadManifest(f *testing.F) {
	f.Add([]byte("[[source]]\nname = \"s\"\n[[entry]]\nname = \"a\"\nsource = \"s\"\nscenario = \"a.toml\"\nresults = [\"a.csv\"]\n"))
	f.Add([]byte("[[entry]]\nname = \"b\"\nskip = \"x\"\nresults = [\"../b\"]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadManifest(fstest.MapFS{"m.toml": {Data: b}}, "m.toml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "m.toml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, e := range m.Entries {
			if e.Name == "" || len(e.Results) == 0 || (e.Scenario == "" && e.Skip == "") {
				t.Fatalf("accepted an unusable entry: %+v", e)
			}
			for _, p := range e.Results {
				if q := m.Path(p); strings.HasPrefix(q, "../") || !fs.ValidPath(q) {
					t.Fatalf("accepted a path outside the corpus: %q", p)
				}
			}
		}
	})
}
