"""How rasplab draws figures: matplotlib on its Agg backend, PNGs written in one step.

Every stage that draws (reports, the C-RASP table, analysis, learned programs) takes ``plt``
from here, lays out panels with :func:`panel_grid` and writes with :func:`save_figure` (or
:func:`png_bytes` when several files must be rendered before any is written), so that a
figure is never half-written and no window backend is ever needed.

>>> fig, axes = panel_grid(5)
>>> len(axes), fig.axes[5].get_visible()
(5, False)
>>> png_bytes(fig)[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

from rasplab.files import atomic_write_bytes  # noqa: E402

__all__ = ["panel_grid", "plt", "png_bytes", "save_figure"]


def png_bytes(fig, dpi: int = 110, tight: bool = True) -> bytes:
    """``fig`` rendered to PNG bytes (``tight``: cropped to what is drawn); the figure is
    closed."""
    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def save_figure(fig, path: str | Path, dpi: int = 110, tight: bool = True) -> None:
    """Render ``fig`` to PNG and write it to ``path`` atomically; close the figure."""
    atomic_write_bytes(Path(path), png_bytes(fig, dpi, tight))


def panel_grid(n: int, width: float = 3.6, height: float = 2.8):
    """A figure with ``n`` panels in rows of at most four; returns (figure, flat axes list),
    the unused panels of the last row hidden."""
    cols = min(4, max(1, n))
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]
