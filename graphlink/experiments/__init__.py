"""Simulation experiments. Each module registers its runners with ``graphlink.experiments.registry``."""
