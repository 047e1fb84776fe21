"""Compiled RASP == the evaluator, for every lib program; refusals; Tracr's known bugs."""

import pytest
import torch

from rasplab.rasp import lib, rasp
from rasplab.rasp.rasp import RaspError
from rasplab.rasp_compiler.compile import compile_rasp_to_model
from rasplab.rasp_compiler.verify import verify

DYCK = {"(", ")", "{", "}", "x"}
NUMS = {1, 2, 3, 4}
LIB = {  # name: (program builder, vocab); every program of Tracr's lib
    "make_length": (lambda n: lib.make_length(), NUMS),
    "make_reverse": (lambda n: lib.make_reverse(rasp.tokens), NUMS),
    "make_pair_balance": (lambda n: lib.make_pair_balance(rasp.tokens, "(", ")"), DYCK),
    "make_shuffle_dyck": (lambda n: lib.make_shuffle_dyck(["()"]), DYCK),
    "make_shuffle_dyck2": (lambda n: lib.make_shuffle_dyck2(), DYCK),
    "make_hist": (lambda n: lib.make_hist(), NUMS),
    "make_sort_unique": (lambda n: lib.make_sort_unique(rasp.tokens, rasp.tokens), NUMS),
    "make_sort": (
        lambda n: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=n, min_key=1), NUMS
    ),
    "make_sort_freq": (lambda n: lib.make_sort_freq(n), NUMS),
    "make_frac_prevs": (lambda n: lib.make_frac_prevs(rasp.tokens == 1), NUMS),
    "shift_by": (lambda n: lib.shift_by(2, rasp.tokens), NUMS),
    "detect_pattern": (lambda n: lib.detect_pattern(rasp.tokens, [1, 2]), NUMS),
    "make_count_less_freq": (lambda n: lib.make_count_less_freq(2), NUMS),
    "make_count": (lambda n: lib.make_count(rasp.tokens, 3), NUMS),
    "make_nary_sequencemap": (
        lambda n: lib.make_nary_sequencemap(lambda a, b, c: a * b - c, rasp.tokens,
                                            rasp.indices, rasp.tokens), NUMS,
    ),
}  # fmt: skip


def test_every_lib_program_has_a_case():
    assert sorted(LIB) == sorted(lib.PROGRAMS)


@pytest.mark.parametrize("name", sorted(LIB))
def test_lib_program_compiled_equals_evaluator(name):
    build, vocab = LIB[name]
    model = compile_rasp_to_model(build(6), vocab, 6)
    report = verify(model, exhaustive=1000, samples=100, seed=1)
    assert report.exhaustive_length >= 4 and report.random_inputs == 100
    assert report.ok, report.to_json()
    assert report.values_compared > report.inputs * report.sops // 2


def test_apply_follows_tracr_convention():
    model = compile_rasp_to_model(lib.make_reverse(rasp.tokens), {"a", "b", "c"}, 5)
    assert model.apply(["BOS", "a", "b", "c"]).decoded == ["BOS", "c", "b", "a"]
    out = model.apply(["BOS", "a", "c"])
    assert len(out.residuals) == 2 * model.model_config.num_layers + 1
    assert out.residuals[0].shape == (1, 3, len(model.residual_labels))
    assert isinstance(model.module, torch.nn.Module)
    sizes = model.sizes()
    assert sizes["layers"] == model.model_config.num_layers == 4
    assert sizes["residual_width"] == len(model.residual_labels)
    assert sizes["params"] >= sizes["module_params"] > 0


@pytest.mark.parametrize(
    "tokens,message",
    [
        (["a", "b"], "must start with the BOS token"),
        (["BOS", "z"], "token 'z' at position 1 is not in the vocabulary"),
        (["BOS"] + ["a"] * 6, "at most 5"),
    ],
)
def test_bad_inputs_are_one_line_errors(tokens, message):
    model = compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 5)
    with pytest.raises(RaspError, match=message):
        model.apply(tokens)


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
                                rasp.numerical(rasp.tokens + 0)), "numerical but must be categorical"),
        (lambda: rasp.SequenceMap(lambda a, b: a + b, rasp.numerical(rasp.tokens + 0),
                                  rasp.tokens), "needs categorical inputs"),
        (lambda: rasp.Select(rasp.numerical(rasp.tokens + 0), rasp.tokens,
                             rasp.Comparison.EQ), "must be categorical"),
        (lambda: rasp.numerical(rasp.Map(lambda x: x, lib.shift_by(1, rasp.tokens))),
         "can be None"),
        (lambda: rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT),
                                rasp.tokens, default=1), "use default=None"),
        (lambda: rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens,
                                rasp.Comparison.LT), rasp.numerical(rasp.tokens + 0),
                                default=5)), "use default=0"),
        (lambda: rasp.ConstantSOp([1, 2]), "for tests only"),
        (lambda: rasp.length + 0, "make_length"),
        (lambda: rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)
                                    | rasp.Select(rasp.indices, rasp.indices,
                                                  rasp.Comparison.LT)), "'or' or 'not'"),
    ],
)  # fmt: skip
def test_refusals_name_the_sop_and_reason(build, message):
    sel = build()
    program = sel if isinstance(sel, rasp.SOp) else rasp.SelectorWidth(sel)
    with pytest.raises(RaspError, match=f"cannot compile .*{message}"):
        compile_rasp_to_model(program, {1, 2, 3}, 4)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"max_seq_len": 0}, "max_seq_len must be"),
        ({"max_seq_len": 3, "compiler_bos": 1}, "BOS token 1 must not be in the vocabulary"),
    ],
)
def test_bad_compile_arguments(kwargs, message):
    with pytest.raises(RaspError, match=message):
        compile_rasp_to_model(lib.make_hist(), {1, 2}, **kwargs)


def test_empty_categorical_aggregate_is_none_exactly():
    # Tracr's silent error: an empty categorical selection decodes to some value
    first_bigger = rasp.Aggregate(
        rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GT), rasp.tokens
    )
    model = compile_rasp_to_model(first_bigger, {1, 2, 3}, 4)
    assert model.apply(["BOS", 3, 3]).decoded == ["BOS", None, None]
    assert verify(model, samples=0).ok


def test_selector_width_exact_past_ten_tokens():
    model = compile_rasp_to_model(lib.make_hist(), {"a", "b"}, 24)
    xs = ["a"] * 17 + ["b"] * 7
    assert model.apply(["BOS", *xs]).decoded[1:] == [17] * 17 + [7] * 7
    assert verify(model, exhaustive=1000, samples=200).ok


def test_causal_exact_or_refused():
    frac = lib.make_frac_prevs(rasp.tokens == 1)
    model = compile_rasp_to_model(frac, {1, 2}, 6, causal=True)
    assert model.model_config.causal and verify(model, samples=50).ok
    pattern = compile_rasp_to_model(lib.detect_pattern(rasp.tokens, [1, 2]), {1, 2}, 5, causal=True)
    assert verify(pattern, samples=0).ok
    with pytest.raises(RaspError, match="cannot compile 'length'.*causal=True"):
        compile_rasp_to_model(lib.make_length(), {1, 2}, 5, causal=True)


def test_float64_when_float32_cannot_be_proved_exact():
    model = compile_rasp_to_model(lib.make_count_less_freq(2), {1, 2, 3}, 20)
    assert model.sizes()["dtype"] == "float64"
    with pytest.raises(RaspError, match="too close to tell apart"):
        compile_rasp_to_model(lib.make_count_less_freq(2), {1, 2, 3}, 20, dtype=torch.float32)
    small = compile_rasp_to_model(lib.make_count_less_freq(2), {1, 2, 3}, 5)
    assert small.sizes()["dtype"] == "float32"


def test_pad_positions_are_never_read():
    model = compile_rasp_to_model(lib.make_hist(), {1, 2}, 5, compiler_pad="PAD")
    assert model.apply(["BOS", 1, 2, 1, "PAD", "PAD"]).decoded == ["BOS", 2, 1, 2, "PAD", "PAD"]


BEYOND_LIB = {  # constructions the lib does not use: and of different SOps, not, or, Full, ...
    "and_of_different_sops": lambda: rasp.SelectorWidth(
        rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LEQ)
        & rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LT)
    ),
    "numerical_mean_of_categorical": lambda: rasp.numerical(
        rasp.Aggregate(
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GEQ), rasp.tokens, default=0
        )
    ),
    "full": lambda: rasp.SequenceMap(lambda a, b: a * b, rasp.Full(3), rasp.tokens),
    "not": lambda: rasp.SelectorWidth(~rasp.Select(rasp.tokens, rasp.indices, rasp.Comparison.EQ)),
    "or_same_sops": lambda: rasp.SelectorWidth(
        rasp.SelectorOr(
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT),
            rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.GT),
        )
    ),
    "map_of_numerical": lambda: rasp.Map(
        lambda x: round(x * 4), lib.make_frac_prevs(rasp.tokens == 1)
    ),
    "aggregate_of_aggregate": lambda: rasp.Aggregate(
        rasp.Select(rasp.indices, rasp.indices, lambda k, q: q == k + 1),
        lib.make_reverse(rasp.tokens),
    ),
}


@pytest.mark.parametrize("name", sorted(BEYOND_LIB))
def test_constructions_beyond_lib_compile_exactly(name):
    model = compile_rasp_to_model(BEYOND_LIB[name](), {1, 2, 3, 4}, 6)
    assert verify(model, exhaustive=400, samples=50).ok
