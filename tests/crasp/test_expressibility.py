"""The expressibility rows against the seed's Tables 2 and 3, and the prediction rule."""

from __future__ import annotations

import pytest

from rasplab.crasp import library
from rasplab.crasp.expressibility import RECORDED, row, rows, task_names
from rasplab.errors import RasplabError
from rasplab.harness.sweepconfig import load_sweep
from rasplab.tasks import Example, Task, register
from rasplab.tasks import task_names as registered
from rasplab.tasks.automata import Automaton

# Huang et al. Table 2 (C-RASP[], C-RASP[periodic,local], dot-depth) and Table 3 (C-RASP[],
# C-RASP[periodic,local], AC0), as printed in the paper.
TABLE2 = {
    "tomita1": ("yes", "yes", 1),
    "tomita2": ("yes", "yes", 1),
    "tomita3": ("no", "no", None),
    "tomita4": ("no", "yes", 1),
    "tomita5": ("no", "no", None),
    "tomita6": ("no", "no", None),
    "tomita7": ("yes", "yes", 1),
    "d2": ("yes", "yes", 2),
    "d3": ("yes", "yes", 3),
    "d4": ("yes", "yes", 4),
    "d12": ("yes", "yes", 12),
    "parity_language": ("no", "no", None),
    "aa_star": ("no", "yes", None),
    "aaaa_star": ("no", "yes", None),
    "abab_star": ("no", "yes", None),
    "aa_bb_cc_dd_ee": ("yes", "yes", 1),
    "ab_d_bc": ("yes", "yes", 1),
    "zot_0_two": ("no", "no", 2),
}
TABLE3 = {
    "binary_majority": ("yes", "yes", False),
    "binary_majority_interleave": ("none found", "yes", False),
    "majority": ("yes", "yes", False),
    "sort": ("yes", "yes", True),
    "copy_unique": ("no", "yes", True),
    "copy_repeat": ("no", "no", True),
    "parity": ("no", "no", False),
    "addition": ("no", "no", True),
}


def test_rows_are_tables_2_and_3_in_order():
    assert task_names() == [*TABLE2, *TABLE3]


@pytest.mark.parametrize("task", sorted(TABLE2))
def test_language_rows_match_table2(task):
    r = row(task)
    assert (r.crasp.answer, r.crasp_periodic_local.answer, r.dot_depth) == TABLE2[task]
    assert r.ac0_source == "computed" and r.star_free is not None
    assert (r.dot_depth is not None) == r.star_free  # Table 2 gives a dot-depth iff star-free


@pytest.mark.parametrize("task", sorted(TABLE3))
def test_algorithmic_rows_match_table3(task):
    r = row(task)
    assert (r.crasp.answer, r.crasp_periodic_local.answer, r.ac0) == TABLE3[task]
    assert r.star_free is None and r.ac0_source == "Table 3"


def test_yes_names_a_library_program_of_that_class_and_no_has_a_citation():
    for r in rows():
        for cls, v in (("C-RASP[]", r.crasp), ("C-RASP[periodic,local]", r.crasp_periodic_local)):
            if v.answer == "yes":
                entry = library.get(v.program)
                assert entry.task == r.task and entry.program().within(cls)
            else:
                assert v.program is None and v.reason and v.detail
                assert RECORDED[(r.task, cls)][0] == v.answer


def test_prediction_follows_the_classes():
    expected = {"yes": "guaranteed (NoPE)"}
    for r in rows():
        want = expected.get(r.crasp.answer) or (
            "guaranteed (APE)" if r.crasp_periodic_local.answer == "yes" else "not guaranteed"
        )
        assert r.prediction == want
    assert [r.task for r in rows() if r.prediction == "guaranteed (APE)"] == [
        "tomita4",
        "aa_star",
        "aaaa_star",
        "abab_star",
        "binary_majority_interleave",
        "copy_unique",
    ]


def test_every_figure1_task_has_a_row_and_every_row_but_parity_language_is_a_task():
    fig1 = {r.task for r in load_sweep("configs/fig1_cpu_scale.yaml").expand()}
    assert fig1 <= set(task_names())
    assert set(task_names()) - set(registered()) == {"parity_language"}


def test_rows_subset_in_table_order_and_unknown_names():
    assert [r.task for r in rows(["sort", "tomita1"])] == ["tomita1", "sort"]
    with pytest.raises(RasplabError, match="unknown task for the C-RASP table 'tomita9'"):
        rows(["tomita9"])


class UserAbStar(Task):
    """A user's own language task: (ab)*, star-free (complement of b... + ...a + ...aa... +
    ...bb...), so in AC0; no C-RASP program is known to rasplab."""

    name = "user_ab_star"
    description = "(ab)*"
    vocab = ("<pad>", "<bos>", "<eos>", "a", "b")
    target_kind = "next_set"
    automaton = Automaton.build("ab", {"s": {"a": "t"}, "t": {"b": "s"}}, "s", {"s"})

    def sample(self, rng, length):
        s = "ab" * (length // 2)
        return Example(("<bos>", *s, "<eos>"), (*self.automaton.next_sets(s), None), length)


if UserAbStar.name not in registered():
    register(UserAbStar.name)(UserAbStar)


def test_a_users_registered_tasks_get_rows_with_what_can_be_computed():
    hist, mine = rows(["rasp_hist", "user_ab_star", "tomita2"])[1:]
    assert rows(["rasp_hist", "user_ab_star", "tomita2"])[0].task == "tomita2"
    assert (mine.star_free, mine.ac0, mine.ac0_source, mine.monoid_size) == (
        True,
        True,
        "computed",
        6,
    )
    assert (mine.crasp.answer, mine.crasp_periodic_local.answer, mine.prediction) == (
        "not known",
        "not known",
        "not known",
    )
    assert (hist.info.kind, hist.star_free, hist.ac0, hist.prediction) == (
        "other",
        None,
        None,
        "not known",
    )
