"""One run, start to end: workspace, sandbox, meter, experiments, agent, watchdog, copy-out, ledger."""
