"""``save_pretrained`` / ``from_pretrained``: a trained model as a Hugging-Face-style folder.

The folder holds ``config.json`` (the :class:`ModelConfig` fields plus the vocabulary size,
number of outputs and position-table size) and ``model.safetensors`` (the weights under
their ``state_dict`` names). A harness run directory is such a folder too: the harness
writes ``config.json`` beside its final checkpoint ``model.safetensors``, whose tensors sit
under ``model/<name>``; :meth:`PretrainedMixin.from_pretrained` reads both layouts, so any
trained run opens in one line. Nothing is downloaded and nothing is unpickled.

>>> import tempfile, torch
>>> from rasplab.models import ModelConfig, TransformerModel, build_model
>>> model = build_model(ModelConfig(width=16, heads=2), vocab_size=5, num_outputs=3,
...                     max_positions=32, seed=0)
>>> with tempfile.TemporaryDirectory() as d:
...     _ = model.save_pretrained(d)
...     again = TransformerModel.from_pretrained(d)
>>> x = torch.tensor([[1, 2, 3]])
>>> bool(torch.equal(model(x), again(x)))
True
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from rasplab.errors import RasplabError
from rasplab.files import publish, write_file
from rasplab.models.config import ModelConfig

CONFIG, WEIGHTS = "config.json", "model.safetensors"
FORMAT = "rasplab-transformer/1"


def model_config_json(model) -> dict:
    """The ``config.json`` data of a :class:`~rasplab.models.TransformerModel`."""
    return {
        "format": FORMAT,
        "model_type": "rasplab-transformer",
        "model": asdict(model.config),
        "vocab_size": model.vocab_size,
        "num_outputs": model.num_outputs,
        "max_positions": model.max_positions,
    }


def write_config_json(model, directory: str | Path) -> Path:
    """Write ``config.json`` for ``model`` into ``directory`` atomically."""
    path = Path(directory) / CONFIG
    _write_atomic(path, json.dumps(model_config_json(model), indent=1).encode("utf-8"))
    return path


def _write_atomic(path: Path, data: bytes) -> None:
    write_file(path, data, "model config")


class PretrainedMixin:
    """Adds :meth:`save_pretrained` and :meth:`from_pretrained` to the trainable model."""

    def save_pretrained(self, directory: str | Path) -> Path:
        """Write ``config.json`` and ``model.safetensors`` into ``directory`` (created)."""
        out = Path(directory)
        try:
            out.mkdir(parents=True, exist_ok=True)
            tensors = {k: v.detach().contiguous() for k, v in self.state_dict().items()}
            fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{WEIGHTS}.", suffix=".tmp")
            os.close(fd)
            try:
                save_file(tensors, tmp, metadata={"format": FORMAT})
                publish(tmp, out / WEIGHTS)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            write_config_json(self, out)
        except (OSError, SafetensorError) as err:
            raise RasplabError(f"cannot save the model to {str(out)!r}: {err}") from err
        return out

    @classmethod
    def from_pretrained(cls, directory: str | Path):
        """The model saved in ``directory`` (by :meth:`save_pretrained` or a harness run)."""
        path = Path(directory)
        try:
            data = json.loads((path / CONFIG).read_text(encoding="utf-8"))
        except OSError as err:
            raise RasplabError(
                f"{str(path)!r} holds no trained model ({CONFIG} is missing: {err.strerror})"
            ) from err
        except json.JSONDecodeError as err:
            raise RasplabError(f"{str(path / CONFIG)!r} is not valid JSON ({err.msg})") from err
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RasplabError(f"{str(path / CONFIG)!r} is not a rasplab model config")
        try:
            tensors = load_file(str(path / WEIGHTS))
        except (OSError, SafetensorError) as err:
            raise RasplabError(f"cannot read {str(path / WEIGHTS)!r}: {err}") from err
        if any(k.startswith("model/") for k in tensors):  # a harness checkpoint
            tensors = {k[len("model/") :]: v for k, v in tensors.items() if k.startswith("model/")}
        model = cls(
            ModelConfig.from_dict(data["model"]),
            data["vocab_size"],
            data["num_outputs"],
            data["max_positions"],
        )
        try:
            model.load_state_dict(tensors, strict=True)
        except RuntimeError as err:
            first = str(err).splitlines()[0]
            raise RasplabError(f"weights in {str(path)!r} do not fit its config ({first})") from err
        return model.eval()
