"""docs/explore.md's TransformerLens and nnsight snippets, run as written.

The page's ``python`` blocks run in order, in one namespace (as a reader runs them in one
session), each from a file on disk (nnsight reads a traced block's source), in a scratch
folder where its ``bash`` line (``rasplab export ...``) has been run through the real entry
point; the trained run the page names is a small model saved with ``save_pretrained``.
What they compute is then checked against the interpreter and the model itself.
"""

from __future__ import annotations

import re
import runpy
import shlex
from pathlib import Path

import pytest
import torch

from rasplab.cli import main
from rasplab.lang.interpreter import interpret
from rasplab.models import ModelConfig, build_model

pytest.importorskip("transformer_lens", reason="needs the interp extra (transformer-lens)")
pytest.importorskip("nnsight", reason="needs the interp extra (nnsight)")

DOC = Path(__file__).resolve().parents[2] / "docs" / "explore.md"
RUN = "runs/demo/<run>"


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of the fenced blocks after the TransformerLens heading."""
    start = text.index("## Compiled models in TransformerLens 4")
    return re.findall(r"```(python|bash)\n(.*?)```", text[start:], flags=re.S)


def test_the_snippets_run_and_compute_what_they_say(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    model = build_model(ModelConfig(width=16, heads=2, layers=2, pe="rope"), 6, 4, 32, seed=1)
    model.save_pretrained(tmp_path / "run")
    scope: dict = {}
    blocks = _blocks(DOC.read_text(encoding="utf-8"))
    assert [lang for lang, _ in blocks].count("python") >= 4
    for k, (lang, code) in enumerate(blocks):
        code = code.replace(RUN, str(tmp_path / "run"))
        if lang == "bash":
            for line in code.strip().splitlines():
                argv = shlex.split(line)
                assert argv[0] == "rasplab", line
                with pytest.raises(SystemExit) as done:
                    main(argv[1:])
                assert done.value.code == 0, line
            continue
        path = tmp_path / f"snippet_{k}.py"
        path.write_text(code, encoding="utf-8")
        scope = runpy.run_path(str(path), init_globals=scope)
    capsys.readouterr()

    entry = scope["entry"]
    program = entry.program()
    want = interpret(program, [entry.encode("1 1 0 1")]).outputs[0]
    assert scope["output"] == want  # the first snippet's output is the program's
    assert scope["logits"].shape[-1] == 2 and "blocks.0.hook_resid_post" in scope["cache"]
    # trained model: the hook cache, the bridge and nnsight agree with the model itself
    trained = scope["hooked"].model
    with torch.no_grad():
        plain = trained(scope["input_ids"])
    assert torch.allclose(scope["bridge_logits"], plain, atol=1e-5)
    bridge_resid = scope["bridge_cache"]["blocks.0.hook_resid_post"]
    assert torch.allclose(scope["resid"], bridge_resid, atol=1e-5)
    assert torch.allclose(scope["pattern"], scope["bridge_cache"]["blocks.0.attn.hook_pattern"],
                          atol=1e-5)  # fmt: skip
    assert not torch.allclose(scope["ablated"], plain, atol=1e-6)
    # the compiled intervention: what the interpreter gives with parity[3] set to 1
    ids = entry.encode("1 1 0 1 0")
    unchanged = interpret(program, [ids]).outputs[0]
    assert scope["changed_output"] != unchanged
    assert scope["changed_output"] == _interpreter_with(program, ids, "parity", 3, 1)


def _interpreter_with(program, ids, var: str, position: int, value: int) -> list[int]:
    """The interpreter's output with ``var`` at ``position`` set to ``value`` initially."""
    import rasplab.lang.interpreter as interpreter

    original = interpreter.initial_state

    def changed(prog, tokens):
        state = original(prog, tokens)
        state[var] = state[var].copy()
        state[var][0, position] = value
        return state

    interpreter.initial_state = changed
    try:
        return interpreter.interpret(program, [ids]).outputs[0]
    finally:
        interpreter.initial_state = original
