"""Repository-wide pytest set-up: doctests that need an optional extra are skipped without it."""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("transformer_lens") is None:  # the interp extra
    collect_ignore.append("src/rasplab/compiler/hooked.py")
