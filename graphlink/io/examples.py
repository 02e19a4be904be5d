"""Bundled example releases (the thesis's worked examples), for docs, notebooks, tests and the app."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"      # graphlink/data, the package data


def thesis_example():
    """The four-hospital example of Malin (2006), Figure 3.4, with its ground truth.

    Four hospitals release identified names and de-identified DNA; H1 and H4 withhold one DNA sample each, so
    the release is de-identified reserved and one-to-one (the data model graphlink decides, with its reason).

    Returns
    -------
    graphlink.core.release.Release
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
    from graphlink.core.release import read_release

    return read_release(DATA / "thesis_fig3_4.csv", name="thesis_fig3_4", truth=DATA / "thesis_fig3_4_truth.csv")


#: The genotype–phenotype attribute linkage set of the worked example (thesis App. B.2): <Birthdate, Age>,
#: <Gender, Gender>, <Visit date, Visit date>.
GENPHEN_ALS = DATA / "genphen" / "als.yaml"


def genphen_example():
    """Genotype–phenotype linkage (thesis App. B.2, GENPHEN, with the trails of Figure B.3): nine patients at three
    hospitals, each release carrying quasi-identifiers (identified: birthdate, gender, visit date; genomic: age,
    gender, visit date).  Trails alone single out 3 people, the ALS :data:`GENPHEN_ALS` alone 7, together all 9.

    Returns
    -------
    graphlink.core.release.Release
        With ``truth``; the attribute columns stay in the CSV (``graphlink.qi.als.element_attributes`` reads them).

    Examples
    --------
    >>> import graphlink as gl
    >>> from graphlink.qi.als import read_als, release_blocks
    >>> from graphlink.io.examples import GENPHEN_ALS, genphen_example
    >>> rel = genphen_example()
    >>> tr = gl.build_trails(rel)
    >>> len(gl.reidentify(tr, "true-loves"))
    3
    >>> blocks = release_blocks(read_als(GENPHEN_ALS), tr.identified.keys, tr.deidentified.keys, rel.source)
    >>> len(gl.reidentify(gl.build_linkgraph(tr, blocks=blocks), "true-loves"))
    9
    """
    from graphlink.core.release import read_release

    return read_release(DATA / "genphen" / "release.csv", name="genphen", truth=DATA / "genphen" / "truth.csv")
