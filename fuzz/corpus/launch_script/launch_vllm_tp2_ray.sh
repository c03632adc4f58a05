#!/bin/bash
# NVIDIA's two-Spark serving layout: a Ray cluster across both boxes, then TP=2.
ray start --head --port=6379
vllm serve meta-llama/Llama-3.3-70B-Instruct -tp 2 --distributed-executor-backend ray \
  --gpu-memory-utilization 0.85
