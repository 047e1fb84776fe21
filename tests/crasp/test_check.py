"""check_program: wrong programs are caught, with the first disagreeing input."""

import pytest

from rasplab.crasp import Q, count, crasp_program, next_set, next_token
from rasplab.crasp.check import check_program
from rasplab.crasp.library import algorithmic
from rasplab.errors import RasplabError


def test_a_wrong_membership_program_is_caught_on_strings_outside_the_language():
    # "at most one 0" instead of 1*: every positive string agrees, negative ones do not
    wrong = crasp_program("almost_tomita1", count(Q("0")) <= 1, "01")
    result = check_program(wrong, "tomita1", lengths="1-30", samples=200)
    assert not result.ok and result.agree >= 200
    d = result.first_disagreement
    assert d["what"] == "membership" and d["expected"] is False and d["got"] is True
    assert d["input"].split()[: d["position"]].count("0") == 1


def test_a_wrong_next_set_is_caught_on_the_task_strings():
    live = (count(Q("0")) == 0).named("live")
    wrong = crasp_program("t", live, "01", readout=next_set({"1": live, "0": live, "<eos>": live}))
    d = check_program(wrong, "tomita1", lengths="1-10", samples=50).first_disagreement
    assert d["what"] == "next set" and d["expected"] == ["1", "<eos>"]
    assert d["got"] == ["0", "1", "<eos>"] and d["origin"] == "task"


def test_a_wrong_next_token_is_caught():
    # majority with the comparison reversed
    zeros, ones = count(Q("0")), count(Q("1"))
    table = {
        "0": Q("<sep>") & (ones > zeros),
        "1": Q("<sep>") & (zeros > ones),
        "<eos>": ~Q("<sep>") & (count(Q("<sep>")) >= 1),
    }
    wrong = crasp_program("minority", table["<eos>"], ("0", "1", "<sep>"), next_token(table))
    result = check_program(wrong, "binary_majority", lengths="1-20", samples=100)
    assert result.agree == 0 and result.first_disagreement["what"] == "next token"


def test_the_program_must_fit_the_task():
    small = algorithmic.sort(("0", "1", "2"))
    with pytest.raises(RasplabError, match="not in the alphabet of program 'sort'"):
        check_program(small, "sort", lengths="3-5", samples=5)
    with pytest.raises(RasplabError, match="needs a token readout"):
        check_program(crasp_program("t", count(Q("0")) > 0, "01"), "binary_majority", samples=5)
    with pytest.raises(RasplabError, match="regression targets"):
        check_program(crasp_program("t", count(Q("0")) > 0, "012"), "simple_task", samples=5)
