"""``rasplab version``: print rasplab's version."""

from __future__ import annotations

from rasplab import __version__


def version_command() -> None:
    """Print rasplab's version."""
    print(__version__)
