package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCorpusInStep regenerates the corpus from ../shared/data/serving into
// a temporary directory and requires the committed one to be the same,
// file for file (nothing in it is written by hand). It skips where the
// shared data are absent.
func TestCorpusInStep(t *testing.T) {
	serving, configs := "../../../../shared/data/serving", "../../../../shared/data/model_configs"
	if _, err := os.Stat(serving); err != nil {
		t.Skipf("no shared serving data here (%v)", err)
	}
	out := t.TempDir()
	g := &gen{serving: serving, configs: configs, out: out, usedConfigs: map[string]bool{}}
	require.NoError(t, g.run())
	generated := map[string]bool{}
	require.NoError(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		generated[rel] = true
		want, err := os.ReadFile(p)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("..", rel))
		require.NoError(t, err, "%s: generated but not committed (go generate ./validate/corpus)", rel)
		assert.Equal(t, string(want), string(got), "%s differs from the generator's (go generate ./validate/corpus)", rel)
		return nil
	}))
	for _, dir := range []string{"aiconfigurator", "inferencex", "llmservingsim", "configs"} {
		require.NoError(t, filepath.WalkDir(filepath.Join("..", dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel("..", p)
			assert.True(t, generated[rel], "%s is committed but the generator does not write it", rel)
			return nil
		}))
	}
	assert.True(t, generated["manifest.toml"])
}
