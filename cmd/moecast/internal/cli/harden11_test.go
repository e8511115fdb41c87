package cli

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hardening round 11 (session 11's hostile-input pass over the surfaces
// of sessions 9-10: the perf database's parquet tree, replayed workloads,
// corpus manifests). Each row failed before its fix; the package tests of
// calib, validate and scenarios hold the finer cases.

// TestHostileInputsRefused11: each input is refused with exit 2 and one
// line naming the file (and line and key where it has them).
func TestHostileInputsRefused11(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	const sc = "gpt-oss-120b-h200-tp1"
	empty := write("empty.jsonl", "\n\n")
	long := write("long.jsonl", `{"timestamp": 0, "input_length": 100, "output_length": 10}`+"\n"+
		`{"timestamp": 5, "input_length": 5000000, "output_length": 10}`+"\n")
	delay := write("delay.jsonl", `{"timestamp": 0, "input_length": 100, "output_length": 10, "request_id": "a"}`+"\n"+
		`{"timestamp": 5, "input_length": 100, "output_length": 10, "wait_for": ["a"], "delay": 1e300}`+"\n")

	// A corpus whose manifest names a file that is not there, itself, or
	// a FIFO (whose read blocked: `validate corpus` hung).
	corpus := func(name, results string) string {
		d := filepath.Join(dir, name)
		write(filepath.Join(name, "s.toml"), "")
		write(filepath.Join(name, "manifest.toml"), "[[entry]]\nname = \"e\"\nscenario = \"s.toml\"\nresults = [\""+results+"\"]\n")
		return d
	}
	missing := corpus("c1", "nope.csv")
	self := corpus("c2", "manifest.toml")
	fifo := corpus("c3", "fifo")
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo, "fifo"), 0o644))

	// A parquet table of the perf database whose last bytes claim a 4 GB
	// footer (parquet-go allocated it before reading).
	tree := filepath.Join(dir, "tree")
	pq, err := os.ReadFile("../../../../calib/testdata/perfdbtree/data/gb200/comm/vllm/0.24.0/custom_allreduce_perf.parquet")
	require.NoError(t, err)
	binary.LittleEndian.PutUint32(pq[len(pq)-8:], 0xfffffff0)
	write("tree/data/gb200/comm/vllm/0.24.0/custom_allreduce_perf.parquet", string(pq))

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"replay of an empty file", []string{"simulate", sc, "--workload", empty}, empty + ": empty: no request to replay"},
		{"replay of a request too long", []string{"simulate", sc, "--workload", long}, long + ":2: input_length: 5000000 tokens exceeds the limit"},
		{"replay of a turn waiting 1e297 s", []string{"simulate", sc, "--workload", delay}, delay + ":2: delay: the turn waits 1e+297 s"},
		{"corpus entry's results missing", []string{"validate", "corpus", missing}, `manifest.toml:1: entry[1].results: "nope.csv": no such file`},
		{"corpus entry's results the manifest", []string{"validate", "corpus", self}, `manifest.toml:1: entry[1].results: "manifest.toml" is the manifest itself`},
		{"corpus entry's results a FIFO", []string{"validate", "corpus", fifo}, `manifest.toml:1: entry[1].results: "fifo" is not a regular file`},
		{"perf database table claiming a 4 GB footer", []string{"calib", "import", "perfdb", tree, "-o", filepath.Join(dir, "out.toml")},
			"custom_allreduce_perf.parquet: not a readable parquet file: its footer claims 4294967280 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			assertRefusedOneLine(t, tc.want, tc.args...)
			require.Less(t, time.Since(start), 10*time.Second, "no hang")
		})
	}
}
