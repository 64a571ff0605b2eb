"""Built-in agents (orchestrator/agents: `BUILTINS`). Each file is a standalone script (standard library only)
mounted read-only into the sandbox and run there as the agent, `python /agent/<file>`; the host never imports
them (the oracle's template is read as text and filled in, orchestrator/agents/oracle_payload.py)."""
