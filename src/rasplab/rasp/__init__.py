"""RASP as Tracr users write it: the language, Tracr's library, and an exact compiler.

Port a Tracr program by changing its imports::

    from rasplab.rasp import rasp        # was: from tracr.rasp import rasp
    from rasplab.rasp import lib         # was: from tracr.compiler import lib
    from rasplab.rasp import compiling   # was: from tracr.compiler import compiling

``rasp`` and ``lib`` know no weights; ``compiling`` (Tracr's import path for
:mod:`rasplab.rasp_compiler`, the one file here that reaches the compiler) builds a PyTorch
model whose every SOp equals the RASP evaluator at every position, or refuses naming the SOp
and why (``docs/rasp.md``).
"""
