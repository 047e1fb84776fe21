"""``rasplab version``: print rasplab's version."""

from __future__ import annotations


def version_command() -> None:
    """Print rasplab's version."""
    from rasplab import __version__

    print(__version__)
