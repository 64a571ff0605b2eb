"""Divergence analyses of studies: definitions filed first, arms paired, transcripts compared, result stored.

`file_definitions` files a study's definitions in the ledger (`sbx diverge plan`); `analyse_arms` runs the
analysis of two arms (and an optional different-seed control arm) of studies in the ledger and stores it
with the pair check; `analyse_imported` runs it on paired outcomes from a CSV (studies made elsewhere).

Which definitions count: the version filed in the ledger that the analysis uses (the latest, or the one
whose content equals `--definitions FILE`). They are preregistered when they were filed before the first
run of every study involved started; otherwise, or when none were filed (or the file given was never
filed), every finding is exploratory and the result says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.artifacts import ArtifactStore
from orchestrator.diverge.analysis import DivergenceAnalysis, PairedRuns, analyse
from orchestrator.diverge.export import analysis_json
from orchestrator.diverge.sources import read_pairs_csv, transcripts_in, with_evidence
from orchestrator.failures import ConfigError, DataError
from orchestrator.ledger import FiledDefinitions, Ledger
from orchestrator.ledger.diverge import definitions_sha256
from orchestrator.specs.diverge import DivergeDefinitions, load_definitions
from orchestrator.specs.study import load_study
from orchestrator.study.pairs import Arm, ArmPairs, first_found, pair_arms, stored_transcripts


def pairs_json(pairs: Sequence[PairedRuns]) -> list[dict[str, object]]:
    """Each pair as analysed: its runs, outcomes, seeds, and what comparing its transcripts found."""
    out = []
    for p in pairs:
        c = p.comparison
        out.append(
            {
                "task": p.task,
                "repeat": p.repeat,
                "run_a": p.a.run_id,
                "run_b": p.b.run_id,
                "same_seed": p.a.seed is not None and p.a.seed == p.b.seed,
                "outcome_a": p.a.outcome,
                "outcome_b": p.b.outcome,
                "score_a": p.a.score,
                "score_b": p.b.score,
                "compared": c is not None,
                "truncated": p.truncated,
                "identical": c.identical if c else None,
                "first_divergence": c.first_divergence if c else None,
                "divergence_class": c.divergence_class.value if c and c.divergence_class else None,
                "speaker_a": c.speaker_a if c else None,
                "speaker_b": c.speaker_b if c else None,
                "where": list(c.where) if c else [],
                "calls_a": c.calls_a if c else None,
                "calls_b": c.calls_b if c else None,
            }
        )
    return out


def _when(t: float | None) -> str:
    return "never" if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class UsedDefinitions:
    """The definitions an analysis used, and whether they count as filed before the runs."""

    definitions: DivergeDefinitions
    sha256: str
    #: the filed version, None when the definitions used were never filed
    version: int | None
    filed_at: float | None
    first_run_started: float | None
    preregistered: bool
    #: where they came from and what that means, in one sentence
    note: str

    def to_json(self) -> dict[str, object]:
        return {
            "version": self.version,
            "sha256": self.sha256,
            "filed_at": self.filed_at,
            "first_run_started": self.first_run_started,
            "preregistered": self.preregistered,
            "note": self.note,
        }


@dataclass
class DivergenceResult:
    analysis: DivergenceAnalysis
    definitions: UsedDefinitions
    #: the pairs as analysed (with their comparisons), for the per-pair views
    pairs: list[PairedRuns]
    arms: ArmPairs | None = None
    #: transcripts that could not be read, and other things the reader must know
    problems: list[str] = field(default_factory=list)
    stored_id: int | None = None
    #: where each run's transcript is (to show a pair side by side)
    transcript_of: dict[str, Path] = field(default_factory=dict)


def _study_id(ledger: Ledger, name: str) -> str:
    found = ledger.get_study_by_name(name) or ledger.get_study(name)
    if found is None:
        raise DataError(f"no study named {name!r} in the ledger {ledger.path}")
    return found.study_id


def _refuse_uncontrolled(definitions: DivergeDefinitions, source: str) -> None:
    missing = [c.name for c in definitions.causes if c.control is None]
    if missing:
        raise ConfigError(
            f"{source}: cause {', '.join(missing)} has no base-rate control (control: {{at_call: 0}}); the "
            "analysis would refuse to report it, so it is not filed"
        )


def file_definitions(
    ledger: Ledger, study: str | Path, path: Path
) -> tuple[FiledDefinitions, bool, str, float | None]:
    """File the definitions at `path` with a study (a name in the ledger, or a STUDY.yaml, whose study is
    recorded if it is not yet). Returns (the filed version, whether it is new, the study's name, when its
    first run started). A cause without a base-rate control is refused (ConfigError)."""
    definitions = load_definitions(path)
    _refuse_uncontrolled(definitions, str(path))
    study_path = Path(study)
    if study_path.suffix in (".yaml", ".yml") and study_path.is_file():
        from orchestrator.study.runner import open_study  # lazy: the runner loads the Docker SDK

        spec = load_study(study_path)
        name, study_id = spec.name, open_study(ledger, spec)
    else:
        name, study_id = str(study), _study_id(ledger, str(study))
    filed, new = ledger.divergence.file_definitions(study_id, definitions.canonical())
    return filed, new, name, ledger.divergence.first_run_started(study_id)


def used_definitions(ledger: Ledger | None, study_ids: Sequence[str], path: Path | None) -> UsedDefinitions:
    """Which definitions an analysis uses and whether they were filed before the runs (module docstring).

    `study_ids[0]` is the study the definitions are filed with; every study's first run counts."""
    given = load_definitions(path) if path is not None else None
    versions = ledger.divergence.filed(study_ids[0]) if ledger is not None and study_ids else []
    starts = [ledger.divergence.first_run_started(s) for s in study_ids] if ledger is not None else []
    started = min((s for s in starts if s is not None), default=None)
    chosen: FiledDefinitions | None
    if given is not None:
        sha = definitions_sha256(given.canonical())
        chosen = next((v for v in versions if v.sha256 == sha), None)  # the earliest filing of this content
        definitions = given
        if chosen is None:
            return UsedDefinitions(
                given,
                sha,
                None,
                None,
                started,
                False,
                f"{path} was never filed with the study: every finding is exploratory",
            )
    elif versions:
        chosen = versions[-1]
        definitions = DivergeDefinitions.model_validate(chosen.definitions)
    else:
        d = DivergeDefinitions()
        return UsedDefinitions(
            d,
            definitions_sha256(d.canonical()),
            None,
            None,
            started,
            False,
            "no definitions were filed (defaults used): every finding is exploratory",
        )
    before = started is None or chosen.filed_at < started
    note = (
        f"definitions version {chosen.version} of {len(versions)}, filed {_when(chosen.filed_at)}; "
        f"first run started {_when(started)}: "
        + (
            "filed before the runs"
            if before
            else "filed after the runs started, so every finding is exploratory"
        )
    )
    return UsedDefinitions(definitions, chosen.sha256, chosen.version, chosen.filed_at, started, before, note)


def _hint(pairs: Sequence[PairedRuns], definitions: DivergeDefinitions) -> list[str]:
    if definitions.agreement.kind != "pass_fail" or not pairs:
        return []
    sides = [s for p in pairs for s in (p.a, p.b)]
    if all(s.outcome is None for s in sides) and any(s.score is not None for s in sides):
        return [
            (
                "the runs have scores but no pass/fail outcome: declare agreement: {kind: score, "
                "pass_threshold: ...} to compare them"
            )
        ]
    return []


def analyse_arms(
    ledger: Ledger,
    store: ArtifactStore,
    study: str,
    a: str,
    b: str,
    *,
    control: str | None = None,
    definitions_path: Path | None = None,
    transcripts: Path | None = None,
    seed: int = 0,
    store_result: bool = True,
) -> DivergenceResult:
    """Arms `a` and `b` (PAIRING or STUDY:PAIRING) of `study` compared pair by pair, and stored."""
    arm_a, arm_b = Arm.parse(a, study), Arm.parse(b, study)
    arm_c = Arm.parse(control, study) if control else None
    arms = pair_arms(ledger, arm_a, arm_b, arm_c)
    names = [study, arm_a.study, arm_b.study] + ([arm_c.study] if arm_c else [])
    study_ids = list(dict.fromkeys(_study_id(ledger, name) for name in names))
    used = used_definitions(ledger, study_ids, definitions_path)
    locators = ([transcripts_in(transcripts)] if transcripts is not None else []) + [
        stored_transcripts(store, arms.runs)
    ]
    locate = first_found(*locators)
    problems: list[str] = []
    pairs = with_evidence(arms.pairs, locate, used.definitions, problems=problems)
    analysis = analyse(pairs, used.definitions, seed=seed, preregistered=used.preregistered)
    result = DivergenceResult(analysis, used, pairs, arms, problems + _hint(pairs, used.definitions))
    result.transcript_of = {rid: path for rid in arms.runs if (path := locate(rid)) is not None}
    if store_result:
        document = analysis_json(analysis) | {
            "definitions_used": used.to_json(),
            "problems": result.problems,
            "pairs": pairs_json(pairs),
        }
        result.stored_id = ledger.divergence.save_analysis(
            study_ids[0],
            definitions_version=used.version,
            definitions_sha256=used.sha256,
            preregistered=used.preregistered,
            arms=arms.arms_json(),
            pair_check=arms.check_json(),
            analysis=document,
        )
    return result


def analyse_imported(
    pairs_csv: Path, *, definitions_path: Path | None = None, transcripts: Path | None = None, seed: int = 0
) -> DivergenceResult:
    """Paired outcomes from a CSV (and transcripts named by run id): a study made outside sbx. Its
    definitions cannot have been filed in this ledger, so every finding is exploratory."""
    used = used_definitions(None, [], definitions_path)
    if definitions_path is not None:
        used = UsedDefinitions(
            used.definitions,
            used.sha256,
            None,
            None,
            None,
            False,
            f"{definitions_path}: definitions of an imported study cannot be checked as filed "
            "before its runs: every finding is exploratory",
        )
    pairs = read_pairs_csv(pairs_csv)
    problems: list[str] = []
    locate = transcripts_in(transcripts) if transcripts is not None else (lambda _rid: None)
    pairs = with_evidence(pairs, locate, used.definitions, problems=problems)
    analysis = analyse(pairs, used.definitions, seed=seed, preregistered=False)
    result = DivergenceResult(analysis, used, pairs, None, problems + _hint(pairs, used.definitions))
    result.transcript_of = {
        rid: path for p in pairs for rid in (p.a.run_id, p.b.run_id) if (path := locate(rid)) is not None
    }
    return result
