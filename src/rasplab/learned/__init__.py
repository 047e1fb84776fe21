"""Learned transformer programs (Friedman, Wettig & Chen 2023): discrete transformers trained
on the RASP tasks, decompiled into readable Python and verified to equal the model."""

from rasplab.learned.config import LearnConfig, config_from_dict
from rasplab.learned.decompile import LearnedProgram, load_learned_program
from rasplab.learned.learn import build, learn

__all__ = [
    "LearnConfig",
    "LearnedProgram",
    "build",
    "config_from_dict",
    "learn",
    "load_learned_program",
]
