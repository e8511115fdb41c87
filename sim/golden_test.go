package sim

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/golden"
)

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
			golden.Check(t, filepath.Join("testdata", name), b.String()) // -update rewrites
		})
	}
}
