"""sbx orchestrator: the control plane that runs agents in metered sandboxes and reports on the runs."""

__version__ = "0.1.0"
