"""Program == model on randomly weighted discrete transformers, exhaustively for small lengths;
a corrupted program is caught; the discretised semantics match a reference written from the
rules (leftmost match, counts after position 0, saturation at CAP)."""

from __future__ import annotations

import itertools

import pytest
import torch

from rasplab.learned.data import encode
from rasplab.learned.decompile import decompile, extract, load_learned_program, needed
from rasplab.learned.model import DiscreteTransformer, Shape
from rasplab.learned.train import predict
from rasplab.learned.verify import ProgramMismatch, all_inputs, compare, verify
from rasplab.tasks import get_task


def random_model(task, layers=2, cat=2, count=2, mlps=2, seed=0, width=None):
    shape = Shape(
        vocab=tuple(task.vocab),
        classes=tuple(task.classes),
        width=width or max(len(task.vocab), task.max_tokens(task.max_length)),
        layers=layers,
        cat_heads=cat,
        count_heads=count,
        mlps=mlps,
    )
    model = DiscreteTransformer(shape, seeds=(seed,))
    gen = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen))
    return model


@pytest.mark.parametrize(
    "name,layers,cat,count,mlps,seed",
    [
        ("rasp_hist", 1, 2, 2, 2, 0),
        ("rasp_reverse", 2, 2, 1, 2, 1),
        ("rasp_sort", 3, 1, 2, 1, 2),
        ("rasp_dyck1", 2, 2, 2, 2, 3),
        ("rasp_most_freq", 2, 0, 3, 1, 4),
        ("rasp_double_hist", 1, 3, 0, 0, 5),
    ],
)
def test_program_equals_random_model_on_every_input_up_to_length_4(
    name, layers, cat, count, mlps, seed
):
    task = get_task(name)
    model = random_model(task, layers, cat, count, mlps, seed)
    run = load_learned_program(decompile(model, task))["run"]
    examples = all_inputs(task, 4)
    agreement = compare(run, model, examples)
    assert agreement.first_divergence is None
    assert agreement.total == sum(len(ex.tokens) - 1 - ("<eos>" in ex.tokens) for ex in examples)


def test_program_equals_model_beyond_the_width_where_positions_and_counts_saturate():
    task = get_task("rasp_hist")
    model = random_model(task, layers=2, seed=7, width=8)
    run = load_learned_program(decompile(model, task))["run"]
    long = [task.example(list(xs) * 3) for xs in itertools.islice(task.inputs(5), 0, 300, 7)]
    assert max(len(ex.tokens) for ex in long) > 8
    assert compare(run, model, long).first_divergence is None


def test_a_changed_table_entry_is_reported_with_the_first_input():
    task = get_task("rasp_hist")
    model = random_model(task, layers=1, cat=1, count=1, mlps=1, seed=3)
    names = load_learned_program(decompile(model, task))
    # give every readout cell another class: any scored position now disagrees
    for row in names["OUTPUT"].values():
        for b, old in row.items():
            row[b] = next(c for c in task.classes if c != old)
    with pytest.raises(ProgramMismatch, match="first at position"):
        verify(names["run"], model, {"all inputs": all_inputs(task, 3)})


def reference_select(query, key, value, pred):
    """Leftmost j with pred(query_i, key_j), else 0 -- written from the rule, not the code."""
    out = []
    for q in query:
        matches = [j for j, k in enumerate(key) if pred(q, k)]
        out.append(value[matches[0] if matches else 0])
    return out


def test_hard_categorical_head_follows_the_leftmost_match_rule():
    task = get_task("rasp_hist")
    model = random_model(task, layers=1, cat=1, count=0, mlps=0, seed=11)
    head = model.cat[0]
    with torch.no_grad():  # query = tokens, key = tokens, value = positions
        for p, idx in ((head.query, 0), (head.key, 0), (head.value, 1)):
            p.zero_()
            p[0, 0, idx] = 1.0
    pred = head.predicate[0, 0] > 0
    ex = task.example("cabca")
    batch = encode([ex], task.vocab, task.classes)
    stream = model.stream(batch.ids, batch.mask, hard=True)
    got = stream[0, 0, :, 2, :].argmax(-1).tolist()
    ids = batch.ids[0].tolist()
    want = reference_select(ids, ids, list(range(len(ids))), lambda q, k: bool(pred[q, k]))
    assert got == want


def test_dead_components_are_left_out_of_the_program():
    task = get_task("rasp_hist")
    model = random_model(task, layers=2, cat=2, count=2, mlps=2, seed=5)
    ex = extract(model)
    kept = needed(ex)
    assert len(kept) < len(ex.components)
    source = decompile(model, task)
    dropped = {c.name for c in ex.components} - {c.name for c in kept}
    assert all(f"{name} = " not in source for name in dropped)
    batch = encode(all_inputs(task, 2), task.vocab, task.classes)
    assert predict(model, batch).shape == (1, *batch.ids.shape)


def test_program_is_standalone_and_rejects_unknown_tokens():
    task = get_task("rasp_sort")
    source = decompile(random_model(task, seed=2), task, ("<bos>", "b", "a", "<eos>"))
    assert "import" not in source
    run = load_learned_program(source)["run"]
    out = run(["<bos>", "b", "a", "<eos>"])
    assert out[0] is None and out[-1] is None and all(y in task.classes for y in out[1:-1])
    assert repr(out) in source  # the docstring's worked example is the program's own output
    with pytest.raises(ValueError, match="not in the vocabulary"):
        run(["<bos>", "z"])


def test_a_seed_batch_holds_the_models_each_seed_builds_alone():
    task = get_task("rasp_sort")
    shape = random_model(task, seed=0).shape
    batch = DiscreteTransformer(shape, seeds=(3, 5))
    alone = DiscreteTransformer(shape, seeds=(5,))
    one = batch.select(1)
    assert all(
        torch.equal(a, b) for a, b in zip(one.state_dict().values(), alone.state_dict().values())
    )
    with torch.no_grad():  # random weights, so the outputs differ per seed
        for p in batch.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(9)))
    data = encode(all_inputs(task, 3), task.vocab, task.classes)
    both = predict(batch, data)
    assert torch.equal(both[1], predict(batch.select(1), data)[0])
    assert torch.equal(both[0], predict(batch.select(0), data)[0])
    with pytest.raises(Exception, match="one seed at a time"):
        extract(batch)
