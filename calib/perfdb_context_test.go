package calib

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/kernels"
)

// ctxImport reads body as a perf-database file of kind and builds the
// calibration, as ImportPerfDB does after reading every file.
func ctxImport(t *testing.T, kind, rel, body string) *perfdbImport {
	t.Helper()
	im := &perfdbImport{opt: perfdbOpts("b200-sxm"), gpu: "b200-sxm", l2: 126e6, sys: systemInfo{gpusPerNode: 8, fabric: "nvlink5"},
		file: &File{Schema: Schema}}
	require.NoError(t, im.readFrom(perfdbFile{rel: rel, kind: kind, engine: "sglang", engVer: "0.5.14", parquet: true}, strings.NewReader(body)))
	require.NoError(t, im.file.validate())
	require.NoError(t, im.file.build())
	return im
}

// TestImportContextAttention: a context_attention_perf row of one prompt
// becomes a prefill row (chunk = isl, prefix 0, latency ms -> us) in the
// table of its head_dim, KV dtype, window and kernel, which then prices a
// prefill of that shape; rows of several prompts, with a cached prefix or
// fp8 queries are skipped and counted.
func TestImportContextAttention(t *testing.T) {
	const head = "framework,version,device,op_name,kernel_source,batch_size,isl,num_heads,num_key_value_heads,head_dim,beam_width,attn_dtype,kv_cache_dtype,step,window_size,latency\n"
	body := head +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,1,8192,32,4,128,1,bfloat16,bfloat16,0,0,0.5\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,1,1024,32,4,128,1,bfloat16,bfloat16,0,0,0.02\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,1,8192,32,4,128,1,bfloat16,bfloat16,0,128,0.1\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,flashinfer,1,8192,32,4,128,1,bfloat16,bfloat16,0,0,0.56\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,4,8192,32,4,128,1,bfloat16,bfloat16,0,0,2.0\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,1,8192,32,4,128,1,fp8,fp8,0,0,0.47\n" +
		"SGLang,0.5.14,NVIDIA B200,context_attention,trtllm_mha,1,8192,32,4,128,1,bfloat16,bfloat16,16,0,0.5\n"
	im := ctxImport(t, "gqactx", "ctx.parquet", body)
	names := tableNames(im.file)
	assert.Equal(t, []string{"prefill.sglang-0.5.14.d128.kv-bf16.trtllm_mha", "prefill.sglang-0.5.14.d128.kv-bf16.w128",
		"prefill.sglang-0.5.14.d128.kv-bf16.flashinfer"}, names)
	tb := im.file.Tables[0]
	assert.Equal(t, Keys{KVDtype: "bf16", HeadDim: 128, VHeadDim: 128}, tb.Keys)
	assert.Equal(t, [][]float64{{32, 4, 1024, 0, 20}, {32, 4, 8192, 0, 500}}, tb.Rows)
	assert.Equal(t, 128, im.file.Tables[1].Keys.Window)
	assert.Equal(t, 1, im.skipped[[2]string{"ctx.parquet", "batch_size > 1 (the prefill table keys one prompt a call)"}])
	assert.Equal(t, 1, im.skipped[[2]string{"ctx.parquet", "step > 0 (a prefill over a cached prefix; the rows read have none)"}])
	assert.Len(t, im.skipOrder, 3)

	kt := im.file.kt
	e, ok := kt.Prefill(kernels.PrefillShape{Heads: 32, KVHeads: 4, QKDim: 128, VDim: 128, KV: "bf16", Chunks: 1, Tokens: 8192, MeanKV: 8192})
	require.True(t, ok)
	assert.InDelta(t, 500e-6, float64(e.Time), 1e-12, "the first table measured (trtllm_mha) answers")
	_, ok = kt.Prefill(kernels.PrefillShape{Heads: 16, KVHeads: 4, QKDim: 128, VDim: 128, KV: "bf16", Chunks: 1, Tokens: 8192, MeanKV: 8192})
	assert.False(t, ok, "heads not measured")
}

// TestImportContextMLA: context_mla_perf rows of one prompt over a bf16
// KV cache become a prefill table of MLA's dims (q/k 192, v 128) with
// kv_heads = heads; fp8 KV-cache rows and batches are skipped.
func TestImportContextMLA(t *testing.T) {
	const head = "framework,version,device,op_name,kernel_source,mla_dtype,kv_cache_dtype,num_heads,batch_size,isl,tp_size,step,latency\n"
	body := head +
		"SGLang,0.5.14,NVIDIA B200,mla_context,trtllm_mla,bfloat16,bfloat16,32,1,8192,4,0,0.5648\n" +
		"SGLang,0.5.14,NVIDIA B200,mla_context,trtllm_mla,bfloat16,bfloat16,32,1,1024,4,0,0.03\n" +
		"SGLang,0.5.14,NVIDIA B200,mla_context,trtllm_mla,bfloat16,fp8,32,1,8192,4,0,0.52\n" +
		"SGLang,0.5.14,NVIDIA B200,mla_context,trtllm_mla,bfloat16,bfloat16,32,2,8192,4,0,1.1\n"
	im := ctxImport(t, "mlactx", "mla.parquet", body)
	require.Equal(t, []string{"prefill.sglang-0.5.14.mla.d192-128.kv-bf16"}, tableNames(im.file))
	tb := im.file.Tables[0]
	assert.Equal(t, Keys{KVDtype: "bf16", HeadDim: 192, VHeadDim: 128}, tb.Keys)
	assert.Equal(t, [][]float64{{32, 32, 1024, 0, 30}, {32, 32, 8192, 0, 564.8}}, tb.Rows)
	assert.Len(t, im.skipOrder, 2)
	e, ok := im.file.kt.Prefill(kernels.PrefillShape{Heads: 32, KVHeads: 32, QKDim: 192, VDim: 128, KVBytes: 2, Chunks: 1, Tokens: 8192, MeanKV: 8192})
	require.True(t, ok)
	assert.InDelta(t, 564.8e-6, float64(e.Time), 1e-12)
}

// TestImportMoEMXFP8: the parquet tree's w4a8_mxfp4_mxfp8 rows (MXFP4
// weights, MXFP8 activations) become a moe table of dtype mxfp4_mxfp8, the
// w4a16_mxfp4 rows of the same kernel one of dtype mxfp4, each answering
// only its own quant.
func TestImportMoEMXFP8(t *testing.T) {
	head := "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n"
	var b strings.Builder
	b.WriteString(head)
	for _, q := range []struct {
		dtype string
		ms    float64
	}{{"w4a8_mxfp4_mxfp8", 0.2873}, {"w4a16_mxfp4", 0.3757}} {
		for _, n := range []int{1, 32, 64} {
			fmt.Fprintf(&b, "SGLang,0.5.14,NVIDIA B200,moe,sglang_flashinfer_trtllm_moe,%s,%d,2880,2880,4,128,1,1,balanced,%g\n", q.dtype, n, q.ms*float64(n+31)/63)
		}
	}
	im := ctxImport(t, "moe", "moe/sglang/0.5.14/moe_perf.parquet", b.String())
	names := tableNames(im.file)
	assert.Contains(t, names, "moe.sglang-0.5.14.mxfp4_mxfp8.e128.k4.h2880.i2880.balanced")
	assert.Contains(t, names, "moe.sglang-0.5.14.mxfp4.e128.k4.h2880.i2880.balanced")
	for i := range im.file.Tables {
		tb := &im.file.Tables[i]
		if strings.Contains(tb.Name, "mxfp4_mxfp8") {
			assert.Equal(t, "mxfp4_mxfp8", tb.Keys.Dtype)
		}
	}
}
