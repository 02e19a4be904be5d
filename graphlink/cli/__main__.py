"""``python -m graphlink.cli``: the same entry as the ``graphlink`` console script."""

from graphlink.cli import run

run()
