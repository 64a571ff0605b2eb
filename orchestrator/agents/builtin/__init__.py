"""Built-in agents. Each file is a standalone script (standard library only) run inside the sandbox as
`python /agent/<file>`; nothing here is imported by the orchestrator at run time."""
