"""`sbx view`: a local, read-only web viewer of the ledger (studies, their pairings, every run with its
scores, audit evidence, grading, meter, events and transcript). A reader like the report: it imports the
report's transcript rendering and templates and the run record, and writes nothing anywhere."""

from orchestrator.view.server import ViewServer

__all__ = ["ViewServer"]
