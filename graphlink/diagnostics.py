"""Refusals, warnings and notes as a code plus data; the words are chosen at the edge.

The library states a problem in one plain sentence (what is wrong, and what would settle it, in words that name
no command-line flag and no app control) and attaches the facts as data: which side, which elements, which
locations, how many.  The command line (:mod:`graphlink.cli.words`) and the app (``app/components/words.py``)
render the same :class:`Diagnostic` for their own users: the CLI names its flags, the app its controls.  The
codes are stable identifiers (``tests/cli/test_words.py`` checks that both edges know every code the library
raises); a code neither edge knows falls back to the library's own sentence.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: the codes the library raises, warns or returns, with what each one's data holds
CODES: dict[str, str] = {
    "invalid-choice": "option, value, choices: a model option outside its choices",
    "method-needs-one-to-one": "method, label, stated_many, alternatives: a one-to-one method (REIDIT-C/I/I-K) on "
                               "one-to-many data (Table A.1)",
    "method-unknown": "method, kind, choices: a method the registry does not know (graphlink.registry)",
    "method-parameter": "method, label, parameter, words, minimum, value (expected when it is out of range: what "
                        "it must be): a method's parameter missing or out of range",
    "mixed-sizes": "more_deidentified, more_identified (locations), orphans, first: neither side is reserved",
    "stated-side-contradicted": "reserved, offending (locations): a stated reserved side the sizes contradict",
    "one-to-many-deidentified-reserved": "no data: one-to-many with the de-identified side reserved (N/A)",
    "side-undecided": "n_identified, n_deidentified: the sizes and links fit both readings",
    "fits-neither-model": "refuted_one, refuted_many: the release refutes both readings",
    "model-decided": "reserved, multiplicity, decided_by, n_identified, n_deidentified: how a release is read",
    "reidit-conflicts": "label, count, first: records with no candidate left (REIDIT-I/-I-K)",
    "reidit-m-orphans": "label, count, first, one_to_many: elements that fit no trail (REIDIT-M)",
    "hall-fails": "label, sides ({side: count}), first ({side: keys}): no matching covers a side",
    "one-to-many-refuted": "detail: the one-to-many model is refuted by the data",
    "components-unsolved": "count, texts: one-to-many components beyond the search budget",
    "unlink-one-to-many": "label: the Dedup methods protect one-to-one releases only (keep-most protects "
                          "one-to-many ones)",
    "unlink-one-to-many-side": "no data: keep-most withholds people's records on one-to-many data, not "
                               "de-identified ones",
    "unlink-one-to-many-too-few": "k, deidentified: fewer de-identified elements than k on one-to-many data",
    "risk-one-to-many": "no data: pair probabilities are computed for one-to-one releases only",
    "unlink-side-undecided": "no data: which side withholds must be stated before unlinking",
    "unlink-identified-withholding": "locations, count: locations with more de-identified than identified records",
    "unlink-impossible": "k, violations: even withholding every de-identified record leaves violations",
    "store-read-only": "line, column: a statement needs write access (the console runs read-only)",
    "store-name-taken": "name: a release of that name with other content is in the store",
    "store-bulk-refused": "why, other: a bulk import was demanded but cannot run",
    "folder-key-missing": "side, columns: a folder release's table needs its key column named",
    "output-refused": "option, problem (what is wrong with the path): an output path that names a folder, an "
                      "input, or no file",
    "input-refused": "file: an input path that is no regular file (a FIFO, a device, a socket, a folder)",
}


@dataclass(frozen=True)
class Diagnostic:
    """A refusal, warning or note: a stable ``code``, the library's plain ``message`` and the facts as ``data``.

    ``str()`` is the library's own sentence (``message``, then ``remedy`` if any): plain words that name no
    command-line flag.  The edges render ``code`` and ``data`` in their own words
    (:func:`graphlink.cli.words.say`, ``app.components.words.say``).

    Parameters
    ----------
    code : str
        One of :data:`CODES`.
    message : str
        What is wrong, as one plain sentence.
    data : Mapping
        The facts: sides, element keys (the first few), locations, counts.
    remedy : str
        What would settle it, in the library's terms (a parameter of the Python API, never a flag).

    Examples
    --------
    >>> d = Diagnostic("side-undecided", "cannot tell which side is reserved",
    ...                {"n_identified": 3, "n_deidentified": 2}, remedy="state the reserved side")
    >>> str(d)
    'cannot tell which side is reserved; state the reserved side'
    >>> d.as_dict()["data"]["n_deidentified"]
    2
    """

    code: str
    message: str
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)
    remedy: str = ""

    def __str__(self) -> str:
        return f"{self.message}; {self.remedy}" if self.remedy else self.message

    def as_dict(self) -> dict:
        """code, message, remedy and data as plain JSON-able values (tuples become lists)."""
        return {"code": self.code, "message": self.message, "remedy": self.remedy, "data": _plain(self.data)}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):      # NumPy scalars
        return value.item()
    return value


def warn(diagnostic: Diagnostic, category: type[Warning], stacklevel: int = 2) -> None:
    """Issue ``category`` with the diagnostic's sentence and the diagnostic on it (``warning.diagnostic``), so an
    edge that catches it can word it for its users."""
    w = category(str(diagnostic))
    w.diagnostic = diagnostic            # type: ignore[attr-defined]
    warnings.warn(w, stacklevel=stacklevel + 1)


def of(obj: object) -> Diagnostic | None:
    """The diagnostic an error, a warning (or its message) or a result carries, else None."""
    if isinstance(obj, Diagnostic):
        return obj
    d = getattr(obj, "diagnostic", None)
    if isinstance(d, Diagnostic):
        return d
    msg = getattr(obj, "message", None)           # warnings.WarningMessage
    return getattr(msg, "diagnostic", None) if msg is not None else None


def render(obj: Any, remedies: Mapping[str, Callable[[dict], str]],
           lines: Mapping[str, Callable[[dict, str], str]] | None = None) -> str:
    """An error's, a warning's or a diagnostic's text for one edge: the library's sentence with its remedy said by
    ``remedies[code](data)`` after the diagnostic's ``message`` (an empty string drops the library's remedy; the
    error's text is never cut apart), or the whole line said by the edge,
    ``lines[code](data, where)``, from the code and the data alone (``where``: the file, row and column of a
    :class:`~graphlink.errors.ReleaseError` as the start of a line, ``"r.csv, row 3: "``, else ``""``), so a
    reworded library sentence cannot change what the edge says.  Anything without a diagnostic, or with a code
    the edge does not word: ``str(obj)``.  The CLI and the app pass their own tables (:mod:`graphlink.cli.words`,
    ``app/components/words.py``).

    Examples
    --------
    >>> d = Diagnostic("side-undecided", "cannot tell which side is reserved", remedy="state the reserved side")
    >>> render(d, {"side-undecided": lambda data: "pick one"})
    'cannot tell which side is reserved; pick one'
    """
    d = of(obj)
    plain = isinstance(obj, Diagnostic | Exception) or not hasattr(obj, "message")
    text = str(obj if plain else obj.message)         # warnings.WarningMessage: its warning
    if d is None:
        return text
    data = dict(d.data)
    where = getattr(obj, "where", "")
    where = f"{where}: " if isinstance(where, str) and where else ""
    if lines and d.code in lines:
        return lines[d.code](data, where)
    if d.code not in remedies or text != where + str(d):
        return text      # not this edge's code, or a sentence of the error's own that the edge leaves whole
    remedy = remedies[d.code](data)
    return f"{where}{d.message}; {remedy}" if remedy else where + d.message


def first(keys: Any, show: int = 5) -> str:
    """The first ``show`` keys, comma-separated, with an ellipsis when there are more."""
    keys = [str(k) for k in keys]
    return ", ".join(keys[:show]) + (", …" if len(keys) > show else "")
