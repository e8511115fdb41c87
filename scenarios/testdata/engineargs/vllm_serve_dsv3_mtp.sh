#!/bin/bash
# DeepSeek-V3 on one 8-GPU box: TP8 with expert parallelism and MTP.
VLLM_USE_DEEP_GEMM=1 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \
vllm serve deepseek-ai/DeepSeek-V3 \
    --tensor-parallel-size 8 \
    --enable-expert-parallel \
    --max-num-seqs 256 \
    --max-num-batched-tokens 8k \
    --gpu-memory-utilization=0.92 \
    --kv-cache-dtype fp8 \
    --speculative-config '{"method": "deepseek_mtp", "num_speculative_tokens": 1}' \
    --trust-remote-code --port 8000 --served-model-name dsv3 \
    --enable-dbo --quantization fp8 2>&1 | tee serve.log
