"""Audit what train.py can import: the delivered modules it imports by name, bundled into one program.

The interpreter (`compliance.dataflow`) analyses one file. A batch statistic in `features.py` that
`predict_proba` calls, or evaluation rows concatenated in `data_utils.py`, are only seen when the helper's
code is interpreted with the values train.py gives it. So the modules train.py imports from the delivered
code (transitively, `import x`, `import a.b as c`, `from x import f`, `from . import y` inside packages,
`from x import *`) are bundled with it into one module:

- each helper's top-level names are renamed `<module>__<name>` wherever they refer to that module's globals
  (a scope-aware rename: locals, parameters, comprehension variables, class bodies and `global` statements
  keep Python's meaning), its library imports included (`import pandas as pd` binds `features__pd`);
- `from features import f as g` becomes `g = features__f`; `features.f` and `pkg.mod.f` become the renamed
  name; a helper's body comes before the modules that import it (dependencies first, train.py last);
- the bundle's lines are the files' lines one after the other, so every evidence step maps back to its file
  and line (`Bundle.locate`), and renamed names read back as `features.f`.

Imports by computed names (`importlib.import_module(name)`, `__import__`, `runpy`, `exec` of a file's text)
cannot be followed: `Bundle.dynamic` lists where they are, and the caller audits the modules the bundle does
not hold on their own as well.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from orchestrator.compliance.dataflow.scopes import locals_of

_DYNAMIC = {"import_module", "__import__", "run_path", "run_module", "spec_from_file_location", "exec", "compile"}


def module_name(rel: str) -> str | None:
    """`a/b.py` -> `a.b`, `a/__init__.py` -> `a`; None for a path Python cannot import by name."""
    p = PurePosixPath(rel)
    if p.suffix != ".py":
        return None
    parts = [*p.parts[:-1], p.stem] if p.stem != "__init__" else list(p.parts[:-1])
    if not parts or not all(x.isidentifier() for x in parts):
        return None
    return ".".join(parts)


@dataclass(frozen=True)
class Piece:
    file: str
    first: int   # the bundle's line where this file's line 1 is
    lines: int


@dataclass
class Bundle:
    source: str
    tree: ast.Module
    pieces: list[Piece]
    #: mangled prefix -> module name, for reading names back
    prefixes: dict[str, str] = field(default_factory=dict)
    #: `file:line` of imports by computed names
    dynamic: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return [p.file for p in self.pieces]

    def locate(self, line: int) -> tuple[str, int]:
        for piece in self.pieces:
            if piece.first <= line < piece.first + piece.lines:
                return piece.file, line - piece.first + 1
        return self.pieces[-1].file, line

    def readable(self, text: str) -> str:
        """Renamed names read back (`features__f` -> `features.f`)."""
        if not self.prefixes:
            return text
        return self._pattern().sub(lambda m: f"{self.prefixes[m.group(1)]}.{m.group(2)}", text)

    def _pattern(self) -> re.Pattern[str]:
        alternatives = "|".join(re.escape(p) for p in sorted(self.prefixes, key=len, reverse=True))
        return re.compile(rf"\b({alternatives})(\w+)")


class _Modules:
    """The delivered modules by name, parsed on demand."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.by_name: dict[str, str] = {}
        for rel in sorted(files):
            name = module_name(rel)
            if name is not None and (name not in self.by_name or rel.endswith("__init__.py")):
                self.by_name[name] = rel
        self.packages = {n.rsplit(".", 1)[0] for n in self.by_name if "." in n}
        self.files = files
        self.trees: dict[str, ast.Module] = {}

    def known(self, name: str) -> bool:
        """A module of the delivered code, or a package folder holding some (a namespace package)."""
        return name in self.by_name or name in self.packages or any(p.startswith(name + ".") for p in self.packages)

    def tree(self, name: str) -> ast.Module | None:
        rel = self.by_name.get(name)
        if rel is None:
            return None
        if name not in self.trees:
            self.trees[name] = ast.parse(self.files[rel], filename=rel)
        return self.trees[name]


def _package_of(name: str, rel: str) -> str:
    return name if rel.endswith("__init__.py") else name.rpartition(".")[0]


def _absolute(node: ast.ImportFrom, package: str) -> str | None:
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts) or (not parts and node.level):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(tree: ast.Module, name: str, rel: str, mods: _Modules) -> tuple[list[str], list[str]]:
    """The delivered modules `tree` imports by name (parents of a dotted name first), and where it imports
    by a computed name."""
    out: list[str] = []
    dynamic: list[str] = []
    package = _package_of(name, rel)

    def add(full: str) -> None:
        parts = full.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if mods.known(prefix) and prefix not in out:
                out.append(prefix)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if mods.known(alias.name.split(".")[0]):
                    add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            full = _absolute(node, package)
            if full is None or not full or not mods.known(full.split(".")[0]):
                continue
            add(full)
            for alias in node.names:
                if alias.name != "*" and mods.known(f"{full}.{alias.name}"):
                    add(f"{full}.{alias.name}")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in _DYNAMIC and not (node.args and isinstance(node.args[0], ast.Constant)):
                dynamic.append(f"{rel}:{node.lineno}")
            # past the branch above, a dynamic call's first argument is a constant
            elif called in _DYNAMIC and isinstance(arg := node.args[0], ast.Constant) and isinstance(arg.value, str):
                target = arg.value
                if called in ("import_module", "__import__", "run_module") and mods.known(target.split(".")[0]):
                    add(target)
    return out, dynamic


def _module_globals(tree: ast.Module) -> set[str]:
    """Names bound at a module's top level, and names its functions declare `global`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
    fake = ast.FunctionDef(name="_", args=ast.arguments([], [], None, [], [], None, []), body=tree.body,
                           decorator_list=[], returns=None, type_comment=None)
    bound, _declared = locals_of(fake)
    return names | set(bound)


@dataclass
class _Scope:
    kind: str                      # module | function | class | comprehension
    locals: set[str]
    declared_global: set[str] = field(default_factory=set)


class _Rewriter(ast.NodeTransformer):
    """Renames one module's globals (unless it is the entry) and rewrites uses of delivered modules."""

    def __init__(self, name: str, rel: str, mods: _Modules, prefix_of: dict[str, str], globals_of: dict[str, set[str]],
                 mangle: bool) -> None:
        self.name, self.rel, self.mods = name, rel, mods
        self.prefix_of, self.globals_of, self.mangle = prefix_of, globals_of, mangle
        self.package = _package_of(name, rel)
        self.globals = globals_of.get(name, set())
        self.scopes: list[_Scope] = [_Scope("module", set())]
        #: names bound to delivered modules by imports in this file (alias -> module name)
        self.aliases: dict[str, str] = {}

    # --- names ---------------------------------------------------------------------------------------

    def _is_global(self, ident: str) -> bool:
        innermost = self.scopes[-1]
        for scope in reversed(self.scopes):
            if scope.kind == "module":
                return True
            if scope.kind == "class" and scope is not innermost:
                continue
            if ident in scope.declared_global:
                return True
            if ident in scope.locals:
                return False
        return True

    def _global_name(self, module: str, ident: str) -> str:
        return f"{self.prefix_of[module]}{ident}" if module in self.prefix_of else ident

    def _own(self, ident: str) -> str:
        return self._global_name(self.name, ident) if self.mangle and ident in self.globals else ident

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if self._is_global(node.id):
            node.id = self._own(node.id)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self._own(n) for n in node.names]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        chain: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.aliases and self._is_global_or_alias(base.id):
            module = self.aliases[base.id]
            parts = list(reversed(chain))
            while parts and self.mods.known(f"{module}.{parts[0]}"):
                module = f"{module}.{parts.pop(0)}"
            if parts and module in self.prefix_of:
                new: ast.expr = ast.copy_location(ast.Name(id=self._global_name(module, parts[0]), ctx=ast.Load()), node)
                for attr in parts[1:]:
                    new = ast.copy_location(ast.Attribute(value=new, attr=attr, ctx=ast.Load()), node)
                if isinstance(new, ast.Name | ast.Attribute):
                    new.ctx = node.ctx
                return new
        self.generic_visit(node)
        return node

    def _is_global_or_alias(self, ident: str) -> bool:
        return True  # an alias of a delivered module is bound by an import; rebinding it is not followed

    # --- imports -----------------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> ast.AST | list[ast.stmt]:
        for alias in node.names:
            top = alias.name.split(".")[0]
            bound = alias.asname or top
            if self.mods.known(top):
                self.aliases[bound] = alias.name if alias.asname else top
            if self._is_global(bound) and self.mangle and bound in self.globals:
                if alias.asname is None and "." in alias.name:
                    alias.name = top
                alias.asname = self._own(bound)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST | list[ast.stmt]:
        full = _absolute(node, self.package)
        if full is None or not full or not self.mods.known(full.split(".")[0]):
            for alias in node.names:  # a library: its names are this module's globals when bound here
                bound = alias.asname or alias.name
                if alias.name != "*" and self._is_global(bound) and self.mangle and bound in self.globals:
                    alias.asname = self._own(bound)
            return node
        out: list[ast.stmt] = []
        names = node.names
        if any(a.name == "*" for a in names):
            tree = self.mods.tree(full)
            public = sorted(n for n in self.globals_of.get(full, set()) if not n.startswith("_")) if tree else []
            names = [ast.alias(name=n) for n in public]
        for alias in names:
            bound = alias.asname or alias.name
            sub = f"{full}.{alias.name}"
            if self.mods.known(sub):
                self.aliases[bound] = sub
                continue
            target = ast.Name(id=self._own(bound) if self._is_global(bound) else bound, ctx=ast.Store())
            value = ast.Name(id=self._global_name(full, alias.name), ctx=ast.Load())
            out.append(ast.copy_location(ast.Assign(targets=[target], value=value), node))
        for stmt in out:
            ast.fix_missing_locations(stmt)
        return out or ast.copy_location(ast.Pass(), node)

    # --- scopes ------------------------------------------------------------------------------------------

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> ast.AST:
        if not isinstance(node, ast.Lambda):
            for dec in node.decorator_list:
                self.visit(dec)
            if node.returns is not None:
                self.visit(node.returns)
            if self._is_global(node.name):
                node.name = self._own(node.name)
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        bound, declared = locals_of(node)
        self.scopes.append(_Scope("function", set(bound), set(declared)))
        try:
            if isinstance(node, ast.Lambda):
                node.body = self.visit(node.body)
            else:
                node.body = [s for stmt in node.body for s in _as_list(self.visit(stmt))]
        finally:
            self.scopes.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        if self._is_global(node.name):
            node.name = self._own(node.name)
        fake = ast.FunctionDef(name="_", args=ast.arguments([], [], None, [], [], None, []), body=node.body,
                               decorator_list=[], returns=None, type_comment=None)
        bound, _ = locals_of(fake)
        self.scopes.append(_Scope("class", set(bound)))
        try:
            node.body = [s for stmt in node.body for s in _as_list(self.visit(stmt))]
        finally:
            self.scopes.pop()
        return node

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> ast.AST:
        first = node.generators[0]
        first.iter = self.visit(first.iter)
        targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        self.scopes.append(_Scope("comprehension", targets))
        try:
            for i, gen in enumerate(node.generators):
                gen.target = self.visit(gen.target)
                if i:
                    gen.iter = self.visit(gen.iter)
                gen.ifs = [self.visit(x) for x in gen.ifs]
            if isinstance(node, ast.DictComp):
                node.key, node.value = self.visit(node.key), self.visit(node.value)
            else:
                node.elt = self.visit(node.elt)
        finally:
            self.scopes.pop()
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension


def _as_list(node: ast.AST | list[ast.stmt] | None) -> list[ast.stmt]:
    if node is None:
        return []
    # a visited statement stays a statement; only a module visit could give another node
    return node if isinstance(node, list) else [node]  # type: ignore[list-item]


def build_bundle(files: Mapping[str, str], entry: str = "train.py") -> Bundle:
    """The entry and the delivered modules it imports, as one program (just the entry when it imports
    none). Raises SyntaxError (its `filename` says which file) when a bundled file does not parse."""
    mods = _Modules(files)
    entry_tree = ast.parse(files[entry], filename=entry)
    entry_name = "__main__"
    order: list[str] = []
    dynamic: list[str] = []
    seen: set[str] = set()

    def visit(name: str, tree: ast.Module, rel: str) -> None:
        found, dyn = _imports(tree, name, rel, mods)
        dynamic.extend(dyn)
        for dep in found:
            if dep in seen:
                continue
            seen.add(dep)
            dep_tree = mods.tree(dep)
            if dep_tree is not None:
                visit(dep, dep_tree, mods.by_name[dep])
                order.append(dep)

    visit(entry_name, entry_tree, entry)
    if not order:
        return Bundle(source=files[entry], tree=entry_tree, pieces=[Piece(entry, 1, _line_count(files[entry]))],
                      dynamic=dynamic)
    prefix_of = {name: name.replace(".", "__") + "__" for name in order}
    # visit() puts in `order` only modules whose tree it found
    globals_of = {name: _module_globals(mods.tree(name)) for name in order}  # type: ignore[arg-type]
    body: list[ast.stmt] = []
    pieces: list[Piece] = []
    chunks: list[str] = []
    first = 1
    for name in [*order, entry_name]:
        rel = entry if name == entry_name else mods.by_name[name]
        text = files[rel] if files[rel].endswith("\n") else files[rel] + "\n"
        tree = entry_tree if name == entry_name else mods.tree(name)
        assert tree is not None
        tree = _Rewriter(name, rel, mods, prefix_of, globals_of, mangle=name != entry_name).visit(tree)
        ast.increment_lineno(tree, first - 1)
        body.extend(tree.body)
        n = _line_count(text)
        pieces.append(Piece(rel, first, n))
        chunks.append(text)
        first += n
    module = ast.Module(body=body, type_ignores=[])
    ast.fix_missing_locations(module)
    return Bundle(source="".join(chunks), tree=module, pieces=pieces,
                  prefixes={p: n for n, p in prefix_of.items()}, dynamic=dynamic)


def _line_count(text: str) -> int:
    """Lines as the bundle numbers them: one per newline (a last line without one counts too)."""
    return text.count("\n") + (0 if text.endswith("\n") else 1)
