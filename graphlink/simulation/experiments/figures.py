"""The experiments' one way to make, label and save a figure (thesis ch. 5 and 9 reproductions).

Every figure is a :class:`matplotlib.figure.Figure` built with the object API, never pyplot: no global state,
so drawing is safe in worker processes, threads and the Streamlit app and needs no backend switch.
matplotlib is imported when the first figure is made, so loading the experiment registry stays light.
Each helper is O(1) apart from the drawing itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlink.errors import require
from graphlink.fileio import save_figure

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def figure(nrows: int = 1, ncols: int = 1, *, size: tuple[float, float], dpi: int = 90,
           **subplots: Any) -> tuple[Figure, np.ndarray]:
    """A new figure and its axes as an ``nrows × ncols`` array (``sharex``, ``sharey``, ``gridspec_kw`` pass
    through to :meth:`~matplotlib.figure.Figure.subplots`)."""
    Figure = require("matplotlib.figure", "plot", "the experiments' figures").Figure

    fig = Figure(figsize=size, dpi=dpi)
    return fig, fig.subplots(nrows, ncols, squeeze=False, **subplots)


def label(ax: Axes, *, title: str | None = None, xlabel: str | None = None, ylabel: str | None = None,
          legend: bool = False, legend_size: float | None = 8, title_size: float | None = None) -> None:
    """Title and axis labels where given, the light grid every experiment draws, and a legend if asked
    (``legend_size=None``: matplotlib's default size)."""
    if title is not None:
        # fontsize=None would not mean "default": it would replace the title's own default size
        ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=legend_size)


def mean_sd(ax: Axes, x: Any, mean: Any, sd: Any, **style: Any) -> None:
    """Means with ±1 sd error bars, in the experiments' common style (round markers, small caps)."""
    ax.errorbar(x, mean, yerr=sd, **{"marker": "o", "ms": 3, "capsize": 2, **style})


def save(fig: Figure, path: Path, *, suptitle: str | None = None, suptitle_size: float | None = None,
         rect: tuple[float, float, float, float] | None = None) -> Path:
    """Add the overall title, lay the panels out tightly (within ``rect`` if given) and write ``path``."""
    if suptitle is not None:
        fig.suptitle(suptitle, **({} if suptitle_size is None else {"fontsize": suptitle_size}))
    fig.tight_layout(rect=rect)
    save_figure(fig, path)
    return path
