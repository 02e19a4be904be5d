"""One registry of the methods graphlink runs: what each is, for people and for the code that runs it.

A method (a re-identification algorithm, a protection heuristic, later a risk computation) is one frozen
:class:`MethodSpec`: its name (the vocabulary of ``--method`` and of the Python API), its label for people, a
sentence saying what it does, the function that runs it, its parameters with their constraints, the readings of a
release it applies to (one-to-one only, or one-to-many too), whether it can run per connected component of the
link graph and how per-part results merge.  Everything that used to ask ``method == "..."`` reads the spec instead:
the CLI's choices (:func:`names`), the app's selectors, the advisor, the words of both edges, the local engine
(:func:`graphlink.analysis.reidit.reidentify`) and the Spark engine (:mod:`graphlink.engines.spark.engine` and its
component split).  The pattern is networkx's dispatchable algorithms (a name bound to an implementation resolved
when called) and scikit-learn's declarative parameter validation (constraints stated once, checked in one place:
:func:`validate`).  docs/registry.md walks through adding a method.

The module sits in the foundation layer and imports nothing heavy: a spec names its function as a lazy
``"module:attribute"`` reference, imported on the first call (:meth:`MethodSpec.resolve`), so ``graphlink --help``
lists every choice without loading numba, pandas or scipy.  Every operation here is O(1) or O(registered methods).
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from graphlink.diagnostics import Diagnostic
from graphlink.errors import ModelAssumptionError, ReleaseError

#: what a method does: find re-identifications, protect a release, or measure a risk
Kind = Literal["reidentify", "protect", "risk"]
KINDS: tuple[str, ...] = ("reidentify", "protect", "risk")
#: the readings of a release's multiplicity (:mod:`graphlink.core.model`)
MULTIPLICITIES: tuple[str, ...] = ("one-to-one", "one-to-many")


class MethodError(ReleaseError, ValueError):
    """A method request the registry refuses: an unknown name, a missing or out-of-range parameter (exit 2).

    Also a :class:`ValueError`, which the library raised for these before the registry existed.  It carries a
    diagnostic (``method-unknown`` or ``method-parameter``) the CLI and the app word for their users.

    Examples
    --------
    >>> from graphlink import registry
    >>> try:
    ...     registry.get("no-such-method")
    ... except registry.MethodError as exc:
    ...     print(exc.diagnostic.code, exc.exit_code)
    method-unknown 2
    """

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(str(diagnostic), diagnostic=diagnostic)


@dataclass(frozen=True)
class Parameter:
    """One parameter of a method and its constraints (checked by :func:`validate`).

    Attributes
    ----------
    name : str
        The keyword the function takes (``k``); the CLI's option is ``--<name>``.
    words : str
        What it is, for people ("the candidate-set size").
    type : {"int", "bool"}
        Its type.
    required : bool
        The method cannot run without it.
    minimum : int, optional
        The smallest value allowed (``int`` only).
    """

    name: str
    words: str
    type: Literal["int", "bool"] = "int"
    required: bool = False
    minimum: int | None = None


@dataclass(frozen=True)
class SparkPlan:
    """How the Spark engine runs a re-identification method (:mod:`graphlink.engines.spark`).

    With every field None the engine needs nothing special: on the driver split the method's own function runs on
    the link graph collected to the driver; on the component split it runs per bucket of whole components and the
    pairs are concatenated (when the spec is ``per_component``, otherwise the graph is collected to the driver).

    Attributes
    ----------
    native : str, optional
        ``"module:attribute"`` of ``f(spark_trails) -> Reidentification`` running entirely in Spark (REIDIT-C).
    write : str, optional
        ``"module:attribute"`` of ``f(spark_trails, out, *, explain) -> ReidentifySummary`` writing the pairs from
        the executors without collecting them.
    write_split : {"any", "components"}
        ``write`` is possible always, or only when the exact analyses run on the component split.
    bucket : str, optional
        ``"module:attribute"`` of ``f(ctx, graph, ids) -> rows`` classifying one bucket of components
        (:mod:`graphlink.engines.spark.components` documents the rows).
    merge : str, optional
        ``"module:attribute"`` of ``f(spark_trails, rows, ctx) -> Reidentification`` merging the buckets' rows.
    """

    native: str | None = None
    write: str | None = None
    write_split: Literal["any", "components"] = "any"
    bucket: str | None = None
    merge: str | None = None


@dataclass(frozen=True)
class MethodSpec:
    """What one method is (module docstring).

    Attributes
    ----------
    name : str
        The method's name in the CLI and the Python API (``incomplete-k``).
    kind : {"reidentify", "protect", "risk"}
        What it does.
    label : str
        Its name for people, in sentences (``REIDIT-I-K``).
    description : str
        One plain sentence: what it finds or does.
    function : str or callable
        ``"module:attribute"`` (imported on the first call) or the function itself.  Re-identification:
        ``f(data, **parameters) -> Reidentification`` with ``data`` the trails or the link graph (``input``);
        protection: ``f(instance, k, seed) -> IntAllocation``, or, for a method that protects the release as a whole
        (``input="release"``), ``f(release, k, seed, **options) -> UnlinkResult``.
    input : {"trails", "graph", "instance", "release"}
        What the function takes.
    parameters : tuple of Parameter
        Its parameters, passed by keyword when given.
    multiplicities : tuple of str
        The readings it applies to: ``("one-to-one",)`` for one-to-one methods only (Table A.1).
    heading : str, optional
        Its name as a heading in the app, where the label alone would undersell it (default: ``label``).
    exact : bool
        Its pairs are certain: in every consistent assignment (true loves; one-to-many certain pairs).
    heading_one_to_many : str, optional
        Its heading on a release read as one-to-many, where it finds something else in words (default:
        ``heading``).
    per_component : bool
        Its result on a link graph is the union of its results on the graph's connected components, so an engine
        may run it per component and concatenate the pairs (``merge``).
    merge : {"concat", "custom"}
        How per-component results merge: pairs concatenated in the release's order, or the Spark plan's ``merge``.
    candidate_groups : bool
        Its pairs are candidate groups of at most ``k`` per de-identified element, not single pairs (REIDIT-I-K):
        evaluation against truth counts a group as correct when the true pair is in it.
    final_clean : bool
        Protection methods: the thesis ends this heuristic with Final-Clean (Proc. 9).
    secure : bool
        Protection methods: the STRANON protocol runs it over encrypted data (thesis ch. 8, Alg. 12/14).
    spark : SparkPlan
        How the Spark engine runs it.
    advised : bool
        The advisor may name it where it applies, after Table A.1's methods.

    Examples
    --------
    >>> from graphlink import registry
    >>> spec = registry.get("incomplete-k")
    >>> spec.label, spec.one_to_one_only, [p.name for p in spec.parameters]
    ('REIDIT-I-K', True, ['k'])
    """

    name: str
    kind: Kind
    label: str
    description: str
    function: str | Callable[..., Any]
    input: Literal["trails", "graph", "instance", "release"] = "graph"
    parameters: tuple[Parameter, ...] = ()
    multiplicities: tuple[str, ...] = MULTIPLICITIES
    heading: str | None = None
    heading_one_to_many: str | None = None
    exact: bool = False
    per_component: bool = True
    merge: Literal["concat", "custom"] = "concat"
    candidate_groups: bool = False
    final_clean: bool = False
    secure: bool = False
    spark: SparkPlan = field(default_factory=SparkPlan)
    advised: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not self.multiplicities or set(self.multiplicities) - set(MULTIPLICITIES):
            raise ValueError(f"multiplicities must be among {', '.join(MULTIPLICITIES)}")
        if self.merge == "custom" and self.spark.merge is None:
            raise ValueError(f"{self.name}: a custom merge needs spark.merge")

    @property
    def one_to_one_only(self) -> bool:
        """It applies to one-to-one readings only (thesis Table A.1)."""
        return "one-to-many" not in self.multiplicities

    @property
    def title(self) -> str:
        """Its name as a heading (``heading``, else ``label``)."""
        return self.heading or self.label

    def title_for(self, one_to_many: bool) -> str:
        """Its heading under the reading of a release: ``heading_one_to_many`` on a one-to-many release, where the
        words of matchings do not apply (the exact method's pairs are certain pairs, not true loves)."""
        return (self.heading_one_to_many if one_to_many and self.heading_one_to_many else None) or self.title

    def applies(self, one_to_many: bool) -> bool:
        """Whether it applies to a release read as one-to-many (``True``) or one-to-one (``False``)."""
        return (MULTIPLICITIES[1] if one_to_many else MULTIPLICITIES[0]) in self.multiplicities

    def resolve(self) -> Callable[..., Any]:
        """The function itself (a ``"module:attribute"`` reference is imported now)."""
        return resolve(self.function)

    def keywords(self, **given: Any) -> dict[str, Any]:
        """The keyword arguments of its function: the declared parameters among ``given`` that are not None."""
        return {p.name: given[p.name] for p in self.parameters if given.get(p.name) is not None}


def resolve(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    """A ``"module:attribute"`` reference imported (a callable is returned as it is).  O(import)."""
    if callable(ref):
        return ref
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


_REGISTRY: dict[str, MethodSpec] = {}

#: the link-graph parts of trails an engine holds outside this process: ``"module:Trails"`` -> ``"module:Parts"``
#: (a class taking the trails), so :func:`graphlink.analysis.reidit.reidentify` runs on them without importing the
#: engine (a lower layer never imports a higher one; the reference is resolved only when such trails arrive)
PARTS: dict[str, str] = {"graphlink.engines.spark.fill:SparkTrails": "graphlink.engines.spark.engine:SparkParts"}


def parts_of(data: Any) -> Any:
    """The link-graph parts registered in :data:`PARTS` for ``data``'s type, made from ``data``; None for a type
    not registered there.  O(1) but for the first import of the parts' module."""
    ref = PARTS.get(f"{type(data).__module__}:{type(data).__qualname__}")
    return None if ref is None else resolve(ref)(data)


def register(spec: MethodSpec, *, replace: bool = False) -> MethodSpec:
    """Add ``spec`` to the registry (a name is registered once unless ``replace``).  Returns it, so a module can
    keep the spec it registered.

    Examples
    --------
    >>> from graphlink import registry
    >>> toy = registry.MethodSpec("nothing", "reidentify", "nothing", "finds nothing", "builtins:print")
    >>> _ = registry.register(toy)
    >>> "nothing" in registry.names("reidentify")
    True
    >>> registry.unregister("nothing")
    """
    if spec.name in _REGISTRY and not replace and _REGISTRY[spec.name] != spec:
        raise ValueError(f"a method named {spec.name!r} is registered already")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove the method ``name`` (tests that register a toy method clean up with this)."""
    _REGISTRY.pop(name, None)


def names(kind: str) -> tuple[str, ...]:
    """The registered methods of ``kind``, in the order they were registered (the CLI's choices).

    Examples
    --------
    >>> from graphlink import registry
    >>> "force-dedup" in registry.names("protect"), "true-loves" in registry.names("reidentify")
    (True, True)
    """
    return tuple(n for n, s in _REGISTRY.items() if s.kind == kind)


def specs(kind: str) -> Iterator[MethodSpec]:
    """The registered specs of ``kind``, in registration order.

    Examples
    --------
    >>> from graphlink import registry
    >>> next(s for s in registry.specs("protect") if s.name == "greedy-dedup").label
    'Greedy-Dedup'
    """
    return (s for s in _REGISTRY.values() if s.kind == kind)


def labels(kind: str) -> dict[str, str]:
    """``name -> label`` of the methods of ``kind`` (the words both edges use for them).

    Examples
    --------
    >>> from graphlink import registry
    >>> registry.labels("protect")["force-dedup"]
    'Force-Dedup'
    """
    return {s.name: s.label for s in specs(kind)}


def applicable(kind: str, one_to_many: bool) -> tuple[str, ...]:
    """The methods of ``kind`` that apply to a release read as one-to-many (or one-to-one).

    Examples
    --------
    Only REIDIT-M among the thesis's methods applies to one-to-many data:

    >>> from graphlink import registry
    >>> "multiple" in registry.applicable("reidentify", True), "incomplete" in registry.applicable("reidentify", True)
    (True, False)
    """
    return tuple(s.name for s in specs(kind) if s.applies(one_to_many))


def secure_names() -> tuple[str, ...]:
    """The protection methods the secure protocol runs (``secure``).

    Examples
    --------
    >>> from graphlink import registry
    >>> registry.secure_names()
    ('greedy-dedup', 'force-dedup')
    """
    return tuple(s.name for s in specs("protect") if s.secure)


def get(name: str, kind: str | None = None) -> MethodSpec:
    """The spec of the method ``name`` (of ``kind``, when given).

    Raises
    ------
    MethodError
        No such method (diagnostic ``method-unknown``, data: ``method``, ``kind``, ``choices``).

    Examples
    --------
    >>> from graphlink import registry
    >>> registry.get("force-dedup").kind
    'protect'
    """
    spec = _REGISTRY.get(name)
    if spec is None or (kind is not None and spec.kind != kind):
        choices = list(names(kind) if kind is not None else _REGISTRY)
        raise MethodError(Diagnostic("method-unknown", f"method must be one of {', '.join(choices)}, got {name!r}",
                                     {"method": name, "kind": kind, "choices": choices}))
    return spec


def find(name: str) -> MethodSpec | None:
    """The spec of the method ``name``, or None when no such method is registered.

    Examples
    --------
    >>> from graphlink import registry
    >>> registry.find("force-dedup").label, registry.find("no-such-method")
    ('Force-Dedup', None)
    """
    return _REGISTRY.get(name)


def validate(name: str | MethodSpec, kind: str | None = None, *, trails: Any = None, **given: Any) -> MethodSpec:
    """Check a request against its method's spec, before any work; returns the spec.

    The one place that refuses an unknown method, a missing or out-of-range parameter (``incomplete-k`` needs
    ``k ≥ 1``) and a one-to-one method on one-to-many data (thesis Table A.1).

    Parameters
    ----------
    name : str or MethodSpec
        The method.
    kind : str, optional
        The kind it must be.
    trails : optional
        The trails it will run on: anything with ``one_to_many``, ``model`` (with ``label``) and ``reason`` (the
        core's trails or an engine's).  Not checked when None.
    **given
        The parameters of the request (None: not given).

    Returns
    -------
    MethodSpec

    Raises
    ------
    MethodError
        Unknown method (``method-unknown``) or a parameter missing, of the wrong type or below its minimum
        (``method-parameter``, data: ``method``, ``label``, ``parameter``, ``words``, ``minimum``, ``value``).
    ModelAssumptionError
        A one-to-one method on trails read as one-to-many (``method-needs-one-to-one``).

    Examples
    --------
    >>> from graphlink import registry
    >>> try:
    ...     registry.validate("incomplete-k", k=None)
    ... except registry.MethodError as exc:
    ...     print(exc)
    REIDIT-I-K needs k (the candidate-set size)
    """
    spec = name if isinstance(name, MethodSpec) else get(name, kind)
    for p in spec.parameters:
        value = given.get(p.name)
        data = {"method": spec.name, "label": spec.label, "parameter": p.name, "words": p.words,
                "minimum": p.minimum, "value": value}
        if value is None:
            if p.required:
                raise MethodError(Diagnostic("method-parameter", f"{spec.label} needs {p.name} ({p.words})", data))
            continue
        wrong_type = isinstance(value, bool) != (p.type == "bool") or (
            p.type == "int" and not isinstance(value, numbers.Integral))
        if wrong_type or (p.minimum is not None and value < p.minimum):
            want = "true or false" if p.type == "bool" else (
                f"a whole number of at least {p.minimum}" if p.minimum is not None else "a whole number")
            raise MethodError(Diagnostic("method-parameter", f"{spec.label}: {p.name} ({p.words}) must be {want}, "
                                         f"got {value!r}", {**data, "expected": want}))
    if trails is not None:
        check_reading(spec, trails)
    return spec


def check_reading(spec: MethodSpec, trails: Any) -> None:
    """Refuse a one-to-one method on ``trails`` read as one-to-many (:class:`ModelAssumptionError`, diagnostic
    ``method-needs-one-to-one``); :func:`validate` calls it, and it can be called alone once the parameters are
    checked.  O(1)."""
    if not spec.applies(bool(trails.one_to_many)):
        raise ModelAssumptionError(diagnostic=needs_one_to_one(spec.label, trails))


def needs_one_to_one(label: str, trails: Any) -> Diagnostic:
    """The ``method-needs-one-to-one`` refusal of the method called ``label`` on one-to-many ``trails``: such a
    method can name people wrongly there (REIDIT-I removes a household after its first member).  O(methods)."""
    stated = "one-to-many as stated" in trails.reason
    many = " or ".join(s.title for s in specs("reidentify") if s.applies(True))
    return Diagnostic(
        "method-needs-one-to-one",
        f"{label} assumes one-to-one data, but this release is read as one-to-many "
        f"({trails.model.label})", {"method": label, "label": trails.model.label, "stated_many": stated,
                                    "alternatives": [s.name for s in specs("reidentify") if s.applies(True)]},
        remedy=f"use {many} (exact certain pairs for one-to-many data)"
               + ("" if stated else "; if every de-identified element stands for one person, state the "
                                    "multiplicity as one-to-one"))


# --------------------------------------------------------------------------------------------- the methods
_K = Parameter("k", "the candidate-set size", "int", required=True, minimum=1)
_EXPLAIN = Parameter("explain", "compute a tight-set reason for every forced pair", "bool")
_ONE = ("one-to-one",)
_REIDIT = "graphlink.analysis.reidit"
_COMPONENTS = "graphlink.engines.spark.components"

register(MethodSpec(
    "complete", "reidentify", "REIDIT-C",
    "pairs an identified element with the one de-identified element whose complete trail is identical",
    f"{_REIDIT}:reidit_c", input="trails", multiplicities=_ONE,
    spark=SparkPlan(native="graphlink.engines.spark.links:reidit_c",
                    write="graphlink.engines.spark.links:write_reidit_c")))
register(MethodSpec(
    "incomplete", "reidentify", "REIDIT-I",
    "links unique subtrail and supertrail pairs round by round, removing each pair found",
    f"{_REIDIT}:reidit_i", multiplicities=_ONE, merge="custom",
    spark=SparkPlan(bucket=f"{_COMPONENTS}:bucket_reidit_i", merge=f"{_COMPONENTS}:merge_reidit_i")))
register(MethodSpec(
    "incomplete-k", "reidentify", "REIDIT-I-K",
    "REIDIT-I that stops at candidate sets of at most k people", f"{_REIDIT}:reidit_ik", parameters=(_K,),
    multiplicities=_ONE, merge="custom", candidate_groups=True,
    spark=SparkPlan(bucket=f"{_COMPONENTS}:bucket_reidit_i", merge=f"{_COMPONENTS}:merge_reidit_i")))
register(MethodSpec(
    "multiple", "reidentify", "REIDIT-M",
    "pairs an element with the only trail on the other side that fits it; allows one-to-many data",
    f"{_REIDIT}:reidit_m", merge="custom",
    spark=SparkPlan(bucket=f"{_COMPONENTS}:bucket_reidit_m", merge=f"{_COMPONENTS}:merge_reidit_m")))
register(MethodSpec(
    "true-loves", "reidentify", "true loves",
    "the pairs in every maximum matching of the link graph: every certain re-identification",
    f"{_REIDIT}:true_loves", parameters=(_EXPLAIN,), heading="True loves (exact)",
    heading_one_to_many="Certain pairs (exact)", exact=True, merge="custom",
    spark=SparkPlan(write=f"{_COMPONENTS}:write_true_loves", write_split="components",
                    bucket=f"{_COMPONENTS}:bucket_true_loves", merge=f"{_COMPONENTS}:merge_true_loves")))

_METHODS = "graphlink.protect.methods"
# the Dedup family: Malin 2006, Alg. 7 (Greedy-Dedup), Alg. 10 (Force-Dedup), Proc. 9 (Final-Clean); the words
# shown to people (CLI help, the app) carry no thesis notation
register(MethodSpec(
    "greedy-dedup", "protect", "Greedy-Dedup",
    "withholds the least frequent records location by location, most popular location first",
    f"{_METHODS}:_greedy", input="instance", multiplicities=_ONE,
    per_component=False, secure=True))
register(MethodSpec(
    "force-dedup", "protect", "Force-Dedup",
    "gives every location k protectors first, then boosts them, and ends with Final-Clean",
    f"{_METHODS}:_force", input="instance", multiplicities=_ONE,
    per_component=False, final_clean=True, secure=True))
register(MethodSpec(
    "flow-dedup", "protect", "Flow-Dedup",
    "assigns protectees to locations by a flow that keeps the most disclosures, and ends with Final-Clean",
    f"{_METHODS}:_flow", input="instance", multiplicities=_ONE, per_component=False, final_clean=True))
register(MethodSpec(
    "keep-most", "protect", "Keep-most",
    "withholds single disclosures, each record keeping the most locations it can, until the exact audit certifies "
    "the release; prints a lower bound on what any method must withhold",
    "graphlink.protect.pipeline:unlink_keep", input="release", heading="Keep most of the data",
    per_component=False))
