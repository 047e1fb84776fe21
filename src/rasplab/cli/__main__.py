"""``python -m rasplab.cli ARGS``: the same as the ``rasplab`` console script."""

from rasplab.cli import main

main()
