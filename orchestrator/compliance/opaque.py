"""Where the static trace cannot see: constructs through which data can flow by a name or code the audit
never reads. A rule that found nothing in code holding one of them is `unanalysable`, not `clear`
(audit.py), with each construct and its line as evidence.

The data-flow interpreter follows names it can read in the source. It cannot follow:

- dynamic code: `exec`, `eval`, `compile` (the builtins, also reached as `builtins.exec` or by passing the
  builtin itself around), `types.FunctionType` / `types.CodeType`, `marshal.loads`;
- a namespace read or written by key: `globals()`, `locals()`, `vars()` without an argument, `vars(m)` or
  `m.__dict__` of a module, `sys.modules` (other than a membership test), `__builtins__`, frames
  (`sys._getframe`, `inspect.currentframe`/`stack`, `.f_globals`, `.f_locals`);
- a name computed at run time on a module: `getattr`/`setattr`/`delattr` of a module (an imported name,
  `sys.modules[...]`) with a name that is not a literal string;
- strings computed from codes, which can be names or the evaluation file's path the trace then cannot read:
  `chr(...)`, `base64.*decode`, `codecs.decode`, `bytes.fromhex`;
- imports it cannot follow: `__import__`, `importlib.import_module`, `importlib.util` / `importlib.machinery`
  loaders, `.exec_module()` / `.load_module()`, `runpy`, `imp`.

This is a syntactic over-approximation on purpose: whether such a construct carries the evaluation data is
exactly what cannot be known without running it. Uses the interpreter does follow are not listed: methods of
other objects that share a name (`model.eval()`, `df.eval("a + b")`, `re.compile`, `torch.compile`,
`ast.literal_eval`), `getattr(obj, name)` on objects that are not modules (hyper-parameters, fitted
attributes), `vars(args)`, `importlib.metadata`. A file that rebinds a builtin's name (`def eval(...)`) uses
its own function, which the interpreter reads.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

#: builtins that run code the audit never reads
_DYNAMIC_CODE = frozenset({"exec", "eval", "compile"})
#: builtins that hand out a namespace to read or write by key
_NAMESPACES = frozenset({"globals", "locals"})
_ATTR_BUILTINS = frozenset({"getattr", "setattr", "delattr"})
#: module attributes (module, attribute) that are dynamic code, imports or frames
_MODULE_CALLS = {
    ("importlib", "import_module"): "import by a computed name",
    ("importlib", "__import__"): "import by a computed name",
    ("importlib", "reload"): "module reloaded",
    ("importlib.util", "spec_from_file_location"): "module loaded from a file path",
    ("importlib.util", "module_from_spec"): "module loaded from a spec",
    ("importlib.util", "spec_from_loader"): "module loaded from a loader",
    ("importlib.machinery", "SourceFileLoader"): "module loaded from a file path",
    ("importlib.machinery", "SourcelessFileLoader"): "module loaded from a file path",
    ("runpy", "run_path"): "code run from a file path",
    ("runpy", "run_module"): "module run by name",
    ("imp", "load_source"): "module loaded from a file path",
    ("imp", "load_module"): "module loaded",
    ("types", "FunctionType"): "function built from a code object",
    ("types", "CodeType"): "code object built at run time",
    ("marshal", "loads"): "code object loaded from bytes",
    ("sys", "_getframe"): "a frame's namespaces",
    ("inspect", "currentframe"): "a frame's namespaces",
    ("inspect", "stack"): "frames' namespaces",
    ("builtins", "exec"): "dynamic code (exec)",
    ("builtins", "eval"): "dynamic code (eval)",
    ("builtins", "compile"): "dynamic code (compile)",
    ("builtins", "globals"): "the module namespace by key (globals())",
    ("builtins", "locals"): "a namespace by key (locals())",
    ("builtins", "__import__"): "import by a computed name",
    ("builtins", "chr"): "a string built from character codes (chr)",
    ("base64", "b64decode"): "a string decoded at run time (base64)",
    ("base64", "b32decode"): "a string decoded at run time (base64)",
    ("base64", "b16decode"): "a string decoded at run time (base64)",
    ("base64", "a85decode"): "a string decoded at run time (base64)",
    ("base64", "b85decode"): "a string decoded at run time (base64)",
    ("codecs", "decode"): "a string decoded at run time (codecs)",
}
_FRAME_ATTRS = frozenset({"f_globals", "f_locals", "f_builtins"})
_LOADER_METHODS = frozenset({"exec_module", "load_module"})


@dataclass(frozen=True)
class Opaque:
    """One construct the trace cannot see through."""

    line: int
    construct: str   # what it is, for a reader: "dynamic code (exec)", "getattr of a module by a computed name"
    code: str        # the line's source, stripped


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the file binds anywhere (a builtin's name rebound is the file's own object)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".", 1)[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> module it names, from `import a.b [as c]` and `from a import b` (b may be a module)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.split(".", 1)[0]] = a.name.split(".", 1)[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, tree: ast.Module, source: str) -> None:
        self.lines = source.splitlines()
        bound = _bound_names(tree)
        self.builtins = {n for n in _DYNAMIC_CODE | _NAMESPACES | _ATTR_BUILTINS | {"vars", "__import__", "chr"}
                         if n not in bound}
        self.modules = _module_aliases(tree)
        # `from a import b` may bind a function, not a module: only plain imports count as modules for getattr
        self.plain_modules = {name for name, mod in self.modules.items()
                              if any(isinstance(n, ast.Import) and any((a.asname or a.name.split(".")[0]) == name
                                                                        for a in n.names) for n in ast.walk(tree))}
        self.found: list[Opaque] = []
        self._membership: set[int] = set()
        self._called: set[int] = set()   # the func nodes of calls

    def add(self, node: ast.AST, construct: str) -> None:
        line = getattr(node, "lineno", 0)
        code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.found.append(Opaque(line, construct, code[:200]))

    # -- what names resolve to ---------------------------------------------------------------------------

    def dotted(self, node: ast.expr) -> str | None:
        """The module path an expression names (`np`, `importlib.util`), resolved through imports."""
        if isinstance(node, ast.Name):
            return self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def is_sys_modules(self, node: ast.expr) -> bool:
        return self.dotted(node) == "sys.modules"

    def is_module(self, node: ast.expr) -> bool:
        """A module object: an imported module name, `sys.modules[...]`, `__import__(...)`, `import_module(...)`."""
        if isinstance(node, ast.Name):
            return node.id in self.plain_modules
        if isinstance(node, ast.Subscript):
            return self.is_sys_modules(node.value)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "__import__" and "__import__" in self.builtins:
                return True
            return self.dotted(node.func) in ("importlib.import_module", "importlib.__import__")
        return False

    # -- the visits ----------------------------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> None:
        # `"torch" in sys.modules` only asks whether something was imported
        if all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            for comp in node.comparators:
                if self.is_sys_modules(comp):
                    self._membership.add(id(comp))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            if node.id in _DYNAMIC_CODE and node.id in self.builtins:
                self.add(node, f"dynamic code ({node.id})")
            elif node.id in _NAMESPACES and node.id in self.builtins:
                self.add(node, f"a namespace by key ({node.id}())")
            elif node.id == "__import__" and "__import__" in self.builtins:
                self.add(node, "import by a computed name (__import__)")
            elif node.id == "__builtins__":
                self.add(node, "the builtins namespace (__builtins__)")
            elif node.id == "chr" and "chr" in self.builtins:
                self.add(node, "a string built from character codes (chr)")
            elif node.id in self.modules:  # `from importlib import import_module`
                module, _, attr = self.modules[node.id].rpartition(".")
                what = _MODULE_CALLS.get((module, attr))
                if what:
                    self.add(node, what)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = self.dotted(node)
        if path == "sys.modules" and id(node) not in self._membership:
            self.add(node, "a module by key (sys.modules)")
        elif path is not None:
            module, _, attr = path.rpartition(".")
            what = _MODULE_CALLS.get((module, attr))
            if what:
                self.add(node, what)
        if node.attr in _FRAME_ATTRS:
            self.add(node, f"a frame's namespace (.{node.attr})")
        elif node.attr == "__dict__" and self.is_module(node.value):
            self.add(node, "a module's namespace by key (__dict__)")
        elif node.attr in _LOADER_METHODS and id(node) in self._called:
            self.add(node, f"module loaded by a loader (.{node.attr}())")
        elif node.attr == "fromhex" and isinstance(node.value, ast.Name) and node.value.id == "bytes":
            self.add(node, "a string decoded at run time (bytes.fromhex)")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self._called.add(id(func))
        if isinstance(func, ast.Name) and func.id in self.builtins:
            if func.id == "vars" and (not node.args or self.is_module(node.args[0])):
                self.add(node, "a namespace by key (vars())")
            elif func.id in _ATTR_BUILTINS and node.args:
                name = node.args[1] if len(node.args) > 1 else None
                literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
                if self.is_module(node.args[0]) and not literal:
                    self.add(node, f"{func.id} of a module by a computed name")
        self.generic_visit(node)


def find_opaque(tree: ast.Module, source: str) -> list[Opaque]:
    """Every construct in `tree` the data-flow trace cannot see through, in line order (one per line and kind)."""
    finder = _Finder(tree, source)
    finder.visit(tree)
    seen: set[tuple[int, str]] = set()
    out = []
    for o in sorted(finder.found, key=lambda o: (o.line, o.construct)):
        if (o.line, o.construct) not in seen:
            seen.add((o.line, o.construct))
            out.append(o)
    return out
