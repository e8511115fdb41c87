package calib

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriterNeverWritesWhatItsReaderRefuses (issue 22 class 7): a file
// whose rows its own reader would refuse (a device or a driver that
// reported nonsense, a unit slip in an importer) is refused by Write and
// WriteStream before anything is written.
func TestWriterNeverWritesWhatItsReaderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		op     string
		mutate func(t *Table)
	}{
		{"gemm faster than the GPU's peak", "gemm", func(t *Table) { t.Rows[0][len(t.Rows[0])-1] = 1e-6 }},
		{"collective faster than the fabric", "allreduce", func(t *Table) { t.Rows[len(t.Rows)-1][len(t.Rows[0])-1] = 1e-6 }},
		{"latency of an hour", "gemm", func(t *Table) { t.Rows[0][len(t.Rows[0])-1] = 3.6e9 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared, err := Embedded("h200-sxm")
			require.NoError(t, err)
			f := *shared // Embedded's file is shared: change a copy
			i := -1
			for j := range f.Tables {
				if f.Tables[j].Op == tc.op && i < 0 {
					i = j
				}
			}
			require.GreaterOrEqual(t, i, 0, "no %s table", tc.op)
			f.Tables = []Table{f.Tables[i]}
			tb := &f.Tables[0]
			tb.Rows = append([][]float64(nil), tb.Rows...)
			for r := range tb.Rows {
				tb.Rows[r] = append([]float64(nil), tb.Rows[r]...)
			}
			require.Equal(t, "latency_us", tb.Columns[len(tb.Columns)-1])
			tc.mutate(tb)
			path := filepath.Join(t.TempDir(), "out.toml")
			err = f.Write(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "would not read back")
			_, serr := os.Stat(path)
			assert.True(t, os.IsNotExist(serr), "nothing written")
		})
	}
}
