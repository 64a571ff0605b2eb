#!/usr/bin/env python3
"""Hostile agent: allocate memory until the kernel stops us."""
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
    for i in range(0, len(chunks[-1]), 4096):
        chunks[-1][i] = 1
