"""Thesis worked examples as small releases / dense trail matrices (shared by the core tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd

# Figure 3.4: identified (Ψ) and de-identified (Δ) databases of four hospitals.
FIG34_IDENTIFIED = {"H1": ["Ali", "Bob", "Charlie"], "H2": ["Ali", "Bob", "Dan"],
                    "H3": ["Ali", "Charlie", "Dan"], "H4": ["Bob", "Charlie", "Dan"]}
FIG34_DEIDENTIFIED = {"H1": ["actg", "tgac"], "H2": ["actg", "ctga", "gatc"],
                      "H3": ["actg", "tgac", "gatc"], "H4": ["ctga", "tgac"]}
FIG34_TRUTH = pd.DataFrame({"identified": ["Ali", "Charlie", "Dan", "Bob"],
                            "deidentified": ["actg", "tgac", "gatc", "ctga"]})


def long_frame(identified: dict[str, list[str]], deidentified: dict[str, list[str]]) -> pd.DataFrame:
    rows = [(loc, "identified", e) for loc, es in identified.items() for e in es]
    rows += [(loc, "deidentified", e) for loc, es in deidentified.items() for e in es]
    return pd.DataFrame(rows, columns=["location", "kind", "element"])


def fig34() -> pd.DataFrame:
    return long_frame(FIG34_IDENTIFIED, FIG34_DEIDENTIFIED)


S = -1  # '*'
# Figure 7.1: identified trails X_Ψ (Ali, Bob, Charlie, Dan) over H1..H4
FIG71_X = np.array([[1, 1, 1, 0], [1, 1, 0, 1], [1, 0, 1, 1], [0, 1, 1, 1]])
FIG71A_Y = FIG71_X.copy()                                   # (a) unreserved, identical
FIG71B_Y = np.array([[1, 1, S, S], [1, S, S, 1], [S, S, 1, 1], [S, 1, 1, S]])  # (b) after suppression
FIG71B_U = {("Ali", "actg"), ("Bob", "actg"), ("Bob", "ctga"), ("Charlie", "ctga"), ("Charlie", "tgac"),
            ("Dan", "tgac"), ("Ali", "gatc"), ("Dan", "gatc")}
NAMES = ["Ali", "Bob", "Charlie", "Dan"]
DNA = ["actg", "ctga", "tgac", "gatc"]
# Figure 8.4(a): link matrix L_YX of the sTTP's suppressed release (rows actg, ctga, tgac, gatc)
FIG84_L = np.array([[1, 1, 1, 0], [0, 1, 1, 1], [1, 0, 1, 1], [0, 1, 1, 1]])
# one de-identified trail matrix realising that link matrix by suppression of Figure 8.2
FIG83_Y = np.array([[1, S, S, S], [S, S, S, 1], [S, S, 1, S], [S, S, S, 1]])

# the worked example of docs/algorithms.md#a-five-location-example
A14_M = np.array([[1, 1, 0, 0, 0], [1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0, 1, 1, 0, 0],
                  [0, 1, 1, 1, 0]])
A14_N = np.array([[1, S, S, 0, 0], [1, S, S, 0, S], [1, S, S, S, 0], [0, 1, 1, S, S]])
