"""Program -> transformer weights: layout, embeddings, attention, MLP, the torch module, runs."""

from rasplab.compiler.compile import DEFAULT_MAX_LENGTH, check_compilable, compile_program
from rasplab.compiler.hooked import to_transformer_lens
from rasplab.compiler.layout import INVALID, Layout, decode, decode_columns
from rasplab.compiler.model import CompiledTransformer
from rasplab.compiler.run import CompiledRun, run_compiled

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "INVALID",
    "CompiledRun",
    "CompiledTransformer",
    "Layout",
    "check_compilable",
    "compile_program",
    "decode",
    "decode_columns",
    "run_compiled",
    "to_transformer_lens",
]
