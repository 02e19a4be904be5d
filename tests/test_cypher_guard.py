"""The static lock of the Cypher console (graphlink/store/guard.py), without a server.

Hostile queries are refused however they are spelt (case, whitespace, comments, backticks, Unicode spaces:
hypothesis rewrites them); the same text inside a string literal or a comment is harmless and passes; every query
of the project's own Cypher library passes in the mode it is meant for. The live-server half (plan check, READ
session, server settings) is tests/test_security_console.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.store.cypherlib import library
from graphlink.store.guard import QueryRefusedError, check, tokenize
from tests.hostile_cypher import ACCEPTED, ALWAYS_REFUSED, READ_ONLY_REFUSED


def _refusal(query: str, write: bool) -> str:
    with pytest.raises(QueryRefusedError) as err:
        check(query, write=write)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("refused")
    return msg


@pytest.mark.parametrize(("query", "needle"), ALWAYS_REFUSED)
@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_refused_in_every_mode(query: str, needle: str, write: bool) -> None:
    assert needle.lower() in _refusal(query, write).lower()


@pytest.mark.parametrize(("query", "needle"), READ_ONLY_REFUSED)
def test_refused_in_read_only_mode(query: str, needle: str) -> None:
    assert needle.lower() in _refusal(query, False).lower()
    check(query, write=True)


@pytest.mark.parametrize("query", ACCEPTED)
def test_ordinary_queries_pass(query: str) -> None:
    check(query, write=False)
    check(query, write=True)


def test_refusal_names_line_and_column() -> None:
    msg = _refusal("MATCH (n)\nWITH n\n   LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", False)
    assert msg.startswith("refused (line 3, column 4): LOAD CSV")


@pytest.mark.parametrize("query", ["RETURN 'open", 'RETURN "open', "RETURN `open", "MATCH (n) /* open"])
def test_unterminated_text_is_refused(query: str) -> None:
    assert "unterminated" in _refusal(query, True)


def test_library_passes_in_its_mode() -> None:
    """The project's own queries: read-only ones pass read-only; schema/load files (``schema``, ``qi_schema``,
    ``fingerprint_load``, …) pass with --write, and the schema files are refused read-only."""
    def role(stem: str) -> str | None:
        return next((w for w in ("schema", "load") if stem == w or stem.endswith("_" + w)), None)

    for cf in library():
        for stmt in cf.statements:
            check(stmt.text, write=True)
            if role(cf.path.stem) is None:
                check(stmt.text, write=False)
        if role(cf.path.stem) == "schema":
            with pytest.raises(QueryRefusedError):
                check(cf.statements[0].text, write=False)


def test_tokenizer_drops_comments_and_keeps_literals() -> None:
    toks = tokenize("MATCH (n) // c1\n/* c2 */ RETURN 'a // b' AS `x /* y */`, $p, $`q r`")
    assert [(t.kind, t.text) for t in toks if t.kind != "punct"] == [
        ("word", "MATCH"), ("word", "n"), ("word", "RETURN"), ("string", "a // b"), ("word", "AS"),
        ("quoted", "x /* y */"), ("param", "p"), ("param", "q r")]


# ---------------------------------------------------------------------------------------------- properties
SEPARATORS = st.lists(st.sampled_from([" ", "\n", "\t", "  ", "/* x */", "/**/", "// c\n", "// c\r", "// c\u2028",
                                       "\u00a0", "\u2003", "\u200b", "\u3000", "\r\n"]),
                      min_size=1, max_size=3).map("".join)


@st.composite
def disguised(draw: st.DrawFn, query: str) -> str:
    """``query`` with random letter case on its words and random whitespace/comments between its tokens."""
    out: list[str] = []
    for tok in tokenize(query):
        text = query[tok.pos:tok.end]
        if tok.kind == "word":
            flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
            text = "".join(c.upper() if f else c.lower() for c, f in zip(text, flips, strict=True))
        out += [draw(SEPARATORS) if out else "", text]
    return "".join(out)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), case=st.sampled_from(ALWAYS_REFUSED + READ_ONLY_REFUSED))
def test_disguised_hostile_queries_stay_refused(data: st.DataObject, case: tuple[str, str]) -> None:
    query = data.draw(disguised(case[0]))
    with pytest.raises(QueryRefusedError):
        check(query, write=False)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80), case=st.sampled_from(ALWAYS_REFUSED))
def test_hostile_text_inside_literals_and_comments_is_harmless(text: str, case: tuple[str, str]) -> None:
    payload = case[0] + text
    escaped = payload.replace("\\", "\\\\").replace("'", "\\'")
    check(f"RETURN '{escaped}' AS s", write=False)
    block = payload.replace("*/", "* /")
    check(f"MATCH (n) /* {block} */ RETURN count(n) AS c", write=False)
    line = "".join(" " if c in "\n\r\x0b\x0c\x85\u2028\u2029" else c for c in payload)
    check(f"MATCH (n) RETURN count(n) AS c // {line}", write=False)
