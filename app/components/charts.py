"""Colour-blind-safe palette (Okabe & Ito 2008) and small Altair helpers shared by the pages."""

from __future__ import annotations

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
    return alt.Scale(domain=["identified", "deidentified"], range=[OKABE_ITO["blue"], OKABE_ITO["orange"]])


def category_scale(domain: list[str]) -> alt.Scale:
    return alt.Scale(domain=domain, range=CATEGORICAL[: len(domain)])


#: trail cell values: 1 present, 0 absent, * ambiguous (withheld / unknown)
TRAIL_DOMAIN = ["1 (present)", "0 (absent)", "* (ambiguous)"]
TRAIL_RANGE = [OKABE_ITO["blue"], "#F2F2F2", OKABE_ITO["orange"]]
