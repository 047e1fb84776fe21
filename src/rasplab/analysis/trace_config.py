"""The typed config of a trace-supervision experiment (ALTA App. C.1, Table 1), loaded from YAML.

One frozen dataclass holds the data (train and test bins, sample counts, seed), the learned
MLP (which part is learned: ``mlp``, :data:`MLP_VARIANTS`; hidden layers, width,
activation; ``numeric_scale``, the factor numerical variables are multiplied by in the
vectors the whole MLP reads and writes), the compiled attention it runs with
(``attention``, :data:`ATTENTION_VARIANTS`) and its optimisation (optimizer, learning rate,
batch, steps, input noise). The defaults are the CPU-scale setting; ``configs/trace_supervision/``
holds Table 1's paper-scale settings beside the CPU-scale ones.

>>> cfg = TraceConfig(steps=100, learning_rate="1e-3")
>>> (cfg.steps, cfg.learning_rate, cfg.noise_std, cfg.mlp, cfg.attention, cfg.numeric_scale)
(100, 0.001, 0.1, 'whole', 'tolerant', 1.0)
>>> TraceConfig(optimizer="sgd")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: trace.optimizer must be one of adam, adafactor; got 'sgd'
>>> TraceConfig(train_lengths="0-20", test_lengths="0-10")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: trace.test_lengths 0-10 must reach past the training lengths 0-20 (the test measures generalization beyond them)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name

OPTIMIZERS = ("adam", "adafactor")
ACTIVATIONS = ("relu", "gelu")
MLP_VARIANTS = ("whole", "written")
"""What is learned: ``whole``, the whole MLP sub-layer, input vector to output vector (ALTA
App. C.1, the default); ``written``, only the slots of the variables the rules write, with
bucket one-hots of numerical variables and the reset of head outputs kept compiled."""
ATTENTION_VARIANTS = ("tolerant", "exact")
"""The compiled attention the learned MLP runs with: ``tolerant`` (the default), categorical
heads whose selected position takes the whole weight, so small errors of the learned MLP on
query and key dims change nothing, as in ALTA's compiled attention; ``exact``, rasplab's
construction, where one selected position ties with the sink and an error of 0.001 on a query
or key dim moves the head's output (:mod:`rasplab.analysis.trace_attention`)."""


@dataclass(frozen=True)
class TraceConfig:
    """Data, learned-MLP shape and optimisation for :func:`trace_supervise` (CPU scale)."""

    train_lengths: str = "0-20"
    test_lengths: str = "0-40"
    train_samples: int = 2000
    test_samples: int = 2000
    hidden_layers: int = 2
    hidden_size: int = 128
    activation: str = "relu"
    optimizer: str = "adam"
    learning_rate: float = 1e-3
    batch_size: int = 256
    steps: int = 3000
    noise_std: float = 0.1
    seed: int = 0
    mlp: str = "whole"
    attention: str = "tolerant"
    numeric_scale: float = 1.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            want = {"int": int, "float": float, "str": str}[f.type]
            try:
                if want is int and (isinstance(value, bool) or float(value) != int(value)):
                    raise ValueError
                object.__setattr__(self, f.name, want(value))
            except (TypeError, ValueError, OverflowError):
                raise RasplabError(f"trace.{f.name} must be {f.type}; got {value!r}") from None
            if want is float and not math.isfinite(getattr(self, f.name)):
                raise RasplabError(f"trace.{f.name} must be a finite number; got {value!r}")
        for name in ("train_samples", "test_samples", "hidden_layers", "hidden_size"):
            if getattr(self, name) < 1:
                raise RasplabError(f"trace.{name} must be >= 1; got {getattr(self, name)}")
        for name in ("batch_size", "steps", "learning_rate", "numeric_scale"):
            if getattr(self, name) <= 0:
                raise RasplabError(f"trace.{name} must be > 0; got {getattr(self, name)}")
        if self.noise_std < 0 or self.seed < 0:
            raise RasplabError("trace.noise_std and trace.seed must be >= 0")
        for name, allowed in (
            ("optimizer", OPTIMIZERS),
            ("activation", ACTIVATIONS),
            ("mlp", MLP_VARIANTS),
            ("attention", ATTENTION_VARIANTS),
        ):
            if getattr(self, name) not in allowed:
                raise RasplabError(
                    f"trace.{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}"
                )
        train, test = Bin.parse(self.train_lengths), Bin.parse(self.test_lengths)
        if test.hi <= train.hi:
            raise RasplabError(
                f"trace.test_lengths {test} must reach past the training lengths {train} "
                "(the test measures generalization beyond them)"
            )
        object.__setattr__(self, "train_lengths", str(train))
        object.__setattr__(self, "test_lengths", str(test))

    @property
    def split(self) -> int:
        """The longest training length: test examples past it count as "length > split"."""
        return Bin.parse(self.train_lengths).hi

    def to_dict(self) -> dict:
        """Plain JSON data (the resolved config a run saves)."""
        return dataclasses.asdict(self)


def load_trace_config(path: str | Path | None, overrides: dict | None = None) -> TraceConfig:
    """The config from a YAML file of ``key: value`` lines (None: the defaults), then overrides.

    >>> load_trace_config(None, {"steps": 5}).steps
    5
    """
    data: dict = {}
    if path is not None:
        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as err:
            raise RasplabError(f"cannot read trace config {str(path)!r}: {err}") from None
        if data is None:  # an empty file silently meant the defaults
            raise RasplabError(
                f"trace config {str(path)!r} is empty; give key: value lines, or drop --config "
                "for the defaults"
            )
        if not isinstance(data, dict):
            raise RasplabError(f"trace config {str(path)!r} must be a mapping of key: value")
    data = {**data, **(overrides or {})}
    allowed = [f.name for f in dataclasses.fields(TraceConfig)]
    for key in data:
        if key not in allowed:
            raise unknown_name("trace config key", key, allowed)
    return TraceConfig(**data)
