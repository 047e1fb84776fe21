"""Sweep configs: a base experiment, a grid (task × variant × seed × any key), variants, overrides.

A sweep YAML file has these keys (only ``grid`` is required)::

    name: fig1_demo                 # label stored with every run
    base: {train: {steps: 300}}     # an experiment config, as for `rasplab train`
    grid:                           # the product of these lists, in this order
      task: [binary_majority, aa_star]
      variant: [ape, nope]
      seed: [0, 1]
      train.lr: [0.001]             # any dotted key of the experiment config
    variants:                       # optional: variant name -> dotted overrides
      ape: {model.pe: ape}
    overrides:                      # optional: applied to the runs that match
      - match: {task: aa_star, variant: nope}
        set: {model.layers: 2}
    select: {grid: {model.layers: [1, 2]}}  # optional: seed 003's hyper-parameter selection
                                    # per (task, variant) before the seeds (harness/select.py)

A variant name not defined under ``variants`` may be a PE name (``model.pe``) or an attention
name (``model.attention``), as registered in ``rasplab.models.registry`` (so the randomized
PEs ``random_sin`` and ``random_ape`` need no ``variants`` entry); anything else is an error
listing the allowed names.

>>> SweepConfig(grid={"variant": ["random_ape"]}).variant_sets("random_ape")
{'model.pe': 'random_ape'}
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rasplab.errors import RasplabError, unknown_name
from rasplab.harness.config import (
    ExperimentConfig,
    experiment_from_dict,
    read_yaml,
    set_dotted,
)
from rasplab.models.registry import ATTENTION_KINDS, POSITIONAL_ENCODINGS

SWEEP_KEYS = ("name", "description", "base", "grid", "variants", "overrides", "select")
PE_NAMES = tuple(POSITIONAL_ENCODINGS)  # every registered model.pe, randomized PEs included
ATTENTION_NAMES = tuple(ATTENTION_KINDS)  # every registered model.attention


@dataclass(frozen=True)
class SweepConfig:
    """A grid of experiments around a base config (see the module docstring for the format)."""

    grid: dict
    name: str = "sweep"
    description: str = ""
    base: dict = field(default_factory=dict)
    variants: dict = field(default_factory=dict)
    overrides: tuple = ()
    select: dict = field(default_factory=dict)  # seed 003's selection (harness/select.py)

    def __post_init__(self) -> None:
        if not isinstance(self.grid, dict) or not self.grid:
            raise RasplabError(
                "sweep 'grid' must map keys (task, variant, seed, train.lr, ...) to lists"
            )
        for key, values in self.grid.items():
            if not isinstance(values, list) or not values:
                raise RasplabError(f"sweep grid.{key} must be a non-empty list; got {values!r}")
        if not isinstance(self.base, dict):
            raise RasplabError("sweep 'base' must be an experiment config mapping")
        if not isinstance(self.select, dict):
            raise RasplabError("sweep 'select' must be a mapping (grid, seed, stop)")
        if not isinstance(self.variants, dict):
            raise RasplabError("sweep 'variants' must map variant names to overrides")
        for name, sets in self.variants.items():
            if not isinstance(sets, dict):
                raise RasplabError(f"sweep variants.{name} must map dotted keys to values")
        for i, item in enumerate(self.overrides):
            if not isinstance(item, dict) or set(item) - {"match", "set"} or "set" not in item:
                raise RasplabError(f"sweep overrides[{i}] must be a mapping with 'match' and 'set'")
            if not isinstance(item.get("match") or {}, dict) or not isinstance(item["set"], dict):
                raise RasplabError(f"sweep overrides[{i}]: 'match' and 'set' must be mappings")

    def variant_sets(self, name: str) -> dict:
        """The dotted overrides of variant ``name`` (a PE or attention name works by default)."""
        if name in self.variants:
            return dict(self.variants[name])
        if name in PE_NAMES:
            return {"model.pe": name}
        if name in ATTENTION_NAMES:
            return {"model.attention": name}
        raise unknown_name("variant", name, [*self.variants, *PE_NAMES, *ATTENTION_NAMES])

    def restrict(self, key: str, values: list) -> SweepConfig:
        """The same sweep with ``grid[key]`` cut down to ``values`` (each must be in the grid)."""
        if key not in self.grid:
            raise unknown_name("grid key", key, self.grid)
        allowed = self.grid[key]
        for value in values:
            if value not in allowed:
                raise RasplabError(
                    f"grid.{key} has no value {value!r}; choose from: "
                    + ", ".join(str(v) for v in allowed)
                )
        grid = {**self.grid, key: [v for v in allowed if v in values]}
        return dataclasses.replace(self, grid=grid)

    def size(self) -> int:
        """The number of grid points (before duplicates are removed), known without expanding.

        >>> SweepConfig(name="s", grid={"seed": [0, 1, 2], "task": ["parity", "tomita1"]}).size()
        6
        """
        return math.prod(len(values) for values in self.grid.values())

    def expand(self, on_point: Callable[[], None] | None = None) -> list[ExperimentConfig]:
        """Every run of the grid as a resolved config, in grid order, duplicates removed;
        ``on_point`` (if given) is called once per grid point, e.g. to draw progress."""
        keys = list(self.grid)
        out, seen = [], set()
        for combo in itertools.product(*(self.grid[k] for k in keys)):
            if on_point is not None:
                on_point()
            point = dict(zip(keys, combo))
            config = self._resolve(point)
            key = config.hash()
            if key not in seen:
                seen.add(key)
                out.append(config)
        return out

    def _resolve(self, point: dict) -> ExperimentConfig:
        """Build the config of one grid point: base, variant, grid keys, matching overrides."""
        data = copy.deepcopy(self.base)
        label = point.get("variant")
        if label is not None:
            for key, value in self.variant_sets(str(label)).items():
                set_dotted(data, key, copy.deepcopy(value))
        for key, value in point.items():
            if key != "variant":
                set_dotted(data, key, copy.deepcopy(value))
        if label is not None:
            data["variant"] = str(label)
        for item in self.overrides:
            if all(_matches(point, data, k, v) for k, v in (item.get("match") or {}).items()):
                for key, value in item["set"].items():
                    set_dotted(data, key, copy.deepcopy(value))
        try:
            return experiment_from_dict(data)
        except RasplabError as err:
            where = ", ".join(f"{k}={v}" for k, v in point.items())
            raise RasplabError(f"sweep run ({where}): {err}") from err


def _matches(point: dict, data: dict, key: str, wanted) -> bool:
    """Whether a grid point (or its resolved data) has ``key`` equal to ``wanted`` (or in it)."""
    if key in point:
        value = point[key]
    else:
        value = data
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    return value in wanted if isinstance(wanted, list) else value == wanted


def sweep_from_dict(data: dict) -> SweepConfig:
    """Build a :class:`SweepConfig` from plain data; unknown keys are rejected."""
    if not isinstance(data, dict):
        raise RasplabError("a sweep config must be a mapping with keys " + ", ".join(SWEEP_KEYS))
    for key in data:
        if key not in SWEEP_KEYS:
            raise unknown_name("sweep key", str(key), SWEEP_KEYS)
    if "grid" not in data:
        raise RasplabError("a sweep config needs a 'grid' (e.g. grid: {seed: [0, 1]})")
    return SweepConfig(
        grid=data["grid"],
        name=str(data.get("name") or "sweep"),
        description=str(data.get("description") or ""),
        base=data.get("base") or {},
        variants=data.get("variants") or {},
        overrides=tuple(data.get("overrides") or ()),
        select=data.get("select") or {},
    )


def load_sweep(path: str | Path) -> SweepConfig:
    """Read a sweep config from YAML; the name defaults to the file's stem."""
    data = read_yaml(path)
    data.setdefault("name", Path(path).stem)
    return sweep_from_dict(data)
