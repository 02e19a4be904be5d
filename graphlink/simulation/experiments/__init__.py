"""Simulation experiments. Each module registers its runners with ``graphlink.simulation.experiments.registry``."""
