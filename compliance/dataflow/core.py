"""Shared types of the engine: sink roles and hits, call sites, and what library semantics may ask of the
interpreter."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from compliance.strings import TaskLayout
from compliance.values import Kind, Path, Step, Value


class Role(StrEnum):
    """What a sink does with the value that reaches it."""

    #: training data of a model fit (X, y, sample weights, a model to continue from)
    TRAIN = "train"
    #: input of a model's prediction
    PREDICT = "predict"
    #: the value predict_proba returns to the scorer
    OUTPUT = "output"


@dataclass(frozen=True, slots=True)
class SinkHit:
    """A tainted value reached a sink. `path` runs from the source to the sink, the sink step last."""

    role: Role
    kind: Kind
    path: Path
    #: what the sink is, for people: "fit (X)", "xgboost.train (dtrain)", "predict_proba (returned)"
    target: str
    #: set when the hit was found in a function no call in the file was seen to reach (its name)
    unreached: str = ""


@dataclass
class CallSite:
    """A call being interpreted: its node, evaluated arguments, and where it is (for evidence)."""

    node: ast.Call
    scope: str
    code: str
    args: list[Value]
    arg_nodes: list[ast.expr]
    kwargs: dict[str, Value]
    kwarg_nodes: dict[str, ast.expr]
    #: a `*args` whose length is unknown: it may fill any remaining positional parameter
    star: Value | None = None
    #: a `**kwargs` whose keys are unknown
    dstar: Value | None = None
    receiver: Value | None = None
    receiver_node: ast.expr | None = None
    callee: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.node.lineno

    def arg(self, position: int, keyword: str | None = None) -> Value | None:
        if keyword is not None and keyword in self.kwargs:
            return self.kwargs[keyword]
        if position < len(self.args):
            return self.args[position]
        return None

    def arg_node(self, position: int, keyword: str | None = None) -> ast.expr | None:
        if keyword is not None and keyword in self.kwarg_nodes:
            return self.kwarg_nodes[keyword]
        if position < len(self.arg_nodes):
            return self.arg_nodes[position]
        return None


@dataclass(frozen=True, slots=True)
class Effect:
    """What a library call did: the value it returns and, if it changed its receiver, the receiver's new
    value (the interpreter writes it back to the receiver's variable, attribute or item)."""

    result: Value
    receiver: Value | None = None


class Host(Protocol):
    """The interpreter, as library semantics see it."""

    layout: TaskLayout

    def hit(self, role: Role, value: Value, node: ast.AST | None, site: CallSite, target: str) -> None: ...

    def invoke(self, func: Value, args: list[Value], site: CallSite) -> Value: ...

    def constant(self, const: object, node: ast.AST, taints_from: Value | None = None) -> Value: ...

    def step(
        self, site: CallSite, note: str, node: ast.AST | None = None, kind: Kind | None = None
    ) -> Step: ...
