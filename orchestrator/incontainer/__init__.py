"""Programs that run inside sbx's containers, next to hostile code, never on the host.

The host never imports these modules (an import-linter `forbidden` contract in pyproject.toml, run by
tests/test_architecture.py): it reads each file as text (`orchestrator.paths.incontainer_source`) and hands
it to the container, e.g. the copier as `python3 -I -S -c SOURCE`, or mounts it read-only (the built-in
agents, `agents/`; `orchestrator.paths.incontainer_file`). So each one imports only the standard library and
what its container's own image provides (never sbx: sbx is not installed there), which the same test checks.
docs/architecture.md ("Programs that run inside containers") lists every such program, those baked into
images too, and how each reaches its container.
"""
