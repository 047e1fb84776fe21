"""Tracr's import path for the RASP compiler: ``from rasplab.rasp import compiling``.

A Tracr user ports a program by changing ``from tracr.compiler import compiling`` to this
import; ``compiling.compile_rasp_to_model(program, vocab, max_seq_len, compiler_bos="BOS",
compiler_pad=None, causal=False)`` then works unchanged. The compiler itself lives in
:mod:`rasplab.rasp_compiler` (the language in ``rasp/`` knows no weights); this file holds no
code of its own, only the names re-exported from :mod:`rasplab.rasp_compiler.compile`, and is
the one file of ``rasp/`` on the compilers floor (``tests/test_layering.py`` says so and checks
that it stays a re-export).

>>> from rasplab.rasp import compiling, lib
>>> model = compiling.compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 4)
>>> model.apply(["BOS", "a", "b", "a"]).decoded
['BOS', 2, 1, 2]
"""

from rasplab.rasp_compiler.compile import (
    COMPILER_BOS,
    CompiledRasp,
    ModelConfig,
    Output,
    compile_rasp_to_model,
)

__all__ = ["COMPILER_BOS", "CompiledRasp", "ModelConfig", "Output", "compile_rasp_to_model"]
