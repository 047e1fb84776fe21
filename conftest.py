"""Repository-wide pytest set-up: doctests that need an optional extra are skipped without it,
and deprecated alias modules (which replace themselves in ``sys.modules``) are not collected."""

import importlib.util
from pathlib import Path

collect_ignore = []
if importlib.util.find_spec("transformer_lens") is None:  # the interp extra
    collect_ignore.append("src/rasplab/compiler/hooked.py")

# Deprecated aliases: each file's docstring starts "Deprecated alias of"; collecting one for
# doctests would import the moved module under the alias's path.
for path in sorted(Path(__file__).parent.glob("src/rasplab/**/*.py")):
    with path.open(encoding="utf-8") as f:
        if f.readline().startswith('"""Deprecated alias of'):
            collect_ignore.append(str(path.relative_to(Path(__file__).parent)))
