"""FillTrails (thesis Alg. 1) with the equality reading, reserved-direction detection, bit packing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphlink.core.release import read_release
from graphlink.core.trails import build_trails, pack_columns, unpack
from graphlink.errors import ModelAssumptionError
from tests.fixtures import fig34, long_frame


def test_fig34_trails_equality_rule() -> None:
    tr = build_trails(read_release(fig34()))
    assert tr.reserved == "deidentified"
    M = tr.frame("identified")
    assert M.loc["Ali"].tolist() == list("1110")
    assert M.loc["Dan"].tolist() == list("0111")
    N = tr.frame("deidentified")
    # H1 and H4 withhold (|ω| < |γ|) -> '*'; H2 and H3 have equal sizes -> absence means 0.
    assert "".join(N.loc["actg"]) == "111*"
    assert "".join(N.loc["gatc"]) == "*11*"
    # Figure 3.5 prints tgac = 1*11 and ctga = *1*1; the equality rule gives 0 at the equal-size
    # locations H2/H3 — the decision documented in graphlink.core.trails.
    assert "".join(N.loc["tgac"]) == "1011"
    assert "".join(N.loc["ctga"]) == "*101"


def test_geq_reading_would_remove_every_star() -> None:
    """Why Algorithm 1's printed `|γ_c| ≥ |ω_c|` cannot be meant: in a reserved release every location has
    |γ_c| ≥ |ω_c|, so that test writes 0 everywhere and the reserved matrix has no '*' at all."""
    sizes = read_release(fig34()).sizes()
    assert (sizes["identified"] >= sizes["deidentified"]).all()
    tr = build_trails(read_release(fig34()))
    assert tr.deidentified.has_star().sum() == 3       # actg, ctga, gatc keep their '*'


def test_auto_directions_and_diagnostic() -> None:
    unres = long_frame({"A": ["x", "y"]}, {"A": ["1", "2"]})
    assert build_trails(read_release(unres)).reserved == "none"
    idres = long_frame({"A": ["x"], "B": ["x", "y"]}, {"A": ["1", "2"], "B": ["1", "2"]})
    tr = build_trails(read_release(idres))
    # identified withholding with |N| >= |M|: one-to-one and one-to-many (unreleased members) both fit; the
    # one-to-many reading is the one whose certain pairs hold under both
    assert (tr.reserved, tr.multiplicity) == ("identified", "one-to-many")
    assert "state the multiplicity as one-to-one" in tr.reason
    assert build_trails(read_release(idres), multiplicity="one-to-one").multiplicity == "one-to-one"
    # mixed sizes that households explain (y and x both behind element 1; element 2's members unreleased)
    households = long_frame({"A": ["x"], "B": ["x", "y"]}, {"A": ["1", "2"], "B": ["1"]})
    tr = build_trails(read_release(households))
    assert (tr.reserved, tr.multiplicity, tr.decided_by) == ("identified", "one-to-many", "links")
    # mixed sizes no model explains: y = {B, C} is inside no de-identified trail ({A, B}, {A, C})
    mixed = long_frame({"A": ["x"], "B": ["x", "y"], "C": ["y"]}, {"A": ["1", "2"], "B": ["1"], "C": ["2"]})
    with pytest.raises(ModelAssumptionError) as exc:
        build_trails(read_release(mixed))
    msg = str(exc.value)
    assert "A (1 identified, 2 de-identified records)" in msg and "B (2 identified, 1 de-identified records)" in msg
    assert "state the reserved side" in msg and "1 identified trail(s) (y)" in msg
    d = exc.value.diagnostic
    assert d.code == "mixed-sizes" and d.data["first"] == ["y"] and d.data["more_deidentified"] == ["A"]


def test_explicit_reserved_is_kept_with_warning() -> None:
    rel = read_release(long_frame({"A": ["x"], "B": ["x", "y"]}, {"A": ["1", "2"], "B": ["1", "2"]}))
    with pytest.warns(UserWarning, match="as requested, although"):
        tr = build_trails(rel, "deidentified")
    assert tr.reserved == "deidentified"


def test_identified_reserved_side_gets_stars() -> None:
    rel = read_release(long_frame({"A": ["x"], "B": ["x", "y"]}, {"A": ["1", "2"], "B": ["1", "2"]}))
    tr = build_trails(rel)
    assert "".join(tr.frame("identified").loc["y"]) == "*1"      # y absent at A, where |γ| < |ω|
    assert "".join(tr.frame("deidentified").loc["2"]) == "11"


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 20), st.integers(1, 150), st.integers(0, 2**31))
def test_pack_unpack_roundtrip(n: int, c: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    X = rng.random((n, c)) < 0.4
    r, col = np.nonzero(X)
    packed = pack_columns(r, col, n, c)
    assert packed.shape == (n, (c + 63) // 64)
    assert np.array_equal(unpack(packed, c), X)


def test_dense_matches_release_definition() -> None:
    """Random reserved releases: trail values follow Definition 12 + FillTrails cell by cell."""
    rng = np.random.default_rng(3)
    subjects, locs = 30, 6
    visits = rng.random((subjects, locs)) < 0.5
    withheld = visits & (rng.random((subjects, locs)) < 0.3)
    withheld[:, 0] = False                       # location L0 withholds nothing -> equal sizes there
    rows = []
    for s in range(subjects):
        for c in range(locs):
            if visits[s, c]:
                rows.append((f"L{c}", "identified", f"p{s}"))
                if not withheld[s, c]:
                    rows.append((f"L{c}", "deidentified", f"s{s}"))
    rel = read_release(pd.DataFrame(rows, columns=["location", "kind", "element"]))
    tr = build_trails(rel)
    dense = tr.deidentified.dense()
    sizes = rel.sizes()
    for j, key in enumerate(tr.deidentified.keys):
        s = int(key[1:])
        for c, loc in enumerate(tr.locations):
            ci = int(loc[1:])
            if visits[s, ci] and not withheld[s, ci]:
                assert dense[j, c] == 1
            elif sizes.loc[loc, "identified"] == sizes.loc[loc, "deidentified"]:
                assert dense[j, c] == 0
            else:
                assert dense[j, c] == -1


def test_location_stats_and_bound() -> None:
    from graphlink.core.trails import location_stats, reidentification_bound

    tr = build_trails(read_release(fig34()))
    stats = location_stats(tr)
    assert stats["popularity"].tolist() == [0.75, 0.75, 0.75, 0.75]
    assert abs(stats["entropy (bits)"].iloc[0] - 0.8112781) < 1e-6         # H(0.75)
    assert reidentification_bound(tr) == 4                                 # min(4 people, 2^4 - 1)


def test_overview_is_typed_frozen_and_matches_the_pandas_summary() -> None:
    """The engines' trails summary: frozen typed data whose JSON is exactly the notebook summary's."""
    import dataclasses

    from graphlink.io.examples import thesis_example
    from graphlink.io.trails import TrailOverview, overview, summarize

    tr = build_trails(thesis_example())
    o = overview(tr, top=2, preview=3)
    assert isinstance(o, TrailOverview)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.reserved = "none"  # type: ignore[misc]
    assert o.to_dict() == summarize(tr, top=2, preview=3).to_dict()
    assert TrailOverview.from_dict(o.to_dict()) == o
    # against the matrices themselves: counts per side, per location, and the most common trail
    for name in ("identified", "deidentified"):
        side, got = getattr(tr, name), o.side(name)
        strings = [side.trail_str(i) for i in range(len(side))]
        assert got.elements == len(side) and got.distinct == len(set(strings))
        assert [c.count for c in got.common] == sorted((strings.count(t) for t in set(strings)), reverse=True)[:2]
        assert [(r.element, r.trail) for r in got.preview] == [(str(side.keys[i]), strings[i]) for i in range(3)]
    assert [c.location for c in o.sizes] == list(tr.locations)
