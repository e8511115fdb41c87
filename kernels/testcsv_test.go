package kernels

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// csvRow is one data row of a testdata CSV file: its fields and its line
// in the file (the header is line 1).
type csvRow struct {
	fields []string
	line   int
}

// readTestCSV reads testdata/name, every record as long as the header,
// and returns the rows below the header; it fails t where it cannot.
func readTestCSV(t *testing.T, name string) []csvRow {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs, "%s: no header", name)
	out := make([]csvRow, 0, len(recs)-1)
	for i, r := range recs[1:] {
		out = append(out, csvRow{r, i + 2})
	}
	return out
}

// atoi is the row's field col as a whole number; it fails t, naming the
// row's line, where the field is not one.
func (r csvRow) atoi(t *testing.T, col int) int {
	t.Helper()
	n, err := strconv.Atoi(r.fields[col])
	require.NoError(t, err, "row %d", r.line)
	return n
}

// float is the row's field col as a number; it fails t, naming the row's
// line, where the field is not one.
func (r csvRow) float(t *testing.T, col int) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(r.fields[col], 64)
	require.NoError(t, err, "row %d", r.line)
	return v
}
