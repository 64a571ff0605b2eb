"""`sbx view`: a local, read-only web viewer of the ledger (studies, their pairings, every run with its
scores, audit evidence, grading, meter, events and transcript). A reader like the report: it imports the
report's transcript rendering and templates and the run record, and writes nothing anywhere.

`ViewServer` is loaded on first use, so `orchestrator.view.queries` (the study's final table in SQL, which
`sbx study run` prints too) imports no HTTP server or templates."""

from orchestrator.lazy import lazy_names

__all__ = ["ViewServer"]
__getattr__ = lazy_names(__name__, {"ViewServer": "orchestrator.view.server"})
