"""A saved RASP model loads back and decodes like the fresh compile on every input; the save
goes through rasplab.files (replace in one step, usual modes); an edited or foreign
model.json, or weights that contradict it, is refused in one line naming the field."""

import itertools
import json
import os
import stat

import pytest
import torch
from safetensors.torch import load_file, save_file

from rasplab.compiler.modelspec import spec_digest
from rasplab.errors import RasplabError
from rasplab.files import current_umask
from rasplab.rasp import lib, rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import compile_rasp_to_model
from rasplab.rasp_compiler.export import save_model
from rasplab.rasp_compiler.load import load_model

from .test_compile import LIB

N = 4  # every input of 1..N tokens


def every_input(vocab, n):
    for length in range(1, n + 1):
        for xs in itertools.product(sorted(vocab, key=repr), repeat=length):
            yield ["BOS", *xs]


@pytest.mark.parametrize("name", sorted(LIB))
def test_saved_lib_program_decodes_like_the_fresh_compile_on_every_input(name, tmp_path):
    build, vocab = LIB[name]
    fresh = compile_rasp_to_model(build(N), vocab, N)
    save_model(fresh, tmp_path / "m")
    saved = load_model(tmp_path / "m")
    assert saved.sizes() == fresh.sizes() and saved.model_config == fresh.model_config
    assert saved.residual_labels == fresh.residual_labels and saved.vocab == fresh.vocab
    assert saved.name == fresh.program.name
    checked = 0
    for xs in every_input(vocab, N):
        out = saved.apply(xs)
        assert out.decoded == fresh.apply(xs).decoded, xs
        checked += 1
    assert checked == sum(len(vocab) ** k for k in range(1, N + 1))


def test_every_saved_sop_decodes_like_the_fresh_one(tmp_path):
    fresh = compile_rasp_to_model(lib.make_sort_freq(N), {1, 2, 3}, N)
    save_model(fresh, tmp_path / "m")
    saved = load_model(tmp_path / "m")
    assert [label for label, _ in saved.sops] == [s.label for s in fresh.plan.order]
    batch = [fresh.encode(xs) for xs in every_input({1, 2, 3}, N) if len(xs) == N + 1]
    x = fresh.run(batch)
    assert torch.equal(saved.run(batch), x)
    for sop, (_, slot) in zip(fresh.plan.order, saved.sops):
        assert slot == fresh.slot(sop)


def test_causal_pad_and_float64_models_round_trip(tmp_path):
    fresh = compile_rasp_to_model(
        lib.make_frac_prevs(rasp.tokens == "x"), {"x", "y"}, 3, compiler_pad="PAD", causal=True
    )
    save_model(fresh, tmp_path / "m")
    saved = load_model(tmp_path / "m")
    assert saved.causal and saved.pad == "PAD" and saved.model_config.causal
    xs = ["BOS", "x", "y", "PAD"]
    assert saved.apply(xs).decoded == fresh.apply(xs).decoded == ["BOS", 1.0, 0.5, "PAD"]
    wide = compile_rasp_to_model(lib.make_hist(), {1, 2}, 3, dtype=torch.float64)
    save_model(wide, tmp_path / "w")
    assert load_model(tmp_path / "w").sizes()["dtype"] == "float64"


def test_save_replaces_an_earlier_model_with_the_usual_modes_and_refuses_other_files(tmp_path):
    out = tmp_path / "m"
    save_model(compile_rasp_to_model(lib.make_length(), {1}, 2), out)
    save_model(compile_rasp_to_model(lib.make_hist(), {1, 2}, 3), out)
    assert load_model(out).name == "hist" and sorted(os.listdir(tmp_path)) == ["m"]
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o777 & ~current_umask()
    for f in ("model.json", "model.safetensors"):
        assert stat.S_IMODE(os.stat(out / f).st_mode) == 0o666 & ~current_umask()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(RasplabError, match="holds other files"):
        save_model(compile_rasp_to_model(lib.make_length(), {1}, 2), out)
    assert (out / "notes.txt").exists() and load_model(out).name == "hist"


def test_a_value_that_does_not_read_back_is_refused_and_nothing_is_written(tmp_path):
    class Tok:
        def __repr__(self):
            return "Tok()"

    t = Tok()
    model = compile_rasp_to_model(rasp.Map(lambda x: t, rasp.tokens), {1}, 2)
    with pytest.raises(RaspError, match="does not read back from its repr"):
        save_model(model, tmp_path / "m")
    assert os.listdir(tmp_path) == []


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved") / "hist"
    save_model(compile_rasp_to_model(lib.make_hist(), {1, 2, 3}, 4), folder)
    return folder


def edited(saved, tmp_path, edit=None, tensors=None, digest=True):
    """A copy of the saved model with ``edit(spec)`` / ``tensors(weights)`` applied, its
    digest recomputed unless ``digest`` is False."""
    out = tmp_path / "edited"
    out.mkdir()
    weights = load_file(str(saved / "model.safetensors"))
    if tensors is not None:
        tensors(weights)
    save_file(weights, str(out / "model.safetensors"))
    spec = json.loads((saved / "model.json").read_text())
    if edit is not None:
        edit(spec)
    if digest:
        spec["digest"] = spec_digest(spec, out / "model.safetensors")
    (out / "model.json").write_text(json.dumps(spec))
    return out


def _set(key, value):
    return lambda spec: spec.__setitem__(key, value)


def _drop(key):
    return lambda spec: spec.pop(key)


@pytest.mark.parametrize(
    "edit,tensors,message",
    [
        (_drop("format"), None, "no 'format' field"),
        (_set("format", "rasplab-compiled/1"), None, "field 'format' is \"rasplab-compiled/1\""),
        (_set("max_seq_len", 8), None, "pos_embed has shape [5, "),
        (_set("max_seq_len", 0), None, "field 'max_seq_len' must be a positive integer"),
        (lambda s: s["vocab"].pop(), None, "token_embed has shape [4, "),
        (_set("vocab", ["1", "2", "x y"]), None, "field 'vocab' holds \"x y\""),
        (lambda s: s["residual_labels"].pop(), None, "token_embed has shape"),
        (lambda s: s["sizes"].__setitem__("layers", 2), None, "lacks layers.1.W_Q"),
        (lambda s: s["sizes"].__setitem__("dtype", "float64"), None, "says dtype float64"),
        (lambda s: s["sizes"].__setitem__("params", 1), None, "field 'sizes' says params 1"),
        (lambda s: s["sops"][-1].__setitem__("start", 99), None, "field 'sops' puts"),
        (lambda s: s["sops"][0].pop("values"), None, "field 'sops' entries need"),
        (_set("output", 99), None, "field 'output' must index"),
        (_set("causal", "no"), None, "field 'causal' must be true or false"),
        (
            _set("causal", True),
            None,
            "field 'causal' is true, but layer 0 head 0 attends to a later position on input",
        ),
        (_set("pad", 3), None, "field 'pad' must be null"),
        (None, lambda w: w.pop("layers.0.W_out"), "lacks layers.0.W_out"),
        (None, lambda w: w.__setitem__("extra", torch.zeros(1)), "holds extra"),
        (None, lambda w: w.__setitem__("layers.0.W_in", torch.zeros(2, 2)), "layers.0.W_in"),
        (
            None,
            lambda w: w["pos_embed"].__setitem__((0, 0), float("nan")),
            "pos_embed holds non-finite",
        ),
    ],
)
def test_a_spec_that_contradicts_itself_or_the_weights_is_one_line(
    saved, tmp_path, edit, tensors, message
):
    folder = edited(saved, tmp_path, edit, tensors)
    with pytest.raises(RasplabError) as err:
        load_model(folder)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_edit_without_a_new_digest_or_no_digest_is_refused(saved, tmp_path):
    with pytest.raises(RasplabError, match="digest mismatch"):
        load_model(edited(saved, tmp_path, _set("max_seq_len", 3), digest=False))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(RasplabError, match="has no digest"):
        load_model(edited(saved, other, _drop("digest"), digest=False))


def test_weights_of_another_model_are_refused(saved, tmp_path):
    other = tmp_path / "other"
    save_model(compile_rasp_to_model(lib.make_hist(), {1, 2}, 4), other)
    (other / "model.json").write_text((saved / "model.json").read_text())
    with pytest.raises(RasplabError, match="digest mismatch"):
        load_model(other)


def test_a_missing_folder_is_one_line(tmp_path):
    with pytest.raises(RasplabError, match="does not exist"):
        load_model(tmp_path / "nothing")


@pytest.mark.parametrize("compiled_causal", [True, False])
def test_a_causal_flag_the_weights_cannot_contradict_loads_and_runs_the_same(
    tmp_path, compiled_causal
):
    """``frac_prevs`` only looks back: both compiles have the same weights, so either flag
    fits them, and a flipped one loads and decodes every input as the fresh compile does."""
    fresh = compile_rasp_to_model(
        lib.make_frac_prevs(rasp.tokens == "x"), {"x", "y"}, 3, causal=compiled_causal
    )
    save_model(fresh, tmp_path / "m")
    flipped = edited(tmp_path / "m", tmp_path, _set("causal", not compiled_causal))
    saved = load_model(flipped)
    assert saved.causal is (not compiled_causal)
    for xs in every_input({"x", "y"}, 3):
        assert saved.apply(xs).decoded == fresh.apply(xs).decoded, xs


def test_the_cli_refuses_a_flipped_causal_flag_in_one_line(saved, tmp_path, capsys):
    from rasplab.cli import main

    folder = edited(saved, tmp_path, _set("causal", True))
    with pytest.raises(SystemExit) as done:
        main(["run", "--model", str(folder), "--input", "1 2 1"])
    out, err = capsys.readouterr()
    assert done.value.code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "model.json field 'causal' is true" in err
