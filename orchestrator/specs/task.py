"""A task bundle: task.yaml plus the repo folder the agent receives.

Two kinds share the loader. `ml` (flight-delays): a continuous score on hidden data. `tests`: a coding
task graded pass/fail by hidden tests (docs/tasks.md). Both may declare an environment: a Python version
and exact package pins, built into an image shared by every task that declares the same one (an ml task
names an environment file, `environment: FILE`; without one it runs on the standard images).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.home import Home
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.loading import load_yaml_model
from orchestrator.specs.tasktypes import MetricInfo, TaskType, default_metric, metric_info


class VisibleFile(BaseModel):
    """A prepared file copied into the agent's repo."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    to: str
    visible_to_agent: Literal[True]


class HiddenSet(BaseModel):
    """A scorer-only data set: features go to the scorer container, labels never leave the host."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    features: str
    labels: str
    visible_to_agent: Literal[False]


class Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    entrypoint: str = "train.py"
    predict: str = "predict_proba"
    eval_line: str

    @field_validator("eval_line")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            if re.compile(v).groups != 1:
                raise ValueError("eval_line must have exactly one group: the score")
        except re.error as exc:
            raise ValueError(f"eval_line is not a regular expression: {exc}") from None
        return v


class TaskFiles(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    train: VisibleFile
    eval: VisibleFile
    holdout: HiddenSet
    later: HiddenSet | None = None


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: Literal["ml"]
    description: str = ""
    #: binary (predict_proba: P(positive)), multiclass (predict_proba: one column per class of `classes`) or
    #: regression (the contract's function: one number per row); specs/tasktypes.py lists each one's metrics
    task_type: TaskType = "binary"
    metric: str = Field("", description="a metric of the task type (empty: the type's default)")
    target: str
    positive_label: str | None = Field(None, description="binary: the label value of the positive class")
    negative_label: str = Field("N", description="binary: the label value of the negative class")
    classes: tuple[str, ...] | None = Field(None, description="multiclass: the label values, in the order of "
                                                              "predict_proba's columns")
    #: regression: applied to the labels and the predictions before the metric (log1p: the metric of
    #: log(1 + y), for counts or prices whose errors are relative; both must then be > -1)
    transform: Literal["none", "log1p"] = "none"
    data: str = Field(description="name of the prepared data set in the Home's data folder")
    files: TaskFiles
    repo: str = "repo"
    contract: Contract
    #: an environment file (PythonEnvironment) relative to the bundle: runs and scoring use its sandbox image
    #: (`sbx-env-sandbox:<hash>`). Absent: the standard images (images/requirements.lock), as before.
    environment: str | None = None
    #: a model that grades each run from the instruction (`description`) and the delivered diff (specs/judge.py);
    #: with no tests, its verdict stands alone, marked as a model's. A study's `judge:` replaces it.
    judge: JudgeSpec | None = None
    root: Path = Field(default=Path("."), exclude=True)
    #: the environment file as loaded and validated by `load_task`
    _python_env: PythonEnvironment | None = PrivateAttr(None)

    @property
    def repo_dir(self) -> Path:
        return self.root / self.repo

    @model_validator(mode="after")
    def _typed(self) -> TaskSpec:
        metric = self.metric or default_metric(self.task_type)
        metric_info(self.task_type, metric)  # a ValueError names the allowed metrics
        object.__setattr__(self, "metric", metric)  # frozen: the default filled in once, here
        if self.task_type == "binary":
            if self.positive_label is None:
                raise ValueError("positive_label: a binary task names its positive label")
            if self.positive_label == self.negative_label:
                raise ValueError(f"positive_label and negative_label are both {self.positive_label!r}")
        elif self.positive_label is not None:
            raise ValueError(f"positive_label: only a binary task has one (this one is {self.task_type})")
        if self.task_type == "multiclass":
            if self.classes is None or len(self.classes) < 2 or len(set(self.classes)) != len(self.classes):
                raise ValueError("classes: a multiclass task lists at least two distinct label values, in the "
                                 "order of predict_proba's columns")
        elif self.classes is not None:
            raise ValueError(f"classes: only a multiclass task has them (this one is {self.task_type})")
        if self.transform != "none" and self.task_type != "regression":
            raise ValueError(f"transform: only a regression task has one (this one is {self.task_type})")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict:
        # The fields added for other task types, and the judge, are left out at their defaults, so a binary
        # task's dump, and with it the config hash of every run made before they existed, stays what it was.
        data = handler(self)
        for key, default in (("task_type", "binary"), ("negative_label", "N"), ("classes", None), ("judge", None),
                             ("transform", "none")):
            if key in data and data[key] == default:
                del data[key]
        return data

    @property
    def metric_info(self) -> MetricInfo:
        """The task's metric: its name, direction and standard error."""
        return metric_info(self.task_type, self.metric)

    @field_validator("environment")
    @classmethod
    def _env_inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative(v, "environment")

    @property
    def python_env(self) -> PythonEnvironment | None:
        """The task's declared environment (None: the standard images)."""
        return self._python_env

    def data_dir(self, home: Home) -> Path:
        """Where this task's prepared data set is in `home`."""
        return home.data_dir(self.data)

    def hidden_sets(self) -> dict[str, HiddenSet]:
        return {k: v for k, v in (("holdout", self.files.holdout), ("later", self.files.later)) if v is not None}


# --- environments --------------------------------------------------------------------------------------

#: Python versions an environment may declare: the CPython of a Debian suite whose base can be made here
#: (no registry answers and python.org / GitHub builds are out of reach, so Debian's own python3 is the only
#: source). Values: (suite, the exact CPython that suite ships).
PYTHONS: dict[str, tuple[str, str]] = {"3.11": ("bookworm", "3.11.2"), "3.13": ("trixie", "3.13.5")}

_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[A-Za-z0-9.]+)?$")


def normalize_name(name: str) -> str:
    """PEP 503 normal form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


class PythonEnvironment(BaseModel):
    """An environment: one Python (from a Debian suite) and exact pins, installed from a host wheelhouse."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["python"] = "python"
    python: str = Field(description=f"one of {', '.join(PYTHONS)}")
    packages: dict[str, str] = Field(description="distribution name -> exact version (the full closure)")
    #: pins that have no wheel on PyPI: built on the host into a pure-Python wheel
    sdist_only: tuple[str, ...] = ()
    #: distribution name -> the sha256 of its file (the wheel for this Python on Debian, or the sdist of an
    #: sdist-only pin): with them the wheelhouse is fetched with pip's hash checking, so the index cannot change
    #: what is installed under a pinned version. Written by `sbx tasks lock`; all pins or none.
    hashes: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @field_validator("python")
    @classmethod
    def _available(cls, v: str) -> str:
        if v not in PYTHONS:
            offered = ", ".join(f"{k} (Debian {s}: CPython {p})" for k, (s, p) in PYTHONS.items())
            raise ValueError(f"Python {v} cannot be had here; available: {offered}")
        return v

    @field_validator("packages", mode="before")
    @classmethod
    def _strings(cls, v: object) -> object:
        if isinstance(v, dict):
            for name, version in v.items():
                if not isinstance(version, str):
                    raise ValueError(f"{name}: {version!r} is not an exact version written as a string (e.g. '8.3.5')")
        return v

    @field_validator("packages")
    @classmethod
    def _pins(cls, v: dict[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, version in v.items():
            if not _NAME.match(name):
                raise ValueError(f"{name!r} is not a distribution name")
            if not isinstance(version, str) or not _VERSION.match(version):
                raise ValueError(f"{name}: {version!r} is not an exact version (write it as a string, e.g. '8.3.5')")
            key = normalize_name(name)
            if key in out:
                raise ValueError(f"{name} is pinned twice")
            out[key] = version
        return dict(sorted(out.items()))

    @field_validator("hashes")
    @classmethod
    def _sha256s(cls, v: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for name, digests in v.items():
            if not digests or not all(_SHA256.fullmatch(d) for d in digests):
                raise ValueError(f"{name}: hashes must be sha256 hex digests (64 lowercase hex characters)")
            out[normalize_name(name)] = tuple(sorted(set(digests)))
        return dict(sorted(out.items()))

    @model_validator(mode="after")
    def _sdist_only_pinned(self) -> PythonEnvironment:
        missing = [n for n in self.sdist_only if normalize_name(n) not in self.packages]
        if missing:
            raise ValueError(f"sdist_only names packages that are not pinned: {missing}")
        if self.hashes and set(self.hashes) != set(self.packages):
            unhashed = sorted(set(self.packages) - set(self.hashes))
            stray = sorted(set(self.hashes) - set(self.packages))
            raise ValueError("hashes must cover every pin and nothing else (`sbx tasks lock` writes them): "
                             + "; ".join(part for part in (f"no hash for {unhashed}" if unhashed else "",
                                                           f"not pinned: {stray}" if stray else "") if part))
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict:
        # Left out when empty, so the spec (and the config hash) of an environment without hashes is what it was.
        data = handler(self)
        if not data.get("hashes", True):
            del data["hashes"]
        return data

    @property
    def suite(self) -> str:
        return PYTHONS[self.python][0]

    @property
    def built_here(self) -> frozenset[str]:
        """The sdist-only pins' normalised names: the ones whose file is an sdist, built on the host."""
        return frozenset(normalize_name(n) for n in self.sdist_only)

    def lock_text(self) -> str:
        """The pins as a requirements lock (`name==version [--hash=sha256:...]` lines; sdist-only ones tagged
        `# sdist`)."""
        built = self.built_here
        return "".join(f"{n}=={v}" + "".join(f" --hash=sha256:{h}" for h in self.hashes.get(n, ()))
                       + ("  # sdist" if n in built else "") + "\n" for n, v in self.packages.items())

    def digest(self) -> str:
        """Identity of the environment: equal for equal declarations, whatever their key order. Hashes are
        part of it when declared (an environment without them keeps the digest it always had)."""
        body: dict[str, object] = {"python": self.python, "suite": self.suite, "packages": self.packages,
                                   "sdist_only": sorted(self.built_here)}
        if self.hashes:
            body["hashes"] = {n: list(h) for n, h in self.hashes.items()}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:12]


class DockerfileEnvironment(BaseModel):
    """An environment given as a Dockerfile in the bundle (imported Harbor tasks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["dockerfile"] = "dockerfile"
    context: str = Field("environment", description="build context folder in the bundle")
    dockerfile: str = "Dockerfile"
    #: the FROM image the Dockerfile names, when a local image was substituted for it (`--base`)
    base_substituted_for: str | None = None
    workdir: str = Field("/app", description="the folder the agent works in; it is what gets graded")

    @field_validator("workdir")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/") or ".." in v.split("/"):
            raise ValueError("workdir must be an absolute path without '..'")
        return v.rstrip("/") or "/"


Environment = Annotated[PythonEnvironment | DockerfileEnvironment, Field(discriminator="type")]


def load_environment(path: Path) -> PythonEnvironment:
    """An environment file (e.g. tasks/flight-delays-reference/environment.yaml, named by that task.yaml)."""
    return load_yaml_model(path, PythonEnvironment)


# --- the `tests` kind ------------------------------------------------------------------------------------


def _relative(v: str, what: str) -> str:
    p = PurePosixPath(v)
    if not v or p.is_absolute() or ".." in p.parts or "\\" in v:
        raise ValueError(f"{what} must be a relative path inside the bundle without '..': {v!r}")
    return v


#: files restored from the original at grading when the task names none (whole files: restoring only a
#: file's test section is not attempted). sitecustomize/usercustomize/.pth are always removed or restored.
DEFAULT_PROTECTED = ("tests/", "test/", "testing/", "conftest.py", "pytest.ini", ".pytest.ini", "tox.ini",
                     "setup.cfg", "pyproject.toml", "noxfile.py")


class PytestGrader(BaseModel):
    """Grade by running pytest: pass iff every fail_to_pass and every pass_to_pass test passed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["pytest"] = "pytest"
    command: tuple[str, ...] = Field(("python", "-I", "-m", "pytest", "-p", "no:cacheprovider"), min_length=1,
                                     description="argv run from the repo root; the grader adds the report option")
    paths: tuple[str, ...] = Field(("tests",), description="test paths given to the command for a whole-suite run")
    fail_to_pass: tuple[str, ...] = Field(min_length=1)
    pass_to_pass: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict, description="extra environment of the test command")

    @model_validator(mode="after")
    def _disjoint(self) -> PytestGrader:
        for name, ids in (("fail_to_pass", self.fail_to_pass), ("pass_to_pass", self.pass_to_pass)):
            if len(set(ids)) != len(ids):
                raise ValueError(f"{name} lists a test id twice")
        both = set(self.fail_to_pass) & set(self.pass_to_pass)
        if both:
            raise ValueError(f"ids in both fail_to_pass and pass_to_pass: {sorted(both)[:5]}")
        return self


class ScriptGrader(BaseModel):
    """Grade by a test script's own result (Harbor: tests/test.sh writes /logs/verifier/reward.txt)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["script"] = "script"
    command: tuple[str, ...] = ("bash", "/tests/test.sh")
    tests_to: str = Field("/tests", description="where the hidden tests folder is placed in the grader")
    reward_file: str = "/logs/verifier/reward.txt"
    pass_threshold: float = Field(1.0, description="a reward at or above this passes")
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("tests_to", "reward_file")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/") or ".." in v.split("/"):
            raise ValueError("must be an absolute path without '..'")
        return v


Grader = Annotated[PytestGrader | ScriptGrader, Field(discriminator="type")]


class Limits(BaseModel):
    """Resources of one grading container."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cpus: float = Field(1.0, gt=0, le=64)
    memory_mb: int = Field(2048, ge=256)
    pids: int = Field(512, ge=16)
    tmp_mb: int = Field(256, ge=16, description="size of /tmp in the grader")
    report_max_bytes: int = Field(16 << 20, ge=1024, description="a larger test report is a fail")


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tests_s: float = Field(600, gt=0, le=86_400, description="one grading's test command")
    agent_s: float = Field(3600, gt=0, description="the agent's wall clock (used by runs, phase 2)")
    build_s: float = Field(1800, gt=0, description="building the task's images")


class Source(BaseModel):
    """Where the task came from (the builder writes it): a library fixed between two published versions."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    library: str
    before: str
    after: str
    before_sdist: str = Field(description="sdist file name")
    before_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    after_sdist: str
    after_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    fix_files: tuple[str, ...] = ()
    declared_tests: tuple[str, ...] = ()
    excluded_tests: tuple[str, ...] = ()
    notes: str = ""


class SdistTree(BaseModel):
    """A tree of the bundle made from one of the source's sdists (`orchestrator/tasks/materialise.py`): its
    files, minus symlinks and bytecode, minus `drop` globs, or only the `select`ed files; `sha256` is the
    digest of the tree made (`tree_digest`: every path, its executable bit and its bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sdist: Literal["before", "after"]
    drop: tuple[str, ...] = ()
    select: tuple[str, ...] = Field((), description="exactly these files (empty: every file not dropped)")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    files: int = Field(ge=1, description="how many files the tree has")


class TaskLock(BaseModel):
    """How a task's repo and hidden tests are made from its pinned sdists (`source`), and their digests: the
    trees are materialised on demand into a content-addressed cache, never committed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    repo: SdistTree
    hidden: SdistTree


class TestIds(BaseModel):
    """tests.yaml beside a task.yaml: the grader's derived test ids (long lists, kept out of the spec file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    fail_to_pass: tuple[str, ...] = Field(min_length=1)
    pass_to_pass: tuple[str, ...] = ()


class TestsTaskSpec(BaseModel):
    """A coding task graded by tests the agent never sees.

    With a `lock`, its repo and hidden tests are not in the bundle: `orchestrator.tasks.materialise` makes them
    from the pinned sdists into its cache, checks their digests, and returns the spec with `repo_dir` and
    `hidden_dir` pointing there; before that, asking for either is a ConfigError naming `sbx tasks build`."""

    __test__ = False  # not a pytest test class, whatever its name
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    kind: Literal["tests"]
    description: str = ""
    repo: str = Field("repo", description="folder the agent receives (an sdist unpacked, or any tree)")
    instruction: str = Field("instruction.md", description="the issue text the agent is given (a file)")
    hidden_tests: str = Field("hidden", description="folder of files written over the repo at grading; never "
                                                     "in the sandbox")
    reference_patch: str | None = Field(None, description="the fix as a unified diff (the oracle applies it)")
    solution: str | None = Field(None, description="a script that solves the task (Harbor's solve.sh)")
    environment: Environment
    install: Literal["editable", "none"] = Field("editable", description="editable: `pip install -e` of the "
                                                 "original repo into the task image (entry points, metadata)")
    grader: Grader
    protected: tuple[str, ...] = Field(DEFAULT_PROTECTED, description="paths restored from the original at "
                                       "grading: `dir/`, a bare name (any depth), or a path glob")
    grade_repeats: int = Field(1, ge=1, le=20)
    limits: Limits = Limits()
    timeouts: Timeouts = Timeouts()
    source: Source | None = None
    lock: TaskLock | None = None
    #: the file beside task.yaml that holds the grader's fail_to_pass / pass_to_pass (TestIds)
    test_ids: str | None = None
    #: a model that grades each run from the instruction and the delivered diff, beside the hidden tests (each
    #: verdict then has a reference: the report measures the judge against them); a study's `judge:` replaces it
    judge: JudgeSpec | None = None
    root: Path = Field(default=Path("."), exclude=True)
    #: where a locked task's trees were materialised and checked (`with_trees`, called by
    #: orchestrator.tasks.materialise): private, so no task.yaml can point them anywhere
    _repo_path: Path | None = PrivateAttr(None)
    _hidden_path: Path | None = PrivateAttr(None)

    @field_validator("repo", "instruction", "hidden_tests", "reference_patch", "solution", "test_ids")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        return None if v is None else _relative(v, "path")

    @model_validator(mode="after")
    def _consistent(self) -> TestsTaskSpec:
        if isinstance(self.grader, ScriptGrader) != isinstance(self.environment, DockerfileEnvironment):
            raise ValueError("a script grader goes with a dockerfile environment, a pytest grader with a python one")
        if isinstance(self.environment, DockerfileEnvironment) and self.install != "none":
            raise ValueError("install: a dockerfile environment installs what it needs itself; use install: none")
        if self.lock is not None and self.source is None:
            raise ValueError("lock: its trees are made from the source's sdists; the task has no source")
        return self

    def path(self, rel: str) -> Path:
        return self.root / rel

    @property
    def materialised(self) -> bool:
        """Whether repo_dir and hidden_dir can be used (a task without a lock has its trees in the bundle)."""
        return self.lock is None or (self._repo_path is not None and self._hidden_path is not None)

    def with_trees(self, repo: Path, hidden: Path) -> TestsTaskSpec:
        """A copy whose repo_dir and hidden_dir are these (checked) folders."""
        copy = self.model_copy()
        copy._repo_path, copy._hidden_path = repo, hidden
        return copy

    def _tree(self, which: str, path: Path | None, rel: str) -> Path:
        if self.lock is None:
            return self.root / rel
        if path is None:
            raise ConfigError(f"task {self.name}: its {which} is made from pinned sdists and has not been "
                              f"materialised here; run `sbx tasks build {self.name}` (or materialise it first)")
        return path

    @property
    def repo_dir(self) -> Path:
        return self._tree("repo", self._repo_path, self.repo)

    @property
    def hidden_dir(self) -> Path:
        return self._tree("hidden tests", self._hidden_path, self.hidden_tests)


def load_tests_task(name_or_path: str | Path) -> TestsTaskSpec:
    """A `tests` task by name or path; every file it names must exist in the bundle."""
    path = task_yaml(name_or_path)
    kind = task_kind(path)
    if kind not in (None, "tests"):
        raise ConfigError(f"{path}: kind: task {path.parent.name!r} is a {kind!r} task, not a 'tests' task")
    spec = load_yaml_model(path, TestsTaskSpec, update=lambda data: _merge_test_ids(path, data))
    spec = spec.model_copy(update={"root": path.parent.resolve()})
    for key, rel in (("repo", spec.repo), ("hidden_tests", spec.hidden_tests)):
        if spec.lock is None and not spec.path(rel).is_dir():
            raise ConfigError(f"{path}: {key}: {spec.path(rel)} is not a folder")
    optional_files: tuple[tuple[str, str | None], ...] = (
        ("instruction", spec.instruction), ("reference_patch", spec.reference_patch), ("solution", spec.solution))
    for key, maybe in optional_files:
        if maybe is not None and not spec.path(maybe).is_file():
            raise ConfigError(f"{path}: {key}: {spec.path(maybe)} does not exist")
    if isinstance(spec.environment, DockerfileEnvironment):
        df = spec.path(spec.environment.context) / spec.environment.dockerfile
        if not df.is_file():
            raise ConfigError(f"{path}: environment.dockerfile: {df} does not exist")
    return spec


def _merge_test_ids(path: Path, data: dict) -> None:
    """Put the ids of the file `test_ids:` names (tests.yaml) into the grader before validation."""
    rel = data.get("test_ids")
    if not isinstance(rel, str):
        return
    grader = data.get("grader")
    if not isinstance(grader, dict):
        return
    both = sorted({"fail_to_pass", "pass_to_pass"} & set(grader))
    if both:
        raise ConfigError(f"{path}: grader: {', '.join(both)} is in {rel} (test_ids); not here too")
    ids = load_yaml_model(path.parent / _relative(rel, "test_ids"), TestIds)
    grader.update(fail_to_pass=list(ids.fail_to_pass), pass_to_pass=list(ids.pass_to_pass))


def task_yaml(name_or_path: str | Path) -> Path:
    """The task.yaml of a task given by name (tasks/<name>/task.yaml) or by path to its folder or file."""
    path = Path(name_or_path).expanduser()  # a study's `task: ~/my-task/...`
    if path.is_dir():
        path = path / "task.yaml"
    elif not path.suffix:
        path = paths.tasks_root() / str(name_or_path) / "task.yaml"
        if not path.exists():
            known = sorted(p.parent.name for p in paths.tasks_root().glob("*/task.yaml"))
            raise ConfigError(f"no task named {name_or_path!r}; known: {', '.join(known) or 'none'}")
    return path


def task_kind(path: Path) -> str | None:
    """The `kind:` a task.yaml declares (None when unreadable or absent: the full load reports why)."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def load_task(name_or_path: str | Path) -> TaskSpec:
    """An `ml` task by name (tasks/<name>/task.yaml) or by path to its folder or task.yaml.

    A task of another kind is refused with a clear error: the ML run path cannot run it."""
    path = task_yaml(name_or_path)
    kind = task_kind(path)
    if kind not in (None, "ml"):
        raise ConfigError(f"{path}: kind: task {path.parent.name!r} is a {kind!r} task, not an 'ml' task; "
                          "`sbx tasks` commands handle it")
    spec = load_yaml_model(path, TaskSpec)
    spec = spec.model_copy(update={"root": path.parent.resolve()})
    if not (spec.repo_dir / spec.contract.entrypoint).is_file():
        raise ConfigError(f"{path}: repo: {spec.repo_dir} has no {spec.contract.entrypoint}")
    if spec.environment is not None:
        env_file = spec.root / spec.environment
        if not env_file.is_file():
            raise ConfigError(f"{path}: environment: {env_file} does not exist")
        spec._python_env = load_environment(env_file)
    return spec


def load_any_task(name_or_path: str | Path) -> TaskSpec | TestsTaskSpec:
    """A task of either kind (what `sbx run` and studies take): an `ml` task, or a `tests` task."""
    path = task_yaml(name_or_path)
    return load_tests_task(path) if task_kind(path) == "tests" else load_task(path)


def task_data_dir(task: TaskSpec | TestsTaskSpec, home: Home) -> Path:
    """The folder a run of `task` records as its data: an ml task's prepared data set; for a tests task,
    its bundle (no data is copied into the sandbox; the bundle's content is part of the run's config hash)."""
    return task.data_dir(home) if isinstance(task, TaskSpec) else task.root
