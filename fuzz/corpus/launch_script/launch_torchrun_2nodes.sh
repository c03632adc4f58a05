#!/usr/bin/env bash
# Two Sparks, one GPU each: node 0 of 2.
export NNODES=2
export MASTER_ADDR=192.168.100.10
NCCL_SOCKET_IFNAME=enp1s0f1np1 torchrun \
  --nnodes=$NNODES --nproc-per-node=1 --node-rank=0 \
  --master-addr=$MASTER_ADDR --master-port=29500 \
  train.py --config cfg.yaml
