"""Typed experiment configs: frozen dataclasses loaded from YAML with ``key.sub=value`` overrides.

An :class:`ExperimentConfig` composes the task name and options, a
:class:`~rasplab.models.ModelConfig`, a :class:`TrainConfig` and an :class:`EvalConfig`. Unknown
keys are rejected with the list of allowed keys; override values are parsed as YAML scalars.

>>> cfg = TrainConfig(steps=10, lr="1e-3")
>>> (cfg.steps, cfg.lr)
(10, 0.001)
>>> TrainConfig(schedule="step")
Traceback (most recent call last):
...
rasplab.errors.RasplabError: train.schedule must be one of constant, cosine, linear; got 'step'
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rasplab.bins import Bin
from rasplab.errors import RasplabError, unknown_name
from rasplab.files import atomic_write_text
from rasplab.models import ModelConfig
from rasplab.seeding import check_seed
from rasplab.tasks import task_names

SCHEDULES = ("constant", "cosine", "linear")
DECODINGS = ("teacher_forced", "greedy")
DEVICES = ("cpu", "cuda", "auto")
PARAM_GROUPS = ("single", "mup")


def _check_positive(section: str, name: str, value: float, allow_zero: bool = False) -> None:
    """Raise a RasplabError unless ``value`` is positive (or zero when allowed)."""
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise RasplabError(f"{section}.{name} must be {bound}; got {value!r}")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation: AdamW, warmup then cosine/linear/constant schedule, clipping, early stop.

    ``pack_tokens`` (default 0: one example per row, padded) packs training batches: each of
    the ``batch_size`` rows concatenates fresh examples, in order, up to ``pack_tokens`` tokens
    (the task's ``pack``; seed 000: "short examples are concatenated together"). Attention in a
    packed row is plain causal attention over the whole row (cross-example attention is not
    masked); the loss stays on each example's scored positions. Evaluation is unchanged.

    ``pe_penalty`` and ``weight_penalty`` (default 0: off) add seed 003's regularizer to the
    loss: the positional attention-product term (8) of its Definition 5 and the mean squared
    weights of its Appendix G.2 (:mod:`rasplab.harness.regularizer`).
    ``param_groups="mup"`` gives matrices (hidden layers and read-out) the learning rate
    ``lr / model.width`` and vectors (embeddings, position tables, biases, LayerNorms) ``lr``
    (μP for Adam; seed 004 Appendix B). ``stop_loss > 0`` stops the run at the first step
    whose training-batch loss is below it (online training "until the training loss crosses
    below 1e-5"; ``steps`` is the cap); the result records that step as ``loss_reached_step``.
    ``threads`` (default None) is how many CPU threads the run's torch computations use; None
    means the available cores divided among the runs training at once (at least 1; see
    :func:`~rasplab.harness.setup.run_threads`). It is an execution setting, not part of the
    experiment: it is left out of the run id, and the result records the count used.

    >>> TrainConfig(batch_size=128, pack_tokens=4096).pack_tokens
    4096
    >>> TrainConfig(pack_tokens=-1)
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: train.pack_tokens must be >= 0; got -1
    """

    steps: int = 1000
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    warmup_steps: int = 0
    schedule: str = "cosine"
    min_lr_ratio: float = 0.0
    grad_clip: float = 1.0
    eval_every: int = 100
    checkpoint_every: int = 0
    early_stop: bool = True
    random_offset: bool | None = None
    bin: str | None = None
    device: str = "cpu"
    pack_tokens: int = 0
    pe_penalty: float = 0.0
    weight_penalty: float = 0.0
    param_groups: str = "single"
    stop_loss: float = 0.0
    threads: int | None = None

    def __post_init__(self) -> None:
        _coerce_fields(self, "train")
        if self.threads is not None and self.threads < 1:
            raise RasplabError(
                f"train.threads must be at least 1 (or left out for the default); "
                f"got {self.threads!r}"
            )
        for name in ("steps", "batch_size", "lr", "eval_every"):
            _check_positive("train", name, getattr(self, name))
        for name in (
            "weight_decay",
            "warmup_steps",
            "grad_clip",
            "checkpoint_every",
            "min_lr_ratio",
            "pack_tokens",
            "pe_penalty",
            "weight_penalty",
            "stop_loss",
        ):
            _check_positive("train", name, getattr(self, name), allow_zero=True)
        for name in ("beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise RasplabError(f"train.{name} must be in [0, 1); got {getattr(self, name)!r}")
        if self.min_lr_ratio > 1:
            raise RasplabError(f"train.min_lr_ratio must be in [0, 1]; got {self.min_lr_ratio!r}")
        if self.schedule not in SCHEDULES:
            raise RasplabError(
                f"train.schedule must be one of {', '.join(SCHEDULES)}; got {self.schedule!r}"
            )
        if self.param_groups not in PARAM_GROUPS:
            raise unknown_name("train.param_groups", self.param_groups, PARAM_GROUPS)
        if self.bin is not None:
            object.__setattr__(self, "bin", str(Bin.parse(self.bin)))
        if self.device not in DEVICES and not self.device.startswith("cuda:"):
            raise RasplabError(
                f"train.device must be one of {', '.join(DEVICES)} (or cuda:N); got {self.device!r}"
            )


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation: test-set size per bin, batch size, decoding, tolerance, bins, named splits.

    ``size`` examples per test bin (fewer when the bin has fewer distinct examples), drawn
    with ``seed`` (default: the run seed). For regression tasks the metric is the MSE per
    bin, and an example counts as correct when every scored output is within ``tolerance``
    (absolute) of its target. ``bins`` replaces the task's test bins. ``splits`` adds named
    test sets of the task (``task.dataset(name, n=size, seed=seed)``), scored after the bins
    under their own names; the task checks the names when the run is set up, and ``train``
    and ``test`` are not allowed (they are the training bin and the test bins). ``slices``
    breaks every test set down by per-example attributes of the task (``Task.slices``, e.g.
    ``length`` and parity's ``ones``): the result holds, per test set, slice and value, how
    many examples there were and how many were right (ALTA scores parity by number of ones).

    >>> EvalConfig(splits="id_short").splits
    ('id_short',)
    >>> EvalConfig(slices=["length", "ones"]).slices
    ('length', 'ones')
    >>> EvalConfig(splits=["id_mid", "id_mid"])
    Traceback (most recent call last):
    ...
    rasplab.errors.RasplabError: eval.splits lists 'id_mid' twice; give each split once
    """

    size: int = 2000
    batch_size: int = 250
    decoding: str = "teacher_forced"
    tolerance: float = 0.05
    bins: tuple[str, ...] | None = None
    seed: int | None = None
    splits: tuple[str, ...] | None = None
    slices: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        _coerce_fields(self, "eval")
        _check_positive("eval", "size", self.size)
        _check_positive("eval", "batch_size", self.batch_size)
        _check_positive("eval", "tolerance", self.tolerance, allow_zero=True)
        if self.decoding not in DECODINGS:
            raise RasplabError(
                f"eval.decoding must be one of {', '.join(DECODINGS)}; got {self.decoding!r}"
            )
        if self.bins is not None:
            if not self.bins:
                raise RasplabError("eval.bins must list at least one bin, e.g. [1-50, 51-100]")
            object.__setattr__(self, "bins", tuple(str(Bin.parse(b)) for b in self.bins))
        if self.seed is not None:
            check_seed(self.seed, "eval.seed")
        if self.splits is not None:
            if not self.splits:
                raise RasplabError(
                    "eval.splits must list at least one named split (e.g. [id_short, id_mid]) "
                    "or be left out"
                )
            for i, name in enumerate(self.splits):
                if name in self.splits[:i]:
                    raise RasplabError(f"eval.splits lists {name!r} twice; give each split once")
        if self.slices is not None:
            if not self.slices:
                raise RasplabError(
                    "eval.slices must list at least one slice (e.g. [length, ones]) or be left out"
                )
            for i, name in enumerate(self.slices):
                if name in self.slices[:i]:
                    raise RasplabError(f"eval.slices lists {name!r} twice; give each slice once")


@dataclass(frozen=True)
class ExperimentConfig:
    """One run: task (+ options), variant label, seed, model, training and evaluation."""

    task: str = "binary_majority"
    task_options: dict = field(default_factory=dict)
    variant: str = ""
    seed: int = 0
    model: Any = None
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def __post_init__(self) -> None:
        if not isinstance(self.task, str) or self.task not in task_names():
            raise unknown_name("task", str(self.task), task_names())
        if not isinstance(self.task_options, dict):
            raise RasplabError("task_options must be a mapping of option name to value")
        check_seed(self.seed)
        if self.model is None:
            object.__setattr__(self, "model", ModelConfig())
        if not self.variant:
            object.__setattr__(self, "variant", variant_label(self.model))

    def to_dict(self) -> dict:
        """The resolved config as plain YAML/JSON data (tuples become lists)."""
        return _plain(self)

    def hash(self) -> str:
        """A 16-hex-digit hash of the resolved config (the run id)."""
        return self._hashes()[0]

    def setting_hash(self) -> str:
        """The hash of the config without its seed: runs that differ only by seed share it."""
        return self._hashes()[1]

    def _hashes(self) -> tuple[str, str]:
        """``(hash, setting_hash)``, computed once per config (it is frozen): a sweep asks for
        them several times per run, and a 100,000-run grid would pay for each."""
        cached = self.__dict__.get("_hash_pair")
        if cached is None:
            data = _hashed(self.to_dict())
            run_id = config_hash(data)
            data.pop("seed")
            cached = (run_id, config_hash(data))
            object.__setattr__(self, "_hash_pair", cached)
        return cached


#: keys added after results were stored, each with its unset value: a key is left out of the
#: hash while it holds that value, so that the run ids of configs not using it stay what they were
_LATER_KEYS = {
    ("eval", "splits"): None,
    ("eval", "slices"): None,
    ("train", "pack_tokens"): 0,
    ("train", "pe_penalty"): 0.0,
    ("train", "weight_penalty"): 0.0,
    ("train", "param_groups"): "single",
    ("train", "stop_loss"): 0.0,
    ("model", "init"): "gpt2",
    ("model", "attn_scale"): "sqrt",
}
#: execution settings that never enter the hash: the same experiment on more or fewer threads
_UNHASHED_KEYS = (("train", "threads"),)


def _hashed(data: dict) -> dict:
    """The resolved config as hashed: later-added keys left out while at their unset value.

    >>> _hashed({"train": {"steps": 5, "pack_tokens": 0}, "eval": {"splits": None}})
    {'train': {'steps': 5}, 'eval': {}}
    >>> _hashed({"train": {"pack_tokens": 512, "threads": 4}})
    {'train': {'pack_tokens': 512}}
    """
    for section, key in _UNHASHED_KEYS:
        data.get(section, {}).pop(key, None)
    for (section, key), unset in _LATER_KEYS.items():
        values = data.get(section, {})
        if key in values and type(values[key]) is type(unset) and values[key] == unset:
            data[section] = {k: v for k, v in values.items() if k != key}
    return data


def variant_label(model) -> str:
    """The default variant name of a model config: PE, then non-default attention and layers.

    The label reads like the papers' names, e.g. ``nope``, ``nope+canon``, ``rope+fox``.
    """
    parts = [str(model.pe)]
    if getattr(model, "attention", "softmax") != "softmax":
        parts.append(str(model.attention))
    parts += [flag for flag in ("canon", "swan", "universal") if getattr(model, flag, False)]
    return "+".join(parts)


def config_hash(data: dict) -> str:
    """SHA-256 (first 16 hex digits) of canonical JSON."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(value):
    """Dataclasses to dicts and tuples to lists, recursively (YAML/JSON-friendly); the same
    data as ``dataclasses.asdict`` for configs (whose leaves are immutable), several times
    faster, which a 100,000-run grid notices.

    >>> _plain(TrainConfig(steps=3))["steps"], _plain({"bins": ("1-5", "6-9")})
    (3, {'bins': ['1-5', '6-9']})
    """
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    names = _field_names(type(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    return value


@functools.cache
def _field_names(cls) -> tuple[str, ...] | None:
    """The field names of a dataclass type, or None for any other type."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


# --- coercion of YAML values to the annotated field types --------------------------------


def _coerce(value, annotation, where: str):
    """Convert ``value`` to ``annotation`` (int, float, bool, str, tuple[str, ...], X | None)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(value, inner[0], where) if len(inner) == 1 else value
    if annotation is bool:
        if isinstance(value, bool):
            return value
        raise RasplabError(f"{where} must be true or false; got {value!r}")
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise RasplabError(f"{where} must be an integer; got {value!r}")
    if annotation is float:
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if number is not None and not math.isfinite(number):
            raise RasplabError(f"{where} must be a finite number; got {value!r}")
        if number is not None:
            return number
        raise RasplabError(f"{where} must be a number; got {value!r}")
    if annotation is str:
        if isinstance(value, str):
            return value
        raise RasplabError(f"{where} must be a string; got {value!r}")
    if origin is tuple:
        items = [value] if isinstance(value, (str, int)) else value
        if not isinstance(items, (list, tuple)):
            raise RasplabError(f"{where} must be a list; got {value!r}")
        if args[0] is str:
            items = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in items]
        return tuple(_coerce(v, args[0], where) for v in items)
    return value


@functools.cache
def _hints(cls) -> dict:
    """The resolved field annotations of a dataclass, computed once per class (resolving
    them costs about a millisecond, which a 100,000-run grid would pay 300,000 times)."""
    return typing.get_type_hints(cls)


def _coerce_fields(obj, section: str) -> None:
    """Coerce every field of a frozen dataclass instance to its annotated type, in place."""
    hints = _hints(type(obj))
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        new = _coerce(value, hints[f.name], f"{section}.{f.name}")
        if new is not value:
            object.__setattr__(obj, f.name, new)


def coerce_dataclass(cls, data: dict, section: str):
    """Build dataclass ``cls`` from a mapping: unknown keys rejected, values coerced by type."""
    if not isinstance(data, dict):
        raise RasplabError(f"{section} must be a mapping of keys to values; got {data!r}")
    names = [f.name for f in dataclasses.fields(cls)]
    hints = _hints(cls)
    kwargs = {}
    for key, value in data.items():
        if key not in names:
            raise unknown_name(f"key under {section!r}", f"{section}.{key}", names)
        kwargs[key] = _coerce(value, hints[key], f"{section}.{key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as err:
        if isinstance(err, RasplabError):
            raise
        raise RasplabError(f"invalid {section} config: {err}") from err


# --- YAML loading and overrides -----------------------------------------------------------

TOP_KEYS = ("task", "task_options", "variant", "seed", "model", "train", "eval")


def experiment_from_dict(data: dict) -> ExperimentConfig:
    """Build an :class:`ExperimentConfig` from nested plain data (as loaded from YAML)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RasplabError(
            "an experiment config must be a mapping with keys " + ", ".join(TOP_KEYS)
        )
    for key in data:
        if key not in TOP_KEYS:
            raise unknown_name("config key", str(key), TOP_KEYS)
    kwargs = {k: v for k, v in data.items() if k in ("task", "variant", "seed")}
    if "seed" in kwargs:
        kwargs["seed"] = _coerce(kwargs["seed"], int, "seed")
    if "variant" in kwargs and kwargs["variant"] is not None:
        kwargs["variant"] = str(kwargs["variant"])
    options = data.get("task_options") or {}  # not a mapping: ExperimentConfig refuses it
    kwargs["task_options"] = dict(options) if isinstance(options, dict) else options
    kwargs["model"] = coerce_dataclass(ModelConfig, data.get("model") or {}, "model")
    kwargs["train"] = coerce_dataclass(TrainConfig, data.get("train") or {}, "train")
    kwargs["eval"] = coerce_dataclass(EvalConfig, data.get("eval") or {}, "eval")
    return ExperimentConfig(**kwargs)


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``key.sub=value`` and parse the value as a YAML scalar.

    >>> parse_override("train.lr=1e-4")
    ('train.lr', '1e-4')
    >>> parse_override("model.canon=true")
    ('model.canon', True)
    """
    if "=" not in text:
        raise RasplabError(f"override {text!r} must be written key=value, e.g. model.pe=nope")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise RasplabError(f"override {text!r} has an empty key; write e.g. train.steps=500")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as err:
        raise RasplabError(
            f"override {text!r}: value is not valid YAML ({yaml_problem(err)})"
        ) from err
    return key, value


def set_dotted(data: dict, key: str, value) -> None:
    """Set ``data[a][b] = value`` for ``key == "a.b"``, creating mappings on the way."""
    parts = key.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise RasplabError(f"cannot set {key!r}: {part!r} is not a section")
        node = child
    node[parts[-1]] = value


def flatten(data: dict, prefix: str = "") -> dict:
    """Nested mapping → ``{"a.b": value}`` (the inverse of :func:`set_dotted`).

    >>> flatten({"model": {"pe": "ape"}, "seed": 1})
    {'model.pe': 'ape', 'seed': 1}
    """
    out = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def yaml_problem(err: yaml.YAMLError) -> str:
    """A YAML error on one line: what is wrong and where (PyYAML's own text spans lines)."""
    problem = getattr(err, "problem", None)
    mark = getattr(err, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(err).split())


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping holding the same key twice."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path) -> dict:
    """Read a YAML mapping with ``yaml.safe_load``; a missing or malformed file is a RasplabError."""
    path = Path(path)
    if path.is_dir():
        raise RasplabError(f"config file {str(path)!r} is a folder; give a YAML file")
    if not path.is_file():
        raise RasplabError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        raise RasplabError(
            f"config file {str(path)!r} is not valid YAML: {yaml_problem(err)}"
        ) from err
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RasplabError(f"cannot read config file {str(path)!r}: {reason}") from err
    if data is None:
        raise RasplabError(
            f"config file {str(path)!r} is empty; give at least the task (task: NAME)"
        )
    if not isinstance(data, dict):
        raise RasplabError(f"config file {str(path)!r} must hold a mapping of keys to values")
    return data


def load_config(
    path: str | Path | None = None, overrides: list[str] | tuple = ()
) -> ExperimentConfig:
    """Load an experiment config from YAML (or the defaults) and apply ``key=value`` overrides."""
    data = read_yaml(path) if path is not None else {}
    for text in overrides:
        key, value = parse_override(text)
        set_dotted(data, key, value)
    return experiment_from_dict(data)


def save_config(config: ExperimentConfig, path: str | Path) -> None:
    """Write the resolved config as YAML (atomically)."""
    atomic_write_text(Path(path), yaml.safe_dump(config.to_dict(), sort_keys=False))
