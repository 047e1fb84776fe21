"""A run directory: ``config.json`` (the resolved config), ``model.safetensors`` (the
weights), ``program.py`` (the decompiled program), ``result.json`` and, when the model exports to
rasplab.lang, ``program_lang.txt`` (that program's listing). Written to a temporary
sibling folder and swapped in whole (an earlier run there is exchanged for the new one in one
step, :func:`rasplab.files.replace_dir`), so a failed run leaves nothing behind and a killed
one leaves the earlier run intact; the JSON files are strict (no NaN or Infinity). Read back
with one clear error for anything missing or corrupt.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from rasplab.errors import RasplabError
from rasplab.files import current_umask, replace_dir
from rasplab.learned.config import LearnConfig, config_from_dict
from rasplab.learned.model import DiscreteTransformer

FILES = ("config.json", "model.safetensors", "program.py", "result.json")


def check_out(out: str | Path) -> None:
    """Refuse, before any work, an ``out`` that exists and is not an (empty or) run folder."""
    out = Path(out)
    if out.exists() and not (out / "config.json").exists():
        if not out.is_dir() or any(out.iterdir()):
            raise RasplabError(f"--out {out} exists and is not a learned run directory")


def save_run(
    out: str | Path,
    config: LearnConfig,
    model: DiscreteTransformer,
    source: str,
    result: dict,
    lang_listing: str | None = None,
) -> Path:
    """Write the run directory ``out`` (replacing an earlier run there); with
    ``lang_listing``, also ``program_lang.txt`` (the rasplab.lang export, listed)."""
    out = Path(out)
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "config.json").write_text(
            json.dumps(config.to_dict(), indent=2, allow_nan=False) + "\n"
        )
        save_file(
            {k: v.contiguous() for k, v in model.state_dict().items()}, tmp / "model.safetensors"
        )
        (tmp / "program.py").write_text(source)
        if lang_listing is not None:
            (tmp / "program_lang.txt").write_text(lang_listing)
        (tmp / "result.json").write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
        (tmp / "model.safetensors").chmod(0o666 & ~current_umask())
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def load_run(path: str | Path) -> tuple[LearnConfig, DiscreteTransformer, str, dict]:
    """The config, the discretisable model, the program text and the result of a run."""
    from rasplab.learned.learn import build  # import cycle: learn.py imports this module

    path = Path(path)
    if not path.is_dir():
        raise RasplabError(f"{path} is not a run directory (no such folder)")
    missing = [name for name in FILES if not (path / name).is_file()]
    if missing:
        raise RasplabError(f"{path} is not a finished learned run: missing {', '.join(missing)}")
    try:
        config = config_from_dict(json.loads((path / "config.json").read_text()))
        result = json.loads((path / "result.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as err:
        raise RasplabError(f"{path}: corrupt config.json or result.json ({err})") from err
    _, model = build(config)
    try:
        weights = load_file(path / "model.safetensors")
        model.load_state_dict(weights)
    except (SafetensorError, RuntimeError, OSError) as err:
        reason = str(err).splitlines()[0]
        raise RasplabError(f"{path}/model.safetensors does not fit the config: {reason}") from err
    return config, model, (path / "program.py").read_text(), result
