"""Engines that run graphlink's analyses: ``local`` (the library itself, this process:
:class:`graphlink.engines.local.LocalEngine`) and ``spark`` (Apache Spark, for releases that outgrow one process:
:mod:`graphlink.engines.spark`).  Both implement one interface, :class:`graphlink.engines.protocol.Engine`, and
return the same result objects; :func:`get` picks one by name.  Importing the package loads nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlink.engines.protocol import Engine

#: the engines :func:`get` knows, by the name ``--engine`` takes: the class, imported when asked for
CLASSES = {"local": "graphlink.engines.local:LocalEngine", "spark": "graphlink.engines.spark.backend:SparkEngine"}
NAMES = tuple(CLASSES)


def get(name: str = "local", *, master: str | None = None) -> Engine:
    """The engine called ``name``.

    Parameters
    ----------
    name : {"local", "spark"}
        ``local`` runs in this process; ``spark`` on Apache Spark (``pip install 'graphlink[spark]'``, Java 17).
    master : str, optional
        Spark master URL (``spark`` only; default ``SPARK_MASTER``, else ``local[*]``).

    Returns
    -------
    Engine
        An object implementing :class:`graphlink.engines.protocol.Engine`.  Nothing starts until its first call.

    Examples
    --------
    >>> from graphlink import engines
    >>> engines.get("local").name
    'local'
    """
    from graphlink.registry import resolve

    if name not in CLASSES:
        raise ValueError(f"engine must be one of {', '.join(NAMES)}, got {name!r}")
    cls = resolve(CLASSES[name])
    return cls(master) if getattr(cls, "takes_master", False) else cls()
