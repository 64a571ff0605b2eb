"""Install the CPU-meter gate into the sandbox image (run as root at build time, once per interpreter).

- `00-sbx-gate.pth` in every site-packages folder of the interpreter: site.py executes `.pth` import
  lines in name order, so ours runs before any other, and `.pth` files cannot be shadowed by PYTHONPATH
  (a sitecustomize module can: PYTHONPATH entries come before the stdlib on sys.path).
- The sitecustomize the interpreter really loads (Debian: /etc/python3.X/sitecustomize.py through a
  symlink in the stdlib) executes the gate too; the gate runs once per process either way.
Everything written is root-owned and read-only.

What still dodges the gate (measured; see docs/meter.md): `python -S`, a PYTHONHOME pointing at a copied
stdlib, and code that runs before the gate because the agent controls an earlier site folder (a venv the
agent creates itself, or ~/.local for the system interpreter; site.py is frozen into CPython 3.11, so it
cannot be patched to drop user site). Those processes stay outside `py` and count toward the container's
hard stop, which no process can dodge.
"""

import os
import site
import sysconfig

GATE = "/opt/sbx/sandbox/gate.py"
LINE = f'import sys; exec(compile(open("{GATE}").read(), "{GATE}", "exec"))\n'


def write_readonly(path: str, text: str) -> None:
    if os.path.islink(path):
        path = os.path.realpath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.write(text)
    os.chown(path, 0, 0)
    os.chmod(path, 0o444)
    print(f"gate: wrote {path}")


def main() -> None:
    for folder in site.getsitepackages():
        write_readonly(os.path.join(folder, "00-sbx-gate.pth"), LINE)
    stdlib = sysconfig.get_paths()["stdlib"]
    target = os.path.join(stdlib, "sitecustomize.py")
    write_readonly(target, f"# sbx: the CPU-meter gate (see {GATE})\n" + LINE)


if __name__ == "__main__":
    main()
