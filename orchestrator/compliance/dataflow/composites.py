"""Objects of the audited file held inside library objects, and objects loaded from pickles.

A scikit-learn `Pipeline([("features", MyFeatures()), ("model", XGBClassifier())])` calls the file's own
`MyFeatures.transform` on whatever it is given, and so does a `FunctionTransformer(my_function)`: when the
pipeline predicts on the batch, the file's transform sees the batch. The library object remembers the file's
objects it was built from (its *members*), and calling it runs them on the data first.

A model loaded with `joblib.load` or `pickle.load` may be an instance of any class the file defines; a
method called on it is run as that method of each class of the file that defines it.
"""

from __future__ import annotations

from orchestrator.compliance.dataflow.base import InterpreterBase
from orchestrator.compliance.dataflow.core import CallSite
from orchestrator.compliance.dataflow.scopes import State
from orchestrator.compliance.values import ClassRef, FuncRef, InstanceRef, LibRef, Value, join, join_all

#: the field of a library object that lists the file's objects it was built from
MEMBERS = "<members>"
#: methods of a library object that pass their data through its members
DATA_METHODS = frozenset(
    {"fit", "fit_transform", "transform", "predict", "predict_proba", "predict_log_proba",
     "decision_function", "score"}
)  # fmt: skip
#: library functions that build a composite from objects (besides classes, whose names are capitalised)
COMPOSITE_FACTORIES = frozenset(
    {
        "sklearn.pipeline.make_pipeline",
        "sklearn.pipeline.make_union",
        "sklearn.compose.make_column_transformer",
    }
)
#: functions whose result may be any object the file can make
UNPICKLERS = frozenset(
    {"pickle.load", "pickle.loads", "joblib.load", "dill.load", "dill.loads", "cloudpickle.load",
     "cloudpickle.loads", "torch.load"}
)  # fmt: skip
UNPICKLED = "<unpickled object>"
_SEARCH_DEPTH = 4


def _file_objects(value: Value, depth: int = 0) -> list[Value]:
    """Instances and functions of the file inside a value (lists, tuples, dicts), a few levels deep."""
    ref = value.ref
    if ref is not None and isinstance(ref, InstanceRef | FuncRef):
        return [value]
    if depth >= _SEARCH_DEPTH or (value.items is None and value.fields is None and value.elem is None):
        return []
    parts = list(value.items or ()) + [v for _, v in value.fields or ()]
    if value.elem is not None:
        parts.append(value.elem)
    return [found for part in parts for found in _file_objects(part, depth + 1)]


class Composites(InterpreterBase):
    __slots__ = ()  # the state is in InterpreterBase's slots

    def _library_result(self, qualname: str, result: Value, site: CallSite) -> Value:
        """A library call's result, remembering the file's objects a composite was built from."""
        if qualname in UNPICKLERS:
            return Value(base=result.total, ref=LibRef(UNPICKLED, instance=True))
        builds = qualname.rsplit(".", 1)[-1][:1].isupper() or qualname in COMPOSITE_FACTORIES
        if not builds or not any(
            v.ref is not None or v.items is not None or v.fields is not None or v.elem is not None
            for v in (*site.args, *site.kwargs.values())
        ):
            return result
        members = [m for arg in [*site.args, *site.kwargs.values()] for m in _file_objects(arg)]
        if not members:
            return result
        if result.ref is None:
            result = Value(base=result.base, fields=result.fields, ref=LibRef(qualname, instance=True))
        return result.with_field(MEMBERS, Value(items=tuple(members)))

    def _through_members(self, receiver: Value, method: str, site: CallSite, state: State) -> CallSite:
        """Run the file's objects inside a library composite on the data it is given: the call site with its
        first argument joined with what they return."""
        members = receiver.field(MEMBERS)
        if members is None or method not in DATA_METHODS or not site.args:
            return site
        data = site.args[0]
        for member in members.items or ():
            if isinstance(member.ref, FuncRef):
                data = join(data, self.invoke(member, [data], site))
                continue
            transform = self._member(member, "transform")
            if transform is not None and isinstance(transform.ref, FuncRef):
                data = join(data, self.invoke(transform, [data], site))
        if data is site.args[0]:
            return site
        return CallSite(
            site.node,
            site.scope,
            site.code,
            [data, *site.args[1:]],
            site.arg_nodes,
            site.kwargs,
            site.kwarg_nodes,
            site.star,
            site.dstar,
            site.receiver,
            site.receiver_node,
            site.callee,
        )

    def _unpickled_call(self, method: str, site: CallSite, state: State) -> Value | None:
        """A method called on an unpickled object: run it as each class of the file that defines it."""
        results = []
        if self._reads:
            # every class of the file may be the one: the outcome depends on all module variables
            self._reads[-1].update({name: v for name, v in self.frame.globals.items()})
        for value in list(self.frame.globals.values()):
            if not isinstance(value.ref, ClassRef):
                continue
            instance = Value(fields=(), ref=InstanceRef(value))
            bound = self._member(instance, method)
            if bound is not None and isinstance(bound.ref, FuncRef):
                results.append(self.call_value(bound, site, state))
        return join_all(results) if results else None
