"""Array kernels: the numba code of graphlink, on bit-packed trail words and integer arrays only.

Every module above this package (the core, the analyses) calls these kernels; nothing here imports them back, and
numba is imported here and nowhere else.  Importing the package loads nothing: :mod:`graphlink.kernels.rows` is
plain NumPy, so reading a small release and summarising its trails start without numba.
"""

from __future__ import annotations
