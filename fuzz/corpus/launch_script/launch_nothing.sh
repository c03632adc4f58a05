#!/bin/bash
echo "hello"
python3 prepare_data.py
