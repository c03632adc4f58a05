#!/bin/bash
torchrun --nnodes 2 --nproc_per_node 1 --node_rank 0 --master_addr 192.168.100.10 pretrain_gpt.py \
  --tensor-model-parallel-size 1 --pipeline-model-parallel-size 2 --num-layers 32
