"""`sbx tasks`: coding tasks graded by hidden tests (docs/tasks.md): list (with what is cached), build
(materialise the locked trees from their pinned sdists), make a new task from PyPI releases, verify, grade
a delivered folder, build environment images, import Harbor tasks; and `new NAME --ml`, an ML task from a
table of one's own."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from orchestrator import paths
from orchestrator.failures import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tasks", help="coding tasks graded by hidden tests: build, verify, grade, import")
    tsub = p.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")

    ls = tsub.add_parser("list", help="every task: its kind and metric; a tests task's test counts and whether "
                         "its trees are cached")
    ls.add_argument("--json", action="store_true")
    _common(ls)
    ls.set_defaults(handler=_list)

    m = tsub.add_parser("build", help="materialise tasks' repo and hidden tests from their pinned sdists into "
                        "the cache, checked by digest")
    m.add_argument("names", nargs="*", metavar="TASK", help="task names or folders (default: every tests task)")
    m.add_argument("--json", action="store_true")
    _common(m)
    m.set_defaults(handler=_materialise)

    lk = tsub.add_parser("lock", help="record the sha256 of every environment pin's file in the task (wheel for "
                         "its Python, or sdist), so its images are fetched and installed with hash checking")
    lk.add_argument("names", nargs="*", metavar="TASK", help="task names or folders (default: every task with a "
                    "Python environment)")
    lk.add_argument("--check", action="store_true", help="write nothing; exit 1 when a task's hashes are missing "
                    "or differ from what the index serves")
    lk.add_argument("--out", type=Path, default=None, help="tasks folder to lock in place (default: $SBX_TASKS, else "
                    "the shipped tasks; a task shipped inside an installed sbx is locked as a copy in $SBX_TASKS, "
                    "else ./tasks)")
    lk.set_defaults(handler=_lock)

    b = tsub.add_parser("make", help="make a task from a bug fixed between two PyPI releases of a library")
    b.add_argument("names", nargs="*", metavar="NAME", help="make these tasks of --recipes (default: all)")
    b.add_argument("--recipes", type=Path, default=None, help="a recipes file (e.g. tasks/recipes.yaml)")
    b.add_argument("--library", help="PyPI project (one task from flags instead of --recipes)")
    b.add_argument("--before", help="the buggy release")
    b.add_argument("--after", help="the release with the fix")
    b.add_argument("--name", help="the task's name")
    b.add_argument("--tests", nargs="+", default=[], metavar="FILE", help="test files taken whole from --after")
    b.add_argument("--fix", nargs="+", default=[], metavar="FILE[:HUNKS]", help="fix files (1-based hunks)")
    b.add_argument("--patch", type=Path, help="a hand-made reference patch instead of --fix")
    b.add_argument("--instruction", type=Path, help="a file with the issue text")
    b.add_argument("--declare", nargs="+", default=[], metavar="TEST", help="expected fail_to_pass names")
    b.add_argument("--python", default="3.11", help="3.11 (Debian bookworm) or 3.13 (Debian trixie)")
    b.add_argument("--pytest", help="exact pytest version (default: newest before the pin date)")
    b.add_argument("--test-dep", nargs="+", default=[], metavar="REQ", help="'name' or 'name==version'")
    b.add_argument("--pin-date", default="after", help="after | before | YYYY-MM-DD (default: after)")
    b.add_argument("--pytest-arg", nargs="+", default=[], metavar="ARG", help="extra pytest arguments")
    b.add_argument("--paths", nargs="+", default=["tests"], help="test paths of a whole-suite run")
    b.add_argument("--drop", nargs="+", default=[], metavar="GLOB", help="sdist paths left out of the repo")
    _common(b)
    b.add_argument("--force", action="store_true", help="replace an existing bundle")
    b.add_argument("--no-verify", action="store_true", help="skip `verify` after building")
    b.set_defaults(handler=_build)

    v = tsub.add_parser("verify", help="oracle passes, unmodified repo fails, repeated gradings agree (a table)")
    v.add_argument("names", nargs="*", metavar="TASK", help="task names or folders (default: every tests task)")
    v.add_argument("--repeats", type=int, default=3, help="gradings of each delivery (default 3)")
    v.add_argument("--json", action="store_true", help="one JSON object per task")
    _common(v)
    v.set_defaults(handler=_verify)

    g = tsub.add_parser("grade", help="grade a delivered folder out of reach (hidden tests, fresh containers)")
    g.add_argument("task", help="task name or folder")
    g.add_argument("delivered", type=Path, help="the delivered repository (a folder on the host)")
    g.add_argument("--repeats", type=int, default=None, help="default: the task's grade_repeats")
    g.add_argument("--json", action="store_true")
    _common(g)
    g.set_defaults(handler=_grade)

    e = tsub.add_parser("env", help="environment images")
    esub = e.add_subparsers(dest="env_command", required=True, metavar="ACTION")
    eb = esub.add_parser("build", help="build the images of tasks' environments (environment, task, task sandbox), "
                         "or of an ML environment file")
    eb.add_argument("names", nargs="*", metavar="TASK", help="tasks (default: every tests task)")
    eb.add_argument("--ml", type=Path, metavar="ENV.yaml", help="build sandbox+scorer images for this environment")
    eb.add_argument("--force", action="store_true")
    _common(eb)
    eb.set_defaults(handler=_env_build)

    n = tsub.add_parser("new", help="a new ML task from your CSV or Parquet file: task.yaml, data.yaml, a starting "
                        "repo", description="Scaffold an ML task (docs/tasks.md, 'Bring your own ML task'). Then "
                        "`sbx data prepare --task NAME` splits the data and `sbx run --task NAME` runs it.")
    n.add_argument("name", metavar="NAME", help="the task's name (lower case, digits, -)")
    n.add_argument("--ml", action="store_true", required=True, help="an ML task (the only kind `new` makes)")
    n.add_argument("--data", type=Path, required=True, help="the table: a .csv or .parquet file")
    n.add_argument("--target", required=True, help="the column to predict")
    n.add_argument("--task-type", required=True, choices=["binary", "multiclass", "regression"])
    n.add_argument("--metric", default="", help="a metric of the type (default: auc, log_loss, rmse)")
    n.add_argument("--positive-label", help="binary: the target's value of the positive class")
    n.add_argument("--time-column", help="split by this column's time (with --cuts); default: a stratified split")
    n.add_argument("--cuts", nargs=3, metavar="DATE", help="where eval, holdout and later begin (YYYY-MM-DD)")
    n.add_argument("--until", metavar="DATE", help="where the later period ends (default: the data's end)")
    n.add_argument("--fractions", nargs=3, type=float, default=[0.6, 0.2, 0.2], metavar="F",
                   help="stratified split: train, eval and holdout shares (default 0.6 0.2 0.2)")
    n.add_argument("--features", nargs="+", metavar="COLUMN", help="feature columns (default: all but the "
                   "target and the time column)")
    n.add_argument("--rows", nargs="+", default=[], metavar="SLICE=N", help="rows drawn per slice, e.g. train=5000")
    n.add_argument("--seed", type=int, default=0, help="the split's and the draws' seed (default 0)")
    n.add_argument("--out", type=Path, default=None, help=_OUT_HELP)
    n.add_argument("--force", action="store_true", help="replace an existing bundle")
    n.add_argument("--json", action="store_true")
    n.set_defaults(handler=_new)

    h = tsub.add_parser("import-harbor", help="turn a Harbor / Terminal-Bench task folder into an sbx task")
    h.add_argument("folder", type=Path, help="task folder: instruction.md, task.toml, environment/, tests/, solution/")
    h.add_argument("--name", help="task name (default: the folder's name)")
    h.add_argument("--base", help="a local image to build FROM when the Dockerfile's base cannot be pulled")
    h.add_argument("--out", type=Path, default=None, help=_OUT_HELP)
    h.add_argument("--force", action="store_true")
    h.set_defaults(handler=_import_harbor)


def _new(args: argparse.Namespace) -> int:
    from datetime import date

    from orchestrator.cli.common import print_json
    from orchestrator.tasks.ml_scaffold import MlTaskRequest, new_ml_task

    def day(text: str, flag: str) -> date:
        try:
            return date.fromisoformat(text)
        except ValueError:
            raise ConfigError(f"{flag}: {text!r} is not a date (YYYY-MM-DD)") from None

    rows = {}
    for item in args.rows:
        key, _, value = item.partition("=")
        if key not in ("train", "eval", "holdout", "later") or not value.isdigit():
            raise ConfigError(f"--rows: {item!r} is not SLICE=N (train, eval, holdout, later)")
        rows[key] = int(value)
    if bool(args.time_column) != bool(args.cuts):
        raise ConfigError("--time-column and --cuts go together (a time split); neither: a stratified split")
    cuts = tuple(day(c, "--cuts") for c in args.cuts) if args.cuts else None
    req = MlTaskRequest(name=args.name, data=args.data, target=args.target, task_type=args.task_type,
                        metric=args.metric, positive_label=args.positive_label, time_column=args.time_column,
                        cuts=cuts,  # type: ignore[arg-type]  # three, by nargs
                        until=day(args.until, "--until") if args.until else None,
                        fractions=tuple(args.fractions),
                        seed=args.seed, rows=rows, features=tuple(args.features) if args.features else None)
    dest = new_ml_task(req, _out(args), force=args.force)
    if args.json:
        print_json({"task": args.name, "folder": str(dest)})
    else:
        print(f"wrote {dest}")
        print(f"next: sbx data prepare --task {dest}   then: sbx run --task {dest} --agent noop")
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None, help="tasks folder (default: $SBX_TASKS, else the shipped "
                   "tasks; `make` writes into $SBX_TASKS, else the checkout's tasks/, else ./tasks)")
    p.add_argument("--cache", type=Path, default=None,
                   help="wheelhouses, sdists and task trees (default: $SBX_CACHE, else the checkout's .cache, "
                   "else ~/.cache/sbx)")


def _cache(args: argparse.Namespace) -> Path:
    from orchestrator.tasks.environment import default_cache

    return args.cache or default_cache()


def _root(args: argparse.Namespace) -> Path:
    """The tasks folder a command reads: --out, else $SBX_TASKS or the shipped tasks."""
    return getattr(args, "out", None) or paths.tasks_root()


#: --out of the commands that write a new task (an installed sbx never writes into its own package)
_OUT_HELP = "tasks folder to write into (default: $SBX_TASKS, else the checkout's tasks/, else ./tasks)"


def _out(args: argparse.Namespace) -> Path:
    """The tasks folder a command writes a new task into: --out, else `paths.new_tasks_root()`."""
    return getattr(args, "out", None) or paths.new_tasks_root()


def tests_tasks(root: Path, names: list[str] | None = None, cache: Path | None = None) -> list[Any]:
    """The `tests` tasks under root (all, or the named ones / folders), sorted by name. With `cache`, each is
    materialised there (its trees made when missing, checked by digest): ready to build images or grade."""
    from orchestrator.specs.task import load_tests_task, task_kind

    if names:
        tasks = [load_tests_task(n if Path(n).exists() or "/" in n else root / n) for n in names]
    else:
        tasks = [load_tests_task(p.parent) for p in sorted(root.glob("*/task.yaml")) if task_kind(p) == "tests"]
    if cache is None:
        return tasks
    from orchestrator.tasks.materialise import materialise

    return [materialise(t, cache) for t in tasks]


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(nothing)"
    keys = list(rows[0])
    widths = {k: max(len(str(k)), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = ["  ".join(str(k).ljust(widths[k]) for k in keys), "  ".join("-" * widths[k] for k in keys)]
    lines += ["  ".join(str(r[k]).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def _trees(task: Any, cache: Path) -> str:
    """Where a task's trees are: in its bundle, or their state in the cache (cached / missing / tampered)."""
    from orchestrator.tasks.materialise import tree_state

    if task.lock is None:
        return "in bundle"
    states = {tree_state(cache, task.lock.repo), tree_state(cache, task.lock.hidden)}
    return next(s for s in ("tampered", "missing", "cached") if s in states)


def _list(args: argparse.Namespace) -> int:
    from orchestrator.specs.task import PytestGrader, load_task, task_kind

    root = _root(args)
    rows: list[dict[str, Any]] = []
    for path in sorted(root.glob("*/task.yaml")):  # the ml tasks: scored by a metric on hidden rows
        if task_kind(path) != "ml":
            continue
        ml = load_task(path.parent)
        rows.append({"task": ml.name, "kind": "ml", "library": "-", "versions": "-", "f2p": "-", "p2p": "-",
                     "environment": (f"py{ml.python_env.python} {ml.python_env.digest()}" if ml.python_env
                                     else "standard images"),
                     "trees": "in bundle", "repo": "-", "metric": ml.metric_info.name})
    for t in tests_tasks(root):
        g = t.grader
        env = t.environment
        rows.append({"task": t.name, "kind": "tests", "library": t.source.library if t.source else "-",
                     "versions": f"{t.source.before}->{t.source.after}" if t.source else "-",
                     "f2p": len(g.fail_to_pass) if isinstance(g, PytestGrader) else "-",
                     "p2p": len(g.pass_to_pass) if isinstance(g, PytestGrader) else "-",
                     "environment": f"py{env.python} {env.digest()}" if env.type == "python" else "dockerfile",
                     "trees": _trees(t, _cache(args)),
                     "repo": t.lock.repo.sha256[:12] if t.lock else "-", "metric": "tests pass"})
    rows.sort(key=lambda row: row["task"])
    print(json.dumps(rows, indent=1) if args.json else _table(rows))
    return 0


def _materialise(args: argparse.Namespace) -> int:
    import time

    from orchestrator.tasks.materialise import materialise

    cache, rows = _cache(args), []
    start = time.monotonic()
    for task in tests_tasks(_root(args), args.names):
        before = _trees(task, cache)
        t0 = time.monotonic()
        done = materialise(task, cache)
        rows.append({"task": task.name, "was": before, "repo": str(done.repo_dir), "hidden": str(done.hidden_dir),
                     "repo_sha256": task.lock.repo.sha256 if task.lock else "-",
                     "hidden_sha256": task.lock.hidden.sha256 if task.lock else "-",
                     "seconds": round(time.monotonic() - t0, 2)})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(_table([{k: (v[:12] if k.endswith("sha256") else v) for k, v in r.items() if k not in ("repo", "hidden")}
                      for r in rows]))
        print(f"{len(rows)} tasks ready in {cache} ({time.monotonic() - start:.1f}s)")
    return 0


def _build(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.tasks.builder import BuildRequest, build_task, load_recipes
    from orchestrator.tasks.verify import verify_task

    if args.recipes:
        requests = load_recipes(args.recipes)
        if args.names:
            unknown = sorted(set(args.names) - {r.name for r in requests})
            if unknown:
                raise ConfigError(f"{args.recipes}: no recipe named {unknown}")
            requests = [r for r in requests if r.name in args.names]
    else:
        missing = [f for f in ("library", "before", "after", "name", "instruction") if not getattr(args, f)]
        if missing or not args.tests:
            raise ConfigError(f"sbx tasks make: give --recipes, or all of --library --before --after --name --instruction --tests "
                              f"(missing: {', '.join(missing + ([] if args.tests else ['tests']))})")
        try:
            requests = [BuildRequest(
                name=args.name, library=args.library, before=args.before, after=args.after, tests=tuple(args.tests),
                instruction=args.instruction.read_text(), fix=tuple(args.fix),
                patch=args.patch.read_text() if args.patch else None, declared=tuple(args.declare),
                python=args.python, pytest=args.pytest, test_deps=tuple(args.test_dep), pin_date=args.pin_date,
                pytest_args=tuple(args.pytest_arg), paths=tuple(args.paths), drop=tuple(args.drop))]
        except ValueError as exc:
            raise ConfigError(f"sbx tasks make: {exc}") from None
    client = engine.client()
    rows: list[dict[str, Any]] = []
    for req in requests:
        print(f"== {req.name}: {req.library} {req.before} -> {req.after}", flush=True)
        try:
            result = build_task(client, req, _out(args), _cache(args), force=args.force,
                                say=lambda line: print(f"   {line}", flush=True))
        except ConfigError as exc:   # the task does not hold up: say why, go on with the others
            print(f"   REJECTED: {exc}", flush=True)
            rows.append({"task": req.name, "f2p": "-", "p2p": "-", "patch": "-", "tests": "-", "build_s": "-",
                         "verify": f"rejected: {str(exc)[:80]}"})
            continue
        print(f"   fail_to_pass {len(result.fail_to_pass)}, pass_to_pass {len(result.pass_to_pass)}, left out "
              + ", ".join(f"{k} {len(v)}" for k, v in result.excluded.items() if v) + f"; {result.seconds}")
        row: dict[str, Any] = {"task": req.name, "f2p": len(result.fail_to_pass), "p2p": len(result.pass_to_pass),
               "patch": "+{}/-{}".format(*result.patch_stat), "tests": "+{}/-{}".format(*result.hidden_stat),
               "build_s": result.seconds.get("total")}
        if not args.no_verify:
            from orchestrator.specs.task import load_tests_task
            from orchestrator.tasks.materialise import materialise

            check = verify_task(client, materialise(load_tests_task(result.bundle), _cache(args)), _cache(args))
            row.update(verify=check.row()["verdict"], verify_s=round(check.seconds, 1))
        else:
            row.update(verify="OK")
        rows.append(row)
    print(_table(rows))
    return 0 if all(r.get("verify", "OK") == "OK" for r in rows) else 1


def _verify(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.tasks.verify import verify_task

    client = engine.client()
    rows = []
    for task in tests_tasks(_root(args), args.names, _cache(args)):
        check = verify_task(client, task, _cache(args), repeats=args.repeats)
        row = check.row()
        rows.append(row)
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{row['task']}: {row['verdict']} ({row['seconds']}s)", flush=True)
    if not args.json:
        print(_table(rows))
        bad = [r["task"] for r in rows if r["verdict"] != "OK"]
        print(f"{len(rows) - len(bad)} of {len(rows)} tasks verified" + (f"; failing: {', '.join(bad)}" if bad else ""))
    return 0 if all(r["verdict"] == "OK" for r in rows) else 1


def _grade(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.tasks.environment import task_image
    from orchestrator.tasks.grade_tree import grade

    task = tests_tasks(_root(args), [args.task], _cache(args))[0]
    if not args.delivered.is_dir():
        raise ConfigError(f"{args.delivered}: not a folder")
    client = engine.client()
    image = task_image(client, task, _cache(args))
    g = grade(client, task, args.delivered, image.tag, repeats=args.repeats, label=f"grade-{task.name}")
    out = {"task": task.name, "passed": g.passed, "reason": g.result.reason, "agree": g.result.agree,
           "flaky": g.result.flaky, "tree": g.tree, "seconds": g.seconds,
           "verdicts": [{"passed": v.passed, "reason": v.reason, "detail": v.detail} for v in g.result.verdicts]}
    if args.json:
        out["tests"] = g.result.verdicts[0].tests
        print(json.dumps(out, indent=1))
    else:
        print(f"{task.name}: {'PASS' if g.passed else 'FAIL'} ({g.result.reason}) in {g.seconds:.1f}s")
        for i, v in enumerate(g.result.verdicts, 1):
            print(f"  grading {i}: {v.reason}: {v.detail}")
        print(f"  tree: {g.tree}")
    return 0 if g.passed else 1


def _env_build(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.run.images import task_images
    from orchestrator.specs.task import PythonEnvironment, load_environment
    from orchestrator.tasks.environment import env_image, image_versions, ml_env_images

    client = engine.client()
    if args.ml:
        env = load_environment(args.ml)
        for target, img in ml_env_images(client, env, _cache(args), force=args.force).items():
            print(f"{target:8s} {img.tag}  {img.size_bytes / 1e6:.0f} MB  {'built' if img.built else 'up to date'} "
                  f"in {img.seconds:.1f}s")
        print(image_versions(client, img.tag))
        return 0
    seen: set[str] = set()
    for task in tests_tasks(_root(args), args.names, _cache(args)):
        if isinstance(task.environment, PythonEnvironment) and task.environment.digest() not in seen:
            seen.add(task.environment.digest())
            img = env_image(client, task.environment, _cache(args), force=args.force)
            print(f"environment {task.environment.digest()} (py{task.environment.python}, "
                  f"{len(task.environment.packages)} pins): {img.tag} {img.size_bytes / 1e6:.0f} MB "
                  f"{'built' if img.built else 'up to date'} in {img.seconds:.1f}s")
        # the grader's image and, for a python environment, the agent's sandbox on it (run/images.py)
        for target, img in task_images(client, task, _cache(args), force=args.force).items():
            print(f"  {target} {task.name}: {img.tag} {'built' if img.built else 'up to date'} in {img.seconds:.1f}s")
    return 0


def _lock(args: argparse.Namespace) -> int:
    from orchestrator.specs.task import load_any_task
    from orchestrator.tasks.envlock import lock_task

    root = _root(args)
    folders = ([Path(n) if Path(n).exists() or "/" in n else root / n for n in args.names] if args.names
               else [p.parent for p in sorted(root.glob("*/task.yaml"))])
    stale = 0
    for folder in folders:
        if not args.check:
            folder = writable_task(folder)
        locked = lock_task(load_any_task(folder), write=not args.check)
        if locked is None:
            if args.names:
                print(f"{folder.name}: no Python environment to lock")
            continue
        stale += bool(locked.changed)
        state = (f"{len(locked.changed)} {'would change' if args.check else 'changed'}" if locked.changed
                 else "hashes up to date")
        print(f"{locked.task}: {len(locked.env.packages)} pins, {state} ({locked.file})")
        for name, (before, after) in sorted(locked.changed.items()):
            print(f"  {name}=={locked.env.packages[name]}: {', '.join(before) or 'no hash'} -> {', '.join(after)}")
    return 1 if args.check and stale else 0


def writable_task(folder: Path) -> Path:
    """The task folder `sbx tasks lock` writes: the task's own, unless it is an installed sbx's package data;
    then a copy of it in `paths.new_tasks_root()` ($SBX_TASKS, else ./tasks), made the first time, which
    `$SBX_TASKS` (or `--out`) then finds."""
    if not paths.is_package_data(folder):
        return folder
    dest = paths.new_tasks_root() / folder.name
    if not dest.exists():
        shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("__pycache__"))
        print(f"{folder.name}: shipped inside the installed sbx; locking a copy in {dest}")
    return dest


def _import_harbor(args: argparse.Namespace) -> int:
    from orchestrator.tasks.harbor import import_harbor

    result = import_harbor(args.folder, _out(args), name=args.name, base=args.base, force=args.force)
    for line in result.notes:
        print(f"note: {line}")
    print(f"wrote {result.bundle}")
    return 0
