"""The C-RASP compiler: every library program and random programs compiled and verified
against the interpreter at every operation and position; layers independent of N; a
corrupted weight is caught; export round trip; precision refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rasplab.crasp import Q, count, crasp_program, library, offset, periodic
from rasplab.crasp.interpreter import run
from rasplab.crasp.random_programs import random_program
from rasplab.crasp_compiler.compile import compile_program, model_stats
from rasplab.crasp_compiler.export import load_compiled, save_compiled
from rasplab.crasp_compiler.verify import default_exhaustive, verify
from rasplab.errors import RasplabError

N = 24


@pytest.mark.parametrize("name", library.names())
def test_every_library_program_compiles_and_agrees_with_the_interpreter(name):
    p = library.program(name)
    k = min(default_exhaustive(len(p.alphabet), N), 6 if len(p.alphabet) <= 3 else 1)
    report = verify(p, max_length=N, exhaustive_up_to=k, samples=12, seed=1)
    assert report.first_divergence is None
    assert report.agree == report.total == sum(len(p.alphabet) ** n for n in range(k + 1)) + 12


def test_random_programs_of_every_kind_compile_exactly():
    rng = np.random.default_rng(7)
    kinds = set()
    for _ in range(40):
        p = random_program(rng, size=int(rng.integers(4, 16)))
        kinds |= {op.kind for op in p.ops}
        report = verify(p, max_length=20, exhaustive_up_to=4, samples=20, seed=2)
        assert report.ok, (p.listing(), report.first_divergence)
    assert kinds >= {"count", "cond", "add", "sub", "periodic", "compare", "compare_const"}


def test_random_programs_stay_exact_at_long_lengths():
    rng = np.random.default_rng(11)
    for _ in range(15):
        p = random_program(rng, size=12, max_constant=40)
        report = verify(p, max_length=300, exhaustive_up_to=2, lengths="250-300", samples=4)
        assert report.ok, (p.listing(), report.first_divergence)


def test_counts_never_count_the_start_position_where_their_predicate_holds_there():
    # NOT b holds at the start position (no symbol there); no count of any kind may see it
    not_b = (~Q("b")).named("p")
    counts = {
        "c2": count(not_b, offset(2), name="c2"),
        "c0": count(not_b, offset(0), name="c0"),
        "all": count(not_b, name="all"),
    }
    out = ((counts["c2"] + counts["c0"] + counts["all"]) >= 1).named("out")
    p = crasp_program("start", out, "ab")
    m = compile_program(p, max_length=8)
    ids = torch.tensor([[0, 2, 2, 1, 2, 2]])  # <bos> b b a b b
    decoded = m.decode(m(ids))
    values = run(p, ["b b a b b"]).values
    want = {"c2": [0, 0, 0, 0, 0, 1], "c0": [0, 0, 0, 1, 0, 0], "all": [0, 0, 0, 1, 1, 1]}
    for name, expected in want.items():
        assert values[name][0].tolist() == expected, name
        got = decoded[name][0]
        assert torch.allclose(got, torch.tensor(expected, dtype=got.dtype), atol=1e-5), name


def test_layers_follow_the_nesting_depth_not_the_maximum_length():
    for name in ("tomita1", "binary_majority", "tomita4", "d12", "abab_star"):
        sizes = {
            n: {k: v for k, v in model_stats(compile_program(library.program(name), n)).items()}
            for n in (8, 512, 100_000)
        }
        shapes = {(s["layers"], s["heads"], s["width"]) for s in sizes.values()}
        assert len(shapes) == 1, (name, sizes)
    # one counting depth: one layer of attention (plus the MLP depth of the comparisons)
    assert model_stats(compile_program(library.program("tomita1"), 8))["layers"] == 1
    deeper = crasp_program("deep", count(count(Q("a")) >= 1) >= 2, "ab")
    assert model_stats(compile_program(deeper, 8))["layers"] == 2


def test_precision_is_derived_from_the_maximum_length():
    p = library.program("d2")
    assert compile_program(p, 16).spec["dtype"] == "float32"
    assert compile_program(p, 512).spec["dtype"] == "float64"
    with pytest.raises(RasplabError, match="beyond what float64 can certify"):
        compile_program(p, 10**8)
    with pytest.raises(RasplabError, match="float32 cannot certify"):
        compile_program(p, 512, dtype="float32")


def test_verify_catches_a_corrupted_weight():
    p = library.program("binary_majority")
    m = compile_program(p, max_length=16)
    w = m.l0_mlp_W_1
    values = w.values().clone()
    values[0] = -values[0]  # flip the sign of one weight
    m.l0_mlp_W_1 = torch.sparse_coo_tensor(w.indices(), values, w.shape).coalesce()
    report = verify(p, exhaustive_up_to=4, samples=10, model=m)
    assert not report.ok and report.agree < report.total
    d = report.first_divergence
    assert set(d) == {"input", "position", "operation", "expected", "got"}
    assert abs(d["got"] - float(d["expected"])) >= 0.25


def test_export_round_trip_and_nothing_left_on_error(tmp_path):
    p = library.program("tomita4")
    m = compile_program(p, max_length=32)
    save_compiled(m, tmp_path / "m")
    assert sorted(f.name for f in (tmp_path / "m").iterdir()) == [
        "model.json",
        "model.safetensors",
    ]
    loaded = load_compiled(tmp_path / "m", p)
    assert verify(p, exhaustive_up_to=5, samples=10, model=loaded).ok
    ids = torch.tensor([[0, 1, 1, 1, 2, 1]])
    assert torch.equal(m.decode_all(m(ids)), loaded.decode_all(loaded(ids)))
    with pytest.raises(RasplabError, match="operations differ"):
        load_compiled(tmp_path / "m", library.program("tomita1"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(RasplabError, match="is a file"):
        save_compiled(m, tmp_path / "file")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["file", "m"]


def test_periodic_predicates_come_from_the_positional_encoding():
    p = crasp_program("mod3", (periodic(3, 0, 2) & Q("a")).named("out"), "ab")
    report = verify(p, max_length=40, exhaustive_up_to=6, samples=20)
    assert report.ok and model_stats(compile_program(p, 40))["heads"] == 0
