"""The report: tables, figures and writers over a runs table (see runs_table.py for its columns)."""

from orchestrator.report.build import ReportPaths, build_report
from orchestrator.report.runs_table import SCHEMA, load_runs_csv, validate_runs

__all__ = ["SCHEMA", "ReportPaths", "build_report", "load_runs_csv", "validate_runs"]
