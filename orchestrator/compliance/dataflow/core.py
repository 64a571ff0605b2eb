"""Shared types of the engine: sink roles and hits, call sites, and what library semantics may ask of the
interpreter."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from orchestrator.compliance.strings import TaskLayout
from orchestrator.compliance.values import Kind, Path, Step, Value


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


_NO_EXTRA: dict[str, object] = {}


class CallSite:
    """A call being interpreted: its node, evaluated arguments, and where it is (for evidence).

    A plain slotted class: one is made for every call the interpreter sees."""

    __slots__ = (
        "arg_nodes",
        "args",
        "callee",
        "code",
        "dstar",
        "extra",
        "kwarg_nodes",
        "kwargs",
        "node",
        "receiver",
        "receiver_node",
        "scope",
        "star",
    )  # fmt: skip

    def __init__(
        self,
        node: ast.Call,
        scope: str,
        code: str,
        args: list[Value],
        arg_nodes: list[ast.expr],
        kwargs: dict[str, Value],
        kwarg_nodes: dict[str, ast.expr],
        star: Value | None = None,
        dstar: Value | None = None,
        receiver: Value | None = None,
        receiver_node: ast.expr | None = None,
        callee: str = "",
        extra: dict[str, object] | None = None,
    ) -> None:
        self.node = node
        self.scope = scope
        self.code = code
        self.args = args
        self.arg_nodes = arg_nodes
        self.kwargs = kwargs
        self.kwarg_nodes = kwarg_nodes
        #: a `*args` whose length is unknown: it may fill any remaining positional parameter
        self.star = star
        #: a `**kwargs` whose keys are unknown
        self.dstar = dstar
        self.receiver = receiver
        self.receiver_node = receiver_node
        self.callee = callee
        self.extra: dict[str, object] = extra if extra is not None else _NO_EXTRA

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


class Effect:
    """What a library call did: the value it returns and, if it changed its receiver, the receiver's new
    value (the interpreter writes it back to the receiver's variable, attribute or item)."""

    __slots__ = ("receiver", "result")

    def __init__(self, result: Value, receiver: Value | None = None) -> None:
        self.result = result
        self.receiver = receiver


class Host(Protocol):
    """The interpreter, as library semantics see it."""

    layout: TaskLayout

    def hit(self, role: Role, value: Value, node: ast.AST | None, site: CallSite, target: str) -> None: ...

    def invoke(self, func: Value, args: list[Value], site: CallSite) -> Value: ...

    def unknown_call(self, what: str, site: CallSite, result: Value) -> Value: ...

    def constant(self, const: object, node: ast.AST, taints_from: Value | None = None) -> Value: ...

    def step(
        self, site: CallSite, note: str, node: ast.AST | None = None, kind: Kind | None = None
    ) -> Step: ...
