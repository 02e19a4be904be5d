"""Synthetic releases with ground truth and the thesis's experiments on them.

:mod:`~graphlink.simulation.simulate` draws populations (uniform, Zipf, explicit probabilities, households) and
writes them with their truth; :mod:`~graphlink.simulation.theory` holds the closed forms the experiments are
compared with; :mod:`graphlink.simulation.experiments` runs the thesis's experiments (CLI and app share its
registry).  Importing the package loads nothing.
"""
