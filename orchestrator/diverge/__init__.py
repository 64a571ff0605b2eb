"""Why identical runs differ: gateway transcripts of paired runs compared call by call, and the analysis.

Pure: files and numbers in, typed results out; no Docker, no ledger. `transcript` defines the
format the gateway writes, `reader` reads it strictly, `normalise` maps per-call random identifiers
to ordinal placeholders, `compare` finds each pair's first divergence and its class, and `analysis`
runs the pre-declared statistics (orchestrator/specs/diverge.py). See docs/divergence.md.
"""
