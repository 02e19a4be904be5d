"""Array kernels: the numba code of graphlink, on bit-packed trail words and integer arrays only.

Every module above this package (the core, the analyses) calls these kernels; nothing here imports them back, and
numba is imported here and nowhere else.  Importing the package loads nothing: :mod:`graphlink.kernels.rows` is
plain NumPy, so reading a small release and summarising its trails start without numba.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    """The names of the former module ``graphlink.kernels``, from their new modules, with a DeprecationWarning."""
    from graphlink._moved import kernel_name

    return kernel_name(name)
