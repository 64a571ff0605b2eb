#!/bin/bash
# A scripted agent: one counted experiment of the starting train.py, then it delivers it unchanged.
./run_experiment "starting code"
