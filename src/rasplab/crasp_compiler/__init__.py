"""C-RASP programs compiled to exact causal softmax transformers (the C-RASP compiler stage).

The language (:mod:`rasplab.crasp`) knows no weights; this stage turns a validated
:class:`~rasplab.crasp.ir.Program` into a :class:`~rasplab.crasp_compiler.model.CraspTransformer`
(:func:`compile_program`: plan, precision budget, weights), saves and loads it
(:mod:`rasplab.crasp_compiler.export`) and checks it against the interpreter
(:mod:`rasplab.crasp_compiler.verify`).

>>> from rasplab.crasp.library import program
>>> model_stats(compile_program(program("tomita1"), max_length=16))["dtype"]
'float32'
"""

from rasplab.crasp_compiler.compile import DEFAULT_MAX_LENGTH, compile_program, model_stats
from rasplab.crasp_compiler.model import CraspTransformer

__all__ = ["DEFAULT_MAX_LENGTH", "CraspTransformer", "compile_program", "model_stats"]
