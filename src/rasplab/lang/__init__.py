"""The program language: variables, attention heads, MLP rules, programs and interpreters."""

from rasplab.lang.heads import HeadSpec, qkv, v_relative
from rasplab.lang.inputs import InputSpec
from rasplab.lang.interpreter import BatchRun, interpret
from rasplab.lang.program import Halt, Program, builder, program
from rasplab.lang.rules import MLPBuilder, Rule, UnusedHeadReadWarning, rules_from_function
from rasplab.lang.variables import Var, input_var, numeric_var, position_var, set_var, var

__all__ = [
    "BatchRun",
    "Halt",
    "HeadSpec",
    "InputSpec",
    "MLPBuilder",
    "Program",
    "Rule",
    "UnusedHeadReadWarning",
    "Var",
    "builder",
    "input_var",
    "interpret",
    "numeric_var",
    "position_var",
    "program",
    "qkv",
    "rules_from_function",
    "set_var",
    "v_relative",
    "var",
]
