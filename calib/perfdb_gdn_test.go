package calib

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

// TestImportGDN: gdn_perf's chunked-scan rows become a prefill gdn table
// and its fused recurrent rows a decode one (latency ms -> us), keyed by
// key and value heads per GPU, sequences and tokens per sequence; the conv
// rows and a second model's row at a shape already read are skipped and
// counted; the tables then price a GDN state update of their shapes, and
// only of a GDN layer.
func TestImportGDN(t *testing.T) {
	const head = "framework,version,device,op_name,kernel_source,phase,batch_size,seq_len,num_tokens,d_model,d_conv,num_k_heads,head_k_dim,num_v_heads,head_v_dim,model_name,latency\n"
	body := head +
		"SGLang,0.5.14,NVIDIA B200,gdn,causal_conv1d_fn,context,1,1024,1024,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.007\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,chunk_gated_delta_rule,context,1,1024,1024,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.075\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,chunk_gated_delta_rule,context,1,8192,8192,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.4335\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,chunk_gated_delta_rule,context,8,1024,8192,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.2522\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,chunk_gated_delta_rule,context,1,8192,8192,3072,4,4,128,16,128,Qwen/Qwen3.5-122B-A10B,0.4336\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,causal_conv1d_update,generation,64,1,64,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.0029\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,fused_recurrent_gated_delta_rule_packed_decode,generation,64,1,64,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.0236\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,fused_recurrent_gated_delta_rule_packed_decode,generation,8,1,8,4096,4,4,128,16,128,Qwen/Qwen3.5-397B-A17B,0.0058\n"
	im := ctxImport(t, "gdn", "gdn.parquet", body)
	require.Equal(t, []string{"gdn.sglang-0.5.14.prefill.k128-v128", "gdn.sglang-0.5.14.decode.k128-v128"}, tableNames(im.file))
	pre, dec := im.file.Tables[0], im.file.Tables[1]
	assert.Equal(t, Keys{Phase: "prefill", HeadDim: 128, VHeadDim: 128}, pre.Keys)
	assert.Equal(t, "chunk_gated_delta_rule", pre.Provenance.Kernel)
	assert.Equal(t, [][]float64{{4, 16, 1, 1024, 75}, {4, 16, 1, 8192, 433.5}, {4, 16, 8, 1024, 252.2}}, pre.Rows)
	assert.Equal(t, Keys{Phase: "decode", HeadDim: 128, VHeadDim: 128}, dec.Keys)
	assert.Equal(t, [][]float64{{4, 16, 8, 1, 5.8}, {4, 16, 64, 1, 23.6}}, dec.Rows)
	assert.Equal(t, 2, im.skipped[[2]string{"gdn.parquet", "the causal conv (sim prices it as its own op)"}])
	assert.Equal(t, 1, im.skipped[[2]string{"gdn.parquet", "another model's row at a kernel shape already read (d_model is not an input of the kernel): the first row kept"}])

	kt := im.file.kt
	gdn := kernels.RecurrentShape{GDN: true, KHeads: 4, Heads: 16, KDim: 128, VDim: 128, StateBytes: 4, Chunk: 64, Seqs: 1, Tokens: 8192}
	e, ok := kt.GDN(gdn)
	require.True(t, ok)
	assert.InDelta(t, 433.5e-6, float64(e.Time), 1e-12, "one prompt of 8192 tokens")
	multi := gdn
	multi.Seqs = 8
	e, ok = kt.GDN(multi)
	require.True(t, ok)
	assert.InDelta(t, 252.2e-6, float64(e.Time), 1e-12, "eight prompts of 1024 tokens: the same tokens, a shorter scan")
	d := gdn
	d.Chunk, d.Seqs, d.Tokens = 0, 64, 64
	e, ok = kt.GDN(d)
	require.True(t, ok)
	assert.InDelta(t, 23.6e-6, float64(e.Time), 1e-12, "the decode table answers a decode step")
	other := gdn
	other.KHeads, other.Heads = 2, 8
	_, ok = kt.GDN(other)
	assert.False(t, ok, "heads not measured")
	kda := gdn
	kda.GDN = false
	_, ok = kt.GDN(kda)
	assert.False(t, ok, "not a GDN layer (KDA, Mamba-2)")
	long := gdn
	long.Tokens = 16384
	_, ok = kt.GDN(long)
	assert.False(t, ok, "a scan longer than any measured: the roofline prices it")
}

// TestImportGDNBadPhase: a row of an unknown phase is an error naming the
// file and line.
func TestImportGDNBadPhase(t *testing.T) {
	const body = "framework,version,device,op_name,kernel_source,phase,batch_size,seq_len,num_k_heads,head_k_dim,num_v_heads,head_v_dim,latency\n" +
		"SGLang,0.5.14,NVIDIA B200,gdn,chunk_gated_delta_rule,mixed,1,1024,4,128,16,128,0.075\n"
	im := &perfdbImport{opt: perfdbOpts("b200-sxm"), gpu: "b200-sxm", l2: 126e6, sys: systemInfo{gpusPerNode: 8, fabric: "nvlink5"},
		file: &File{Schema: Schema}}
	err := im.readFrom(perfdbFile{rel: "gdn.parquet", kind: "gdn", engine: "sglang", engVer: "0.5.14", parquet: true}, strings.NewReader(body))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gdn.parquet:2")
	assert.Contains(t, err.Error(), `phase "mixed"`)
}
