"""Learned transformer programs (Friedman, Wettig & Chen 2023): discrete transformers trained
on the RASP tasks, decompiled into readable Python and verified to equal the model."""

from rasplab.learned.config import LearnConfig, config_from_dict
from rasplab.learned.learn import build, learn

__all__ = ["LearnConfig", "build", "config_from_dict", "learn"]
