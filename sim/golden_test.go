package sim

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update rewrites the golden files under testdata/ instead of comparing:
//
//	go test ./sim -run Golden -update
//
// Review the diff of every rewritten file before committing it.
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// TestGoldenOpLists pins the composition of a step, not its costs: for each
// setup, every op of one layer of each kind with its category, count per
// step and per-rank shape at batch 8, context 4096. A change to which ops
// run, how they are split or how many times they run shows here; a change
// of cost constants in kernels or comm does not.
func TestGoldenOpLists(t *testing.T) {
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			ops, err := st.sim(t).Explain(8, 4096)
			require.NoError(t, err)
			var b strings.Builder
			fmt.Fprintf(&b, "# %s: batch 8, context 4096\n", st.name)
			fmt.Fprintf(&b, "# layer | op | category | count per step | shape per rank\n")
			for _, o := range ops {
				fmt.Fprintf(&b, "%s | %s | %s | %g | %s\n", o.Layer, o.Name, o.Category, o.Count, o.Shape)
			}
			name := "ops_" + strings.NewReplacer(" ", "_", "(", "", ")", "", ".", "").Replace(st.name) + ".golden"
			path := filepath.Join("testdata", name)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "golden file missing: run go test ./sim -run Golden -update")
			assert.Equal(t, string(want), b.String(), "op list differs from %s (refresh with -update and review the diff)", path)
		})
	}
}
