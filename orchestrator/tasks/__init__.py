"""Coding tasks graded by hidden tests: environments, the grading tree, the strict JUnit parser, verdicts,
the grader container, the task builder, verification and Harbor import (docs/tasks.md).

Pure logic (tree, junit, verdict, patches) imports nothing heavy; modules that drive Docker import the SDK
themselves, so `sbx --help` stays fast."""
