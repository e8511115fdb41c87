package scenarios

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/dtype"
)

// TestKVCacheFromCheckpoint: model.kv_cache absent or "auto" takes the KV
// dtype the checkpoint declares (here ModelOpt's hf_quant_config.json
// beside config.json); a kv_cache given wins.
func TestKVCacheFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../model/presets/deepseek-ai--DeepSeek-R1_config.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	delete(m, "quantization_config")
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	side := `{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hf_quant_config.json"), []byte(side), 0o644))

	tests := []struct {
		name, kv string
		want     dtype.KVCache
		from     bool
	}{
		{"absent", "", dtype.KVFP8, true},
		{"auto", `kv_cache = "auto"`, dtype.KVFP8, true},
		{"bf16 given", `kv_cache = "bf16"`, dtype.KVBF16, false},
		{"fp8 given", `kv_cache = "fp8"`, dtype.KVFP8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toml := "[model]\nconfig = \"config.json\"\n" + tt.kv + "\n[hardware]\ngpu = \"b200-sxm\"\ngpus = 8\ncalibration = \"none\"\n[parallel]\ntp = 8\n"
			path := filepath.Join(dir, tt.name+".toml")
			require.NoError(t, os.WriteFile(path, []byte(toml), 0o644))
			sc, err := Load(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, sc.Config.KVCache)
			assert.Equal(t, tt.from, sc.KVCacheFromCheckpoint)
			assert.Equal(t, "modelopt NVFP4", sc.Config.Model.Quant.Method)
		})
	}
}
