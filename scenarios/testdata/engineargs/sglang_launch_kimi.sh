python3 -m sglang.launch_server --model-path moonshotai/Kimi-K2-Instruct \
  --tp 8 --dp 8 --enable-dp-attention --ep-size 8 \
  --max-running-requests 512 --chunked-prefill-size 16384 \
  --mem-fraction-static 0.85 --kv-cache-dtype fp8_e4m3 \
  --speculative-algorithm EAGLE3 --speculative-draft-model-path lmsys/Kimi-K2-EAGLE3 \
  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \
  --enable-mixed-chunk --disable-overlap-schedule --host 0.0.0.0 --port 30000 \
  --enable-two-batch-overlap --cuda-graph-bs 1 2 4 8 --trust-remote-code
