"""The copier: runs inside a throwaway container, reads a run's workspace, writes one bounded tar.

Trusted code, standard library only. The host passes this file's source as `python3 -I -S -c SOURCE
CONFIG_JSON` (no site, no sitecustomize, no environment, nothing imported from the workspace) to a
container that mounts the workspace volume read-only, has no network, no capabilities and a read-only
root, and writes to size-capped tmpfs mounts. It never follows a link: the walk uses lstat and opens
files with O_NOFOLLOW, and keeps regular files and directories only, within the caps.

Git runs over a fresh git directory built here from validated refs, with the agent's object store as an
alternate and a config of our own, so nothing in the agent's .git/config, hooks, attributes, commit-graph,
bitmaps or replace refs is ever read or run.

Output (one tar at config["out"], PAX format):
    git/train/<sha256>.py   every distinct train.py found in any commit object (reachable or not)
    git/repo.bundle         `git bundle create --all`, unreachable commits kept as refs/sbx/unreachable/*
    workspace/...           the working tree without .git: regular files and directories only
    summary.json            what was kept, skipped and why; the git facts (last member)
With config["go_s"], it first prints WAITING and reads nothing until the host's go (SIGHUP, which the
container's init and `timeout` pass on; nothing in the sandbox can signal this container), so the host can
start it while the sandbox is still being stopped. Then it prints READY (or FAILED <reason>) on stdout and
sleeps so the host can read the tmpfs.
"""

import collections
import hashlib
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import time

HEX40 = re.compile(r"^[0-9a-f]{40}$")
_REF_OK = re.compile(r"^refs/[A-Za-z0-9._+@/-]{1,240}$")
SMALL = 4096  # HEAD, loose refs, shallow lines


class Summary:
    def __init__(self, max_listed):
        self.max_listed = max_listed
        self.skipped = []
        self.counts = collections.Counter()
        self.files = self.dirs = self.bytes = 0
        self.truncated = False
        self.walk_stopped = False
        self.git = {"present": False, "head": None, "head_ref": None, "commits": 0, "unreachable_commits": 0,
                    "train_versions": {}, "head_train_mode": None, "bundle": None, "bundle_bytes": 0,
                    "problems": [], "truncated": False}

    def skip(self, path, reason, detail=""):
        self.counts[reason] += 1
        if reason in ("too_big", "over_total", "over_count"):
            self.truncated = True
        if len(self.skipped) < self.max_listed:
            self.skipped.append({"path": path, "reason": reason, "detail": detail})

    def problem(self, text):
        if len(self.git["problems"]) < 50:
            self.git["problems"].append(text[:500])

    def as_dict(self):
        return {"version": 1, "files": self.files, "dirs": self.dirs, "bytes": self.bytes,
                "skipped": self.skipped, "skipped_counts": dict(self.counts), "truncated": self.truncated,
                "walk_stopped": self.walk_stopped, "git": self.git}


class Out:
    """The output tar, with a byte count of member data written."""

    def __init__(self, path):
        self.tar = tarfile.open(path, "w", format=tarfile.PAX_FORMAT, encoding="utf-8")

    def add_dir(self, name, mtime=0):
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, max(0, int(mtime))
        self.tar.addfile(info)

    def add_bytes(self, name, data, mode=0o644, mtime=0):
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), mode, max(0, int(mtime))
        self.tar.addfile(info, io.BytesIO(data))

    def add_file(self, name, path, size, mode=0o644):
        info = tarfile.TarInfo(name)
        info.size, info.mode = size, mode
        with open(path, "rb") as f:
            self.tar.addfile(info, f)

    def close(self):
        self.tar.close()


# --- reading the agent's files without following links -----------------------------------------------


def read_regular(path, limit):
    """Bytes of `path` if it is a regular file of at most `limit` bytes (never a link), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        return data if len(data) <= limit else None
    finally:
        os.close(fd)


def lstat_kind(path):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "other"


# --- the working tree ----------------------------------------------------------------------------------


def special_kind(mode):
    for test, kind in ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "char device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return kind
    return "unknown type"


def walk_workspace(cfg, out, summary, deadline):
    """Breadth first, sorted, train.py first: the files that matter come before any cap bites."""
    root = cfg["workspace"]
    max_entries, max_file, max_total = cfg["max_entries"], cfg["max_file_bytes"], cfg["max_total_bytes"]
    examined_cap = max_entries * 4
    examined = kept = 0
    queue = collections.deque([""])
    while queue:
        rel_dir = queue.popleft()
        dir_path = os.path.join(root, rel_dir) if rel_dir else root
        try:
            names = list_dir(dir_path, examined_cap - examined + 1)
        except OSError as exc:
            summary.skip(rel_dir or ".", "unreadable", exc.strerror or str(exc))
            continue
        if not rel_dir:
            names = [n for n in names if n not in (".git", cfg["train_file"])]
            if lstat_kind(os.path.join(root, cfg["train_file"])) is not None:
                names.insert(0, cfg["train_file"])
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            examined += 1
            if kept >= max_entries or examined > examined_cap or time.monotonic() > deadline:
                summary.skip(printable(rel), "over_count",
                             "time limit reached" if time.monotonic() > deadline else
                             f"more than {max_entries} entries; the walk stopped here")
                summary.walk_stopped = True
                return
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                summary.skip(printable(rel), "bad_name", "not valid UTF-8")
                continue
            path = os.path.join(dir_path, name)
            try:
                st = os.lstat(path)
            except OSError as exc:
                summary.skip(rel, "unreadable", exc.strerror or str(exc))
                continue
            if stat.S_ISDIR(st.st_mode):
                out.add_dir("workspace/" + rel, st.st_mtime)
                summary.dirs += 1
                kept += 1
                queue.append(rel)
            elif stat.S_ISREG(st.st_mode):
                if st.st_size > max_file:
                    summary.skip(rel, "too_big", f"{st.st_size} bytes > {max_file}")
                    continue
                if summary.bytes + st.st_size > max_total:
                    summary.skip(rel, "over_total", f"{st.st_size} bytes would pass the {max_total}-byte total")
                    continue
                data, why = read_file(path, st)
                if data is None:
                    summary.skip(rel, "unreadable", why)
                    continue
                out.add_bytes("workspace/" + rel, data, 0o755 if st.st_mode & 0o111 else 0o644, st.st_mtime)
                summary.files += 1
                summary.bytes += len(data)
                kept += 1
            else:
                kind = special_kind(st.st_mode)
                detail = kind
                if kind == "symlink":
                    try:
                        detail = "-> " + printable(os.readlink(path))[:300]
                    except OSError:
                        pass
                summary.skip(rel, "symlink" if kind == "symlink" else "special", detail)


def list_dir(path, at_most):
    """Sorted names of a directory (never through a link), reading no more than `at_most` of them, so a
    folder of millions of entries costs no more than the entry cap."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        names = []
        with os.scandir(fd) as it:
            for entry in it:
                if len(names) >= at_most:
                    break
                names.append(entry.name)
    finally:
        os.close(fd)
    return sorted(names)


def read_file(path, st):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return None, "changed while being read"
        chunks, left = [], st.st_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) != st.st_size:
            return None, "changed size while being read"
        return data, ""
    except OSError as exc:
        return None, exc.strerror or str(exc)
    finally:
        os.close(fd)


def printable(name):
    """A name as valid UTF-8 for the summary: undecodable bytes become \\xNN."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


# --- git, over a git directory of our own --------------------------------------------------------------


def ref_name_ok(name):
    if not _REF_OK.match(name) or ".." in name or "//" in name or "@{" in name or name.endswith((".lock", "/", ".")):
        return False
    return not any(part.startswith(".") for part in name.split("/"))


def collect_refs(gitdir, summary, max_refs=10000):
    """(refname -> sha) from packed-refs then loose refs (loose wins); only plain 40-hex values."""
    refs = {}
    packed = read_regular(os.path.join(gitdir, "packed-refs"), 64 << 20)
    if packed:
        for line in packed.decode("utf-8", "replace").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and HEX40.match(parts[0]):
                refs[parts[1].strip()] = parts[0]
    stack = ["refs"]
    seen = 0
    while stack:
        rel = stack.pop()
        try:
            names = sorted(os.listdir(os.path.join(gitdir, rel)))
        except OSError:
            continue
        for name in names:
            seen += 1
            if seen > max_refs:
                summary.problem(f"more than {max_refs} loose refs; the rest were ignored")
                summary.git["truncated"] = True
                break
            sub = f"{rel}/{name}"
            kind = lstat_kind(os.path.join(gitdir, sub))
            if kind == "dir":
                stack.append(sub)
            elif kind == "file":
                data = read_regular(os.path.join(gitdir, sub), SMALL)
                value = data.decode("ascii", "replace").strip() if data else ""
                if HEX40.match(value):
                    refs[sub] = value
    kept = {}
    for i, (name, sha) in enumerate(sorted(refs.items())):
        if name.startswith("refs/replace/"):
            summary.problem(f"ignored replace ref {printable(name)}")
            continue
        if not ref_name_ok(name):
            summary.problem(f"renamed an unusual ref name {printable(name)[:100]!r}")
            name = f"refs/sbx/renamed/{i}"
        kept[name] = sha
    return kept


OUR_CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = true
\tfsmonitor = false
\thooksPath = /dev/null
\tcommitGraph = false
\tmultiPackIndex = false
\tuseReplaceRefs = false
\tlogAllRefUpdates = false
[pack]
\tuseBitmaps = false
\twriteBitmapIndex = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
"""


class Git:
    def __init__(self, gitdir, tmp, deadline):
        self.deadline = deadline
        home = os.path.join(tmp, "home")
        os.makedirs(home, exist_ok=True)
        self.env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "GIT_DIR": gitdir, "HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1", "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LANG": "C.UTF-8", "TMPDIR": tmp,
        }
        self.cwd = gitdir

    def run(self, *args, stdin=b"", check=True):
        timeout = max(1.0, self.deadline - time.monotonic())
        proc = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", *args],
            input=stdin, capture_output=True, env=self.env, cwd=self.cwd, timeout=timeout)
        if check and proc.returncode != 0:
            raise GitFailed(f"git {args[0]}: {proc.stderr.decode('utf-8', 'replace').strip()[:300]}")
        return proc

    def lines(self, *args, limit, keep=None, max_kept=None):
        """Stdout lines of a git command, read as they come: at most `limit` read, and of those the ones
        `keep` accepts, at most `max_kept`. Returns (kept lines, finished without error, cut short)."""
        proc = subprocess.Popen(
            ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env, cwd=self.cwd)
        out, seen, cut = [], 0, False
        try:
            for raw in proc.stdout:
                seen += 1
                if seen > limit or time.monotonic() > self.deadline or (max_kept is not None and len(out) > max_kept):
                    cut = True
                    break
                line = raw.decode("ascii", "replace").rstrip("\n")
                if keep is None or keep(line):
                    out.append(line)
        finally:
            if cut:
                proc.kill()
            proc.stdout.close()
            code = proc.wait()
        return out, cut or code == 0, cut


class GitFailed(Exception):
    pass


def build_gitdir(agent_git, ours, refs, head_value):
    os.makedirs(os.path.join(ours, "objects", "info"))
    os.makedirs(os.path.join(ours, "refs"))
    with open(os.path.join(ours, "config"), "w") as f:
        f.write(OUR_CONFIG)
    with open(os.path.join(ours, "objects", "info", "alternates"), "w") as f:
        f.write(os.path.join(agent_git, "objects") + "\n")
    write_refs(ours, refs)
    with open(os.path.join(ours, "HEAD"), "w") as f:
        f.write(head_value + "\n")
    shallow = read_regular(os.path.join(agent_git, "shallow"), 16 << 20)
    if shallow:
        lines = [ln for ln in shallow.decode("ascii", "replace").split() if HEX40.match(ln)]
        with open(os.path.join(ours, "shallow"), "w") as f:
            f.write("".join(ln + "\n" for ln in lines))


def write_refs(ours, refs):
    with open(os.path.join(ours, "packed-refs"), "w") as f:
        f.write("# pack-refs with: peeled fully-peeled sorted \n")
        for name in sorted(refs):
            f.write(f"{refs[name]} {name}\n")


def head_value_of(agent_git, refs, summary):
    data = read_regular(os.path.join(agent_git, "HEAD"), SMALL)
    text = data.decode("ascii", "replace").strip() if data else ""
    if HEX40.match(text):
        return text
    if text.startswith("ref:"):
        target = text[4:].strip()
        if ref_name_ok(target):
            summary.git["head_ref"] = target
            return "ref: " + target
    summary.problem("HEAD is missing or unusual; using an unborn branch")
    return "ref: refs/heads/sbx-no-head"


def recover_git(cfg, out, summary, deadline):
    agent_git = os.path.join(cfg["workspace"], ".git")
    kind = lstat_kind(agent_git)
    if kind != "dir":
        summary.problem("no .git directory" if kind is None else ".git is not a plain directory; ignored")
        return
    if lstat_kind(os.path.join(agent_git, "objects")) != "dir":
        summary.problem(".git/objects is not a plain directory; ignored")
        return
    summary.git["present"] = True
    refs = collect_refs(agent_git, summary)
    ours = os.path.join(cfg["tmp"], "git")
    build_gitdir(agent_git, ours, refs, head_value_of(agent_git, refs, summary))
    git = Git(ours, cfg["tmp"], deadline)
    max_commits, budget = cfg["max_commits"], cfg["max_git_bytes"]

    # every commit object in the store (loose, packed, reachable or not); streamed, the listing capped
    listing, ok, cut = git.lines("cat-file", "--batch-all-objects", "--unordered",
                                 "--batch-check=%(objecttype) %(objectname)", limit=cfg["max_objects"],
                                 keep=lambda ln: ln.startswith("commit ") and bool(HEX40.match(ln[7:])),
                                 max_kept=max_commits)
    if not ok:
        summary.problem("listing the objects failed")
    commits = sorted({ln[7:] for ln in listing})[:max_commits]
    if cut:
        summary.problem(f"more than {cfg['max_objects']} objects or {max_commits} commits; the rest were ignored")
        summary.git["truncated"] = True

    revs, ok, cut = git.lines("rev-list", "--all", limit=max_commits)
    if not ok:
        summary.problem("rev-list failed (a missing or corrupt object?)")
    if cut:
        summary.problem(f"more than {max_commits} reachable commits; the rest were ignored")
        summary.git["truncated"] = True
    reachable = {ln for ln in revs if HEX40.match(ln)}
    unreachable = [c for c in commits if c not in reachable]
    summary.git["commits"] = len(reachable)
    summary.git["unreachable_commits"] = len(unreachable)
    head = git.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    head_sha = head.stdout.decode("ascii", "replace").strip()
    summary.git["head"] = head_sha if head.returncode == 0 and HEX40.match(head_sha) else None

    # train.py of every commit: one batch-check, then each distinct blob once
    train = cfg["train_file"]
    every = sorted(set(commits) | reachable)
    spent = 0
    if every:
        query = "".join(f"{c}:{train}\n" for c in every).encode()
        proc = git.run("cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", stdin=query,
                       check=False)
        blobs = {}
        for commit, line in zip(every, proc.stdout.decode("ascii", "replace").splitlines()):
            parts = line.split()
            if len(parts) == 3 and parts[1] == "blob" and HEX40.match(parts[0]):
                blobs[commit] = (parts[0], int(parts[2]))
        digests = {}
        for commit, (blob, size) in sorted(blobs.items()):
            if blob not in digests:
                digests[blob] = None
                if size > cfg["max_file_bytes"] or spent + size > budget:
                    summary.problem(f"{train} at {commit} is {size} bytes; over the cap, not kept")
                    summary.git["truncated"] = True
                    continue
                content = git.run("cat-file", "blob", blob, check=False)
                if content.returncode != 0 or len(content.stdout) != size:
                    summary.problem(f"could not read {train} at {commit}")
                    continue
                digest = hashlib.sha256(content.stdout).hexdigest()
                digests[blob] = digest
                spent += size
                out.add_bytes(f"git/train/{digest}.py", content.stdout)
            if digests[blob]:
                summary.git["train_versions"][commit] = digests[blob]
    if summary.git["head"]:
        ls = git.run("ls-tree", "-z", summary.git["head"], "--", train, check=False)
        entry = ls.stdout.split(b"\0")[0].decode("utf-8", "replace")
        summary.git["head_train_mode"] = entry.split(" ")[0] if entry else None

    # the bundle: everything reachable, plus refs that keep unreachable commits
    if not every:
        return
    if unreachable:
        write_refs(ours, {**refs, **{f"refs/sbx/unreachable/{c}": c for c in unreachable}})
    bundle = os.path.join(cfg["tmp"], "repo.bundle")
    proc = git.run("bundle", "create", "-q", bundle, "--all", check=False)
    if proc.returncode != 0 and unreachable:
        summary.problem("bundle with unreachable commits failed; retrying with reachable refs only")
        write_refs(ours, refs)
        proc = git.run("bundle", "create", "-q", bundle, "--all", check=False)
    if proc.returncode != 0:
        summary.problem("git bundle failed: " + proc.stderr.decode("utf-8", "replace").strip()[:300])
        return
    size = os.path.getsize(bundle)
    if spent + size > budget:
        summary.problem(f"bundle is {size} bytes; over the {budget}-byte git cap, not kept")
        summary.git["truncated"] = True
    else:
        out.add_file("git/repo.bundle", bundle, size)
        summary.git["bundle"] = "git/repo.bundle"
        summary.git["bundle_bytes"] = size
    os.unlink(bundle)


def wait_for_go(seconds):
    """Block SIGHUP (it stays pending), say WAITING, then wait for it: True if it came in time."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    print("WAITING", flush=True)
    return signal.sigtimedwait({signal.SIGHUP}, seconds) is not None


def main(argv):
    cfg = json.loads(argv[1])
    if cfg.get("go_s") and not wait_for_go(cfg["go_s"]):
        print("FAILED no go from the host in time", flush=True)
        return 1
    deadline = time.monotonic() + cfg["work_s"]
    summary = Summary(cfg["max_listed"])
    out = Out(cfg["out"])
    try:
        try:
            recover_git(cfg, out, summary, deadline)
        except (GitFailed, subprocess.TimeoutExpired, OSError) as exc:
            summary.problem(f"git recovery stopped: {exc}")
            summary.git["truncated"] = True
        walk_workspace(cfg, out, summary, deadline)
        out.add_bytes("summary.json", json.dumps(summary.as_dict(), sort_keys=True).encode())
        out.close()
    except Exception as exc:  # report any failure of the copier itself to the host, then wait to be removed
        print(f"FAILED {type(exc).__name__}: {exc}", flush=True)
    else:
        print("READY", flush=True)
    if cfg.get("hold_s"):
        time.sleep(cfg["hold_s"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
