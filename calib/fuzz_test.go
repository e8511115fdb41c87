package calib

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// FuzzParse feeds the calibration loader arbitrary files: it must never
// panic, and a file it accepts must survive Encode -> Parse unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validFile))
	f.Add([]byte(strings.Replace(validFile, "8,4096,21.0", "8,4096,-1", 1)))
	f.Add([]byte(strings.Replace(validFile, "schema = 1", "schema = 7", 1)))
	f.Add([]byte(strings.Replace(strings.Replace(strings.Replace(validFile, `op = "allreduce"`, `op = "elementwise"`, 1),
		"impl = \"nccl\"\n", "", 1), `"ranks", "bytes"`, `"bytes"`, 1))) // rows of 3 values for 2 columns
	f.Add([]byte(strings.Replace(strings.Replace(strings.Replace(strings.Replace(validFile, `op = "allreduce"`, `op = "elementwise"`, 1),
		"impl = \"nccl\"\n", "", 1), `"ranks", "bytes"`, `"bytes"`, 1), "8,1024,20.5\n8,4096,21.0", "1024,5.5\n1e9,1", 1)))
	withFabric := strings.Replace(validFile, `gpu = "h200-sxm"`, "gpu = \"h200-sxm\"\nfabric = \"nvlink4\"", 1)
	f.Add([]byte(strings.Replace(withFabric, "8,4096,21.0", "8,1073741824,1.0", 1)))
	f.Add([]byte(strings.Replace(withFabric, "8,4096,21.0", "8,4096,1e300", 1)))
	f.Add([]byte("schema = 1\n[[table]]\nrows = \"\"\"\n1,2\n\"\"\"\n"))
	f.Add([]byte(`schema = 1
[provenance]
gpu = "g"
date = "d"
source = "s"
launch = "eager"
cache = "unknown"
[[table]]
name = "moe"
op = "moe"
dtype = "int4_wo"
distribution = "balanced"
experts = 16
topk = 2
hidden = 64
inter = 32
columns = ["moe_tp", "ep", "tokens", "latency_ms", "l2_resident"]
rows = """
1,1,1,0.01,1
1,1,8,0.02,0
# a comment
1,2,8,0.015,0
"""
[[table]]
name = "mla"
op = "mla"
dtype = "bf16"
kv_dtype = "bf16"
kv_lora_rank = 512
qk_rope_dim = 64
columns = ["heads", "batch", "kv_len", "latency_us"]
rows = """
8,1,256,100
8,1,1024,120
8,4,256,130
"""
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cf, err := Parse("fuzz.toml", data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if len(cf.Tables) == 0 {
			return
		}
		var b bytes.Buffer
		if err := cf.Encode(&b); err != nil {
			t.Fatal(err)
		}
		again, err := Parse("again.toml", b.Bytes())
		if err != nil {
			t.Fatalf("re-parse of an encoded valid file: %v\n%s", err, b.String())
		}
		for i := range cf.Tables {
			if len(cf.Tables[i].Rows) != len(again.Tables[i].Rows) {
				t.Fatalf("table %d: %d rows became %d", i, len(cf.Tables[i].Rows), len(again.Tables[i].Rows))
			}
			for r := range cf.Tables[i].Rows {
				for c := range cf.Tables[i].Rows[r] {
					if cf.Tables[i].Rows[r][c] != again.Tables[i].Rows[r][c] {
						t.Fatalf("table %d row %d col %d: %v became %v", i, r, c, cf.Tables[i].Rows[r][c], again.Tables[i].Rows[r][c])
					}
				}
			}
		}
	})
}

// FuzzNCCLTests feeds the nccl-tests parser arbitrary output: it must
// never panic, and what it accepts must build a valid calibration.
func FuzzNCCLTests(f *testing.F) {
	for _, p := range ncclFixtures {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8 graph: 0\n  1073741824 268435456 float sum -1 1.0 0.10 0.08 0 1.0 0.10 0.08 0\n")
	f.Add("# Collective test starting: alltoall_perf\n# nThread 1 nGpus 4 graph: 1\n  1024 256 float none -1 10.0 0.10 0.08 N/A 10.1 0.10 0.08 N/A\n")
	f.Add("# Collective test starting: reduce_scatter_perf\n#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] G\n 8 2 float sum 10.0 0.0 0.0 0 10.0 0.0 0.0 0\n")
	f.Fuzz(func(t *testing.T, data string) {
		run, err := parseNCCLTests("all_reduce_perf.txt", strings.NewReader(data))
		if err != nil {
			return
		}
		for _, opt := range []NCCLTestsOptions{{GPU: "g", Date: "d", Command: "c"}, {GPU: "h100-sxm", Fabric: "pcie-gen5", Date: "d", Command: "c"}} {
			// Rows the parser accepts may still be refused as a table
			// (an in-place time of 0, a row faster than the fabric): an
			// error on one line, said once, not a panic.
			if _, err := buildNCCLFile([]*ncclRun{run}, opt); err != nil {
				if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "nccl-tests: nccl-tests") {
					t.Fatalf("bad error: %q", msg)
				}
			}
		}
	})
}

// FuzzPerfDBCSV feeds every perf-database reader arbitrary CSV: it must
// never panic, and a failed file leaves no table behind.
func FuzzPerfDBCSV(f *testing.F) {
	seeds := map[string]string{
		"nccl":     "framework,version,device,op_name,kernel_source,nccl_dtype,num_gpus,message_size,latency\nTRTLLM,2.29.2,NVIDIA H200,all_reduce,NCCL,half,8,256,0.016\n",
		"customar": "framework,version,device,op_name,kernel_source,allreduce_dtype,num_gpus,message_size,latency,backend\nvLLM,0.24.0,NVIDIA H200,all_reduce,vLLM_custom_graph,bfloat16,2,128,0.0043,vllm_graph\n",
		"deepep":   "framework,version,device,op_name,kernel_source,node_num,hidden_size,num_token,num_topk,num_experts,combine_avg_t_us,combine_bandwidth_gbps,dispatch_avg_t_us,dispatch_bandwidth_gbps\nsglang,0.5.12,NVIDIA H200,ll,deepep,1,2048,1,8,128,10.459,3.13,8.83,1.93\n",
		"moe":      "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\nVLLM,0.24.0,NVIDIA H200,moe,k,int4_wo,1,7168,2048,8,384,1,8,balanced,0.05\n",
		"mla":      "framework,version,device,op_name,kernel_source,model,architecture,mla_dtype,kv_cache_dtype,gemm_type,num_heads,batch_size,isl,tp_size,step,latency\nVLLM,0.24.0,NVIDIA RTX PRO 6000,mla_generation_module,TRITON_MLA,deepseek-ai/DeepSeek-V3,DeepseekV3ForCausalLM,bfloat16,bfloat16,bfloat16,128,1,1,1,2,0.265\n",
	}
	kinds := []string{"nccl", "customar", "deepep", "moe", "mla"}
	for i, k := range kinds {
		f.Add(uint8(i), seeds[k])
	}
	// MXFP4 experts with MXFP8 activations (moe_dtype w4a8_mxfp4_mxfp8),
	// in range and broken.
	for _, row := range []string{
		"SGLang,0.5.9,NVIDIA B200,moe,flashinfer,w4a8_mxfp4_mxfp8,32,2880,2880,4,128,1,1,balanced,0.28\n",
		"SGLang,0.5.9,NVIDIA B200,moe,flashinfer,w4a8_mxfp4_mxfp8,0,2880,-1,4,128,1,1,balanced,nan\n",
		"SGLang,0.5.9,NVIDIA B200,moe,flashinfer,w4a8_mxfp4_mxfp8,32,2880,2880,400,4,0,1,balanced,inf\n",
	} {
		f.Add(uint8(3), "framework,version,device,op_name,kernel_source,moe_dtype,num_tokens,hidden_size,inter_size,topk,num_experts,moe_tp_size,moe_ep_size,distribution,latency\n"+row)
	}
	for _, p := range []string{"testdata/perfdb/moe/h200_sxm__vllm_0.24.0_moe_perf_h7168_i2048.csv", "testdata/perfdb/comm/h200_sxm__sglang_0.5.12_wideep_deepep_ll_perf.csv"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		kind := uint8(3)
		if strings.Contains(p, "deepep") {
			kind = 2
		}
		f.Add(kind, string(data))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data string) {
		k := kinds[int(kind)%len(kinds)]
		im := &perfdbImport{opt: perfdbOpts("g"), gpu: "g", l2: 60 << 20, sys: systemInfo{gpusPerNode: 8, fabric: "f"}, file: &File{Schema: Schema}}
		err := im.readFrom(perfdbFile{rel: k + ".csv", kind: k, engine: "vllm", engVer: "1"}, strings.NewReader(data))
		if err != nil && len(im.file.Tables) > 0 {
			t.Fatalf("failed read kept %d tables", len(im.file.Tables))
		}
	})
}
