package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.toml")
	require.NoError(t, WriteFile(p, []byte("one"), 0o644))
	require.NoError(t, WriteFile(p, []byte("two"), 0o644))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
}

func TestFailedWriteKeepsOldAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.toml")
	require.NoError(t, WriteFile(p, []byte("old"), 0o644))
	err := Write(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("boom")
	})
	require.ErrorContains(t, err, "boom")
	b, _ := os.ReadFile(p)
	assert.Equal(t, "old", string(b))
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 1, "temporary file left behind")
}
