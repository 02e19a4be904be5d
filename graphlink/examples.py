"""Bundled example releases (the thesis's worked examples), for docs, notebooks, tests and the app."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def thesis_example():
    """The four-hospital example of Malin (2006), Figure 3.4, with its ground truth.

    Four hospitals release identified names and de-identified DNA; H1 and H4 withhold one DNA sample each, so
    the release is de-identified reserved and one-to-one (the data model graphlink decides, with its reason).

    Returns
    -------
    graphlink.release.Release
        12 identified and 10 de-identified disclosures at H1..H4; ``truth`` pairs Ali↔actg, Charlie↔tgac,
        Dan↔gatc and Bob↔ctga.

    Examples
    --------
    >>> import graphlink as gl
    >>> release = gl.thesis_example()
    >>> release.locations
    ['H1', 'H2', 'H3', 'H4']
    >>> release.sizes()["deidentified"].tolist()
    [2, 3, 3, 2]
    """
    from graphlink.release import read_release

    return read_release(DATA / "thesis_fig3_4.csv", name="thesis_fig3_4", truth=DATA / "thesis_fig3_4_truth.csv")
