"""The options and arguments several commands share, and the enums behind their choices: defined once here.

A command module declares its own options only where no other command has the same one.  Each choice list is
written once: the variants without ``auto`` (``advise --multiplicity``, ``simulate --reserved``) are derived from
the same tuples as those with it.  Nothing heavy is imported (``graphlink --help`` stays fast;
tests/cli/test_cold_start.py).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

#: the sides a location may withhold records of (:mod:`graphlink.core.model`)
RESERVED_SIDES: tuple[str, ...] = ("deidentified", "identified", "none")
#: how many identified people a de-identified element may belong to (:mod:`graphlink.core.model`)
MULTIPLICITIES: tuple[str, ...] = ("one-to-one", "one-to-many")


def _choices(name: str, values: tuple[str, ...]) -> Any:
    """A StrEnum whose members are ``values`` (a hyphen in a value is an underscore in its member's name)."""
    return StrEnum(name, {v.replace("-", "_"): v for v in values})


#: ``--reserved``: a side, or auto (decided from the release)
ReservedOpt = _choices("ReservedOpt", ("auto", *RESERVED_SIDES))
#: ``--multiplicity``: a multiplicity, or auto (decided from the release)
MultOpt = _choices("MultOpt", ("auto", *MULTIPLICITIES))
#: ``advise --multiplicity``: a multiplicity (absent: detected from the release, else one-to-one)
Mult = _choices("Mult", MULTIPLICITIES)
#: ``simulate --reserved``: the side the simulated locations withhold
SimReserved = _choices("SimReserved", RESERVED_SIDES)
#: ``--format`` of commands that print rows
Fmt = _choices("Fmt", ("table", "csv", "json"))
#: ``--store``: where a result is written besides the terminal
StoreOpt = _choices("StoreOpt", ("none", "neo4j"))
#: ``--engine``: the engine that runs the analysis (:mod:`graphlink.engines`)
EngineOpt = _choices("EngineOpt", ("local", "spark"))

ReleaseArg = Annotated[Path, typer.Argument(help="Release: long CSV/Parquet (location,kind,element) or a folder "
                                                   "with one sub-folder per location")]
ReservedO = Annotated[ReservedOpt, typer.Option("--reserved", help="Which side may withhold records")]
MultO = Annotated[MultOpt, typer.Option("--multiplicity", help="one-to-one, or one-to-many (several identified "
                                        "people per de-identified element, e.g. households); auto decides")]
IdKey = Annotated[str | None, typer.Option("--id-key", help="Folder input: identified key column(s), comma-separated")]
DeidKey = Annotated[str | None, typer.Option("--deid-key", help="Folder input: de-identified key column(s)")]
EngineO = Annotated[EngineOpt, typer.Option("--engine", help="local (this machine) or spark (Apache Spark: "
                                            "pip install 'graphlink\\[spark]'; paths or any URI Spark reads)")]
MasterO = Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark "
                                             "(default: SPARK_MASTER, else local[*])")]
ExplainO = Annotated[bool, typer.Option("--explain", help="Also say how the data model was decided, in the "
                                        "thesis's notation")]
QiLinks = Annotated[Path | None, typer.Option(
    "--qi-links", help="Attribute linkage set (YAML, docs/algorithms.md): an edge also needs agreeing "
                       "quasi-identifiers (e.g. DOB ↔ year of birth); attributes from the release's extra columns "
                       "or the files the ALS names")]


def group(help: str) -> typer.Typer:
    """A command group (``graphlink qi``, ``fingerprint``, ``neo4j``): its help, and the help when called bare."""
    return typer.Typer(help=help, no_args_is_help=True, add_completion=False)
