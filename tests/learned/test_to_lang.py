"""The rasplab.lang export: the interpreter running the exported program equals the
discretised model on every input up to length 4 (randomly weighted models) and past the
width, the compiled weights equal the interpreter, a tampered export is caught, and a head
that needs a length bound is refused without one, by name."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch

from rasplab.lang import Rule
from rasplab.learned.decompile import extract, unscored_tokens
from rasplab.learned.model import DiscreteTransformer, Shape
from rasplab.learned.to_lang import NotExpressible, check_export, to_lang
from rasplab.learned.verify import ProgramMismatch, all_inputs
from rasplab.tasks import get_task

POSITIONS = 1  # variable index of ``positions`` in the stream


def random_model(task, layers, cat, count, mlps, seed, width=0):
    """A one-seed model of ``task`` with every parameter drawn from N(0, 1)."""
    width = width or max(len(task.vocab), task.max_tokens(task.max_length))
    shape = Shape(tuple(task.vocab), tuple(task.classes), width, layers, cat, count, mlps)
    model = DiscreteTransformer(shape, seeds=(seed,))
    gen = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))
    return model


def reads_component(model, first: int, second: int):
    """Make the readout read variables ``first`` and ``second``."""
    with torch.no_grad():
        for p, index in ((model.readout.first, first), (model.readout.second, second)):
            p.zero_()
            p[0, 0, index] = 1.0
    return model


@pytest.mark.parametrize(
    "name,layers,cat,count,mlps,seed",
    [
        ("rasp_hist", 1, 2, 2, 2, 0),
        ("rasp_reverse", 2, 2, 1, 2, 1),
        ("rasp_sort", 2, 1, 2, 1, 2),
        ("rasp_dyck1", 2, 2, 2, 2, 3),
    ],
)
def test_export_equals_random_model_on_every_input_up_to_length_4(
    name, layers, cat, count, mlps, seed
):
    task = get_task(name)
    model = random_model(task, layers, cat, count, mlps, seed)
    # the readout reads the last MLP and the last head, so the whole stack is exported
    n = model.num_variables
    reads_component(model, n - 1, n - 1 - mlps)
    export = to_lang(extract(model), task.max_tokens(4))
    assert export.mapped  # heads were exported, not dropped
    checks = {"all": all_inputs(task, 4)}
    unscored = unscored_tokens(task)
    record = check_export(export, model, checks, unscored, compiled_inputs=40)
    scored = sum(t not in unscored for ex in checks["all"] for t in ex.tokens)
    assert record["positions_checked"]["all"] == scored
    assert record["compiled_inputs_checked"] == min(40, len(checks["all"]))


def set_head(model, head: int, key: int, accepted: list[int]):
    """Categorical head ``head`` of layer 0 reads variable ``key`` as its key and accepts
    exactly the key values ``accepted`` for every query."""
    with torch.no_grad():
        heads = model.cat[0]
        heads.key[0, head].zero_()
        heads.key[0, head, key] = 1.0
        heads.predicate[0, head] = -1.0
        heads.predicate[0, head, :, accepted] = 1.0


def test_each_head_mapping_agrees_with_the_model_past_the_width():
    """Keyed by tokens, accepting symbols that repeat (leftmost of several) or only a token
    that never occurs (always position 0); keyed by positions (saturated past the width, so
    positions repeat too)."""
    task = get_task("rasp_reverse")
    model = random_model(task, layers=1, cat=3, count=1, mlps=1, seed=11, width=8)
    vocab = list(task.vocab)
    set_head(model, 0, 0, [vocab.index("b"), vocab.index("c")])
    set_head(model, 1, 0, [vocab.index("<pad>")])  # never occurs: always position 0
    set_head(model, 2, POSITIONS, [3, 7])
    with torch.no_grad():
        mlp = model.mlp[0]
        mlp.first.zero_(), mlp.second.zero_()
        mlp.first[0, 0, 2], mlp.second[0, 0, 3] = 1.0, 1.0  # the MLP reads heads 0 and 1
    reads_component(model, 6, 4)  # the MLP and head 2
    export = to_lang(extract(model), 16)
    assert export.mapped == {
        "select_0_0": "leftmost",
        "select_0_1": "first",
        "select_0_2": "leftmost",
    }
    inputs = all_inputs(task, 3) + [
        task.example(list(xs) * 3) for xs in itertools.islice(task.inputs(4), 0, 256, 5)
    ]
    assert max(len(ex.tokens) for ex in inputs) > 8
    record = check_export(export, model, {"all": inputs}, unscored_tokens(task))
    assert record["inputs_too_long"] == 0 and record["positions_checked"]["all"] > 0


def test_counts_saturate_past_the_width_as_in_the_model():
    task = get_task("rasp_hist")
    model = random_model(task, layers=2, cat=0, count=2, mlps=1, seed=4, width=8)
    reads_component(model, model.num_variables - 1, model.num_variables - 2)
    export = to_lang(extract(model), None)
    assert export.position_range is None and set(export.mapped.values()) == {"count"}
    long = [task.example(list(xs) * 3) for xs in itertools.islice(task.inputs(5), 0, 300, 7)]
    assert max(len(ex.tokens) for ex in long) > 8
    record = check_export(export, model, {"long": long}, unscored_tokens(task))
    assert record["inputs_too_long"] == 0 and record["positions_checked"]["long"] > 0


def test_a_leftmost_head_without_a_length_bound_is_refused_with_its_name():
    task = get_task("rasp_hist")
    model = random_model(task, layers=1, cat=1, count=0, mlps=0, seed=5)
    set_head(model, 0, 0, [list(task.vocab).index("a")])
    reads_component(model, 2, 2)
    with pytest.raises(
        NotExpressible, match="select_0_0 cannot be expressed.*maximum input length"
    ):
        to_lang(extract(model), None)
    assert to_lang(extract(model), 10).mapped == {"select_0_0": "leftmost"}


def test_a_tampered_export_is_caught():
    task = get_task("rasp_hist")
    model = random_model(task, layers=1, cat=0, count=1, mlps=0, seed=2)
    reads_component(model, 2, 2)
    export = to_lang(extract(model), None)
    classes = len(task.classes)
    rules = [
        Rule(r.lhs, r.var, r.old, (r.new + 1) % classes) if r.var == "output" else r
        for r in export.program.rules
    ]
    rules = [r for r in rules if r.new != r.old]
    bad = dataclasses.replace(export, program=export.program.with_rules(rules))
    with pytest.raises(ProgramMismatch, match="rasplab.lang export"):
        check_export(bad, model, {"all": all_inputs(task, 3)}, unscored_tokens(task))
