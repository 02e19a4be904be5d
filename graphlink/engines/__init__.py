"""Engines that run graphlink's analyses where one process does not suffice: :mod:`graphlink.engines.spark` (Apache
Spark; ``--engine spark``).  The local engine is the library itself (:mod:`graphlink.core`,
:mod:`graphlink.analysis`); an engine returns the same result objects.  Importing the package loads nothing.
"""
