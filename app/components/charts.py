"""Colour-blind-safe palette (Okabe & Ito 2008) and small Altair helpers shared by the pages."""

from __future__ import annotations

from typing import Any

import altair as alt

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "grey": "#999999",
}
#: ordered colours for categorical charts
CATEGORICAL = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky", "yellow",
                                      "black")]


def kind_scale() -> alt.Scale:
    return alt.Scale(domain=["identified", "de-identified"], range=[OKABE_ITO["blue"], OKABE_ITO["orange"]])


def category_scale(domain: list[str]) -> alt.Scale:
    return alt.Scale(domain=domain, range=CATEGORICAL[: len(domain)])


#: trail cell values: 1 present, 0 absent, * ambiguous (withheld / unknown)
TRAIL_DOMAIN = ["1 (present)", "0 (absent)", "* (ambiguous)"]
TRAIL_RANGE = [OKABE_ITO["blue"], "#F2F2F2", OKABE_ITO["orange"]]


def candidate_histogram(hist: Any) -> alt.Chart:
    """People by number of candidate records (columns ``candidates``, ``people``, in order): the bar of one
    candidate (certain re-identification) in vermillion, the others in blue, each bar labelled with its count,
    on a square-root scale, so a handful of certain people shows beside thousands with many candidates."""
    order = list(hist["candidates"])
    colour = alt.condition(alt.datum.candidates == "1", alt.value(OKABE_ITO["vermillion"]),
                           alt.value(OKABE_ITO["blue"]))
    base = alt.Chart(hist).encode(
        x=alt.X("candidates:N", sort=order, title="candidate records (1 = certain)", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("people:Q", title="people (square-root scale)", scale=alt.Scale(type="sqrt")),
        tooltip=["candidates", alt.Tooltip("people:Q", format=",")])
    bars = base.mark_bar().encode(color=colour)
    labels = base.mark_text(dy=-7, fontSize=12).encode(text=alt.Text("people:Q", format=","))
    return (bars + labels).properties(height=280)


def merge_equal_series(long: Any, keys: list[str]) -> Any:
    """``long`` (columns ``series``, ``value`` and ``keys``) with series whose values are equal at every point
    drawn as one line under one legend entry ("A = B"): otherwise one line hides the other exactly and the legend
    names a line nobody can see.  O(points log points).

    Examples
    --------
    >>> import pandas as pd
    >>> long = pd.DataFrame({"x": [1, 2] * 3, "value": [1, 2, 1, 2, 3, 4], "series": list("aabbcc")})
    >>> sorted(merge_equal_series(long, ["x"])["series"].unique())
    ['a = b', 'c']
    """
    profile = {name: tuple(g.sort_values(keys)[[*keys, "value"]].round(9).itertuples(index=False, name=None))
               for name, g in long.groupby("series", sort=False)}
    groups: dict[tuple, list[str]] = {}
    for name, values in profile.items():
        groups.setdefault(values, []).append(name)
    rename = {name: " = ".join(names) for names in groups.values() for name in names}
    keep = {names[0] for names in groups.values()}
    out = long[long["series"].isin(keep)].copy()
    out["series"] = out["series"].map(rename)
    return out
