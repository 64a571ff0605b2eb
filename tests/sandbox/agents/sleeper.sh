#!/bin/bash
# An agent that goes quiet: no output, no CPU.
sleep 600
