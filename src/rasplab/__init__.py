"""rasplab: a laboratory for what transformers can and cannot compute.

Four stages share one package: write programs (``lang``, ``programs``, ``compiler``),
benchmark them (``tasks``), train models (``models``, ``harness``) and explain results
(``analysis``, ``reports``). See the README and ``docs/``.
"""

from rasplab.errors import RasplabError

__version__ = "0.1.0"
__all__ = ["RasplabError", "__version__"]
