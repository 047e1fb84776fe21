"""InputSpec: how a program's valid inputs look (start token, separator, alphabet per position,
sampler), checked, sampled and enumerated; program() refuses a spec outside the input range;
an out-of-range MLP write names its function and path."""

from __future__ import annotations

import numpy as np
import pytest

from rasplab.errors import RasplabError
from rasplab.lang import InputSpec, input_var, program, var


def test_start_and_separator_are_placed_and_counted():
    spec = InputSpec(start=0, separator=3, alphabet=(1, 2))
    rng = np.random.default_rng(1)
    for n in range(2, 7):
        for _ in range(20):
            ids = spec.sample(rng, n)
            assert len(ids) == n and ids[0] == 0 and ids.count(3) == 1
            assert spec.problem(ids) is None
        every = list(spec.enumerate(n))
        # the separator at one of n - 1 places, the other n - 2 positions from 2 symbols
        assert len(every) == spec.count(n) == (n - 1) * 2 ** (n - 2)
        assert len({tuple(x) for x in every}) == len(every)
        assert all(spec.problem(x) is None for x in every)
    assert spec.count(1) == 0 and list(spec.enumerate(1)) == []


def test_an_alphabet_per_position():
    spec = InputSpec(alphabet=lambda i, n: (1,) if i == n - 1 else (0, 2))
    assert list(spec.enumerate(2, 3)) == [[0, 1], [2, 1]]
    assert spec.problem([1, 1], 3) == "token 1 is not allowed at position 0"


def test_no_alphabet_means_every_token_but_the_special_ones():
    spec = InputSpec(start=0)
    assert sorted({t for x in spec.enumerate(2, 4) for t in x[1:]}) == [1, 2, 3]
    assert spec.problem([0, 0], 4) == "the start token 0 may appear only at position 0"


def test_a_sampler_is_used_as_given_and_not_enumerated():
    spec = InputSpec(sampler=lambda rng, n: [1] * n)
    assert spec.sample(np.random.default_rng(0), 3) == [1, 1, 1] and spec.count(3) is None
    with pytest.raises(RasplabError, match="cannot enumerate"):
        list(spec.enumerate(2))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"start": 0, "separator": 0}, "start and separator are both token 0"),
        ({"start": "a"}, "start must be an int token id"),
        ({"alphabet": "ab"}, "alphabet must be a sequence of token ids"),
        ({"alphabet": ()}, "at least one int token id"),
        ({"sampler": 3}, "sampler must be a function"),
    ],
)
def test_bad_specs_are_one_line(kwargs, message):
    with pytest.raises(RasplabError, match=message):
        InputSpec(**kwargs)


def test_program_refuses_a_spec_outside_its_input_range():
    parts = ({"tok": input_var(3), "out": var(3)}, {}, [], "out", 3)
    with pytest.raises(RasplabError, match="token id 5, outside the input range"):
        program(*parts, max_layers=1, inputs=InputSpec(start=5))
    with pytest.raises(RasplabError, match="inputs must be an InputSpec"):
        program(*parts, max_layers=1, inputs={"start": 0})
    p = program(*parts, max_layers=1, inputs=InputSpec(start=0))
    assert p.with_rules([]).inputs == InputSpec(start=0)


def test_an_out_of_range_write_names_the_function_and_the_path():
    # issue #39: "value written to 'out' 2 is outside ..." named neither
    def step(x):
        if x["tok"] == 1:
            x["out"] = 2

    with pytest.raises(RasplabError) as err:
        program({"tok": input_var(2), "out": var(2)}, {}, step, "out", 2, max_layers=1)
    assert str(err.value) == (
        "MLP function 'step', on the path where tok == 1: value written to 'out' 2 is outside "
        "the variable's range [0, 2)"
    )


def test_rules_and_traces_print_a_number_the_same_way():
    # issue #39: rule text printed 0.3333333333333333 where traces printed 0.3333
    from rasplab.lang import interpret, numeric_var, qkv, set_var

    def mlp(x):
        if x["m"] == 1 / 3:
            x["out"] = 1

    p = program(
        {
            "tok": input_var(3),
            "q": set_var(3, default=frozenset({0, 1, 2})),
            "v": numeric_var(input_init_fn=lambda t: float(t == 1)),
            "out": var(2),
        },
        {"m": qkv("q", "tok", "v", output=numeric_var(values=(0.0, 1 / 3, 1.0)))},
        mlp,
        "out",
        3,
        max_layers=1,
        undefined="no_match",
    )
    assert "m == 1/3" in str(p.rules[0])
    table = interpret(p, [[0, 1, 2]], trace=True).traces[0].table()
    assert "1/3" in table and "0.3333" not in table
