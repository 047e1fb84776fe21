"""The paper's score of a trained Chomsky run, against the same numbers computed apart: greedy
decoding token by token (the model fed its own predictions) for the whole-sequence accuracy,
and the per-token accuracy written from the answer tokens directly."""

from __future__ import annotations

from collections import defaultdict

import pytest
import torch

from rasplab.errors import RasplabError
from rasplab.harness.config import ExperimentConfig, experiment_from_dict
from rasplab.harness.setup import load_run
from rasplab.harness.train import train
from rasplab.reports.chomsky_score import run_score, select_best


def _config(task: str, **eval_kw) -> ExperimentConfig:
    return experiment_from_dict(
        {
            "task": task,
            "variant": "nope",
            "seed": 0,
            "model": {"pe": "nope", "layers": 1, "heads": 1, "width": 16},
            "train": {"steps": 30, "batch_size": 16, "lr": 0.003, "eval_every": 30},
            "eval": {"size": 12, "batch_size": 12, "bins": ["1-40", "41-60", "61-70"], **eval_kw},
        }
    )


@pytest.fixture(scope="module")
def reverse_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("rev") / "run"
    train(_config("reverse_string"), run_dir=path)
    return path


def _greedy(model, encoder, ex):
    """Answer tokens by generation: feed back each prediction; count right tokens."""
    sep = ex.tokens.index("<sep>")
    ids = [encoder.tokens.index(t) for t in ex.tokens[: sep + 1]]
    right, whole = [], True
    for k in range(len(ex.tokens) - sep - 1):
        logits = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.bool), None)
        pred = encoder.classes[int(logits[0, -1].argmax())]
        want = ex.tokens[sep + 1 + k]
        whole &= pred == want
        ids.append(encoder.tokens.index(pred))
        right.append(pred == want)
    return right, whole


def test_score_matches_a_separate_computation(reverse_run):
    s = run_score(str(reverse_run))
    config, setup = load_run(reverse_run)
    task, enc = setup.encoder.task, setup.encoder
    by_length, whole_by_bin = defaultdict(list), {}
    for b in ("41-60", "61-70"):
        examples = task.dataset("test", b, 12, config.seed)
        wholes = []
        for ex in examples:
            sep = ex.tokens.index("<sep>")
            ids = torch.tensor([[enc.tokens.index(t) for t in ex.tokens]])
            pred = setup.model(ids, torch.ones_like(ids, dtype=torch.bool), None)[0].argmax(-1)
            answer = ex.tokens[sep + 1 : -1]  # the paper's outputs: no <eos> for reverse
            forced = [enc.classes[int(pred[sep + k])] == a for k, a in enumerate(answer)]
            by_length[ex.length].append(sum(forced) / len(forced))
            wholes.append(_greedy(setup.model, enc, ex)[1])
        whole_by_bin[b] = sum(wholes) / len(wholes)
    means = [sum(v) / len(v) for v in by_length.values()]
    assert s.score == pytest.approx(sum(means) / len(means))
    assert s.sequence_by_bin == pytest.approx(whole_by_bin)
    assert set(s.per_length) == set(by_length) and s.examples == 24


def test_selection_and_bad_input(reverse_run, tmp_path):
    s = run_score(str(reverse_run))
    worse = type(s)(**{**s.__dict__, "run_id": "x", "score": s.score - 0.1})
    assert select_best([worse, s]) == [s]
    with pytest.raises(RasplabError, match="no finished run"):
        run_score(str(tmp_path))


def test_report_option_writes_the_scores_of_the_store(tmp_path, capsys):
    from rasplab.cli import main
    from rasplab.harness.store import ResultsStore

    config = _config("parity_check")
    run_dir = tmp_path / "runs" / "p"
    result = train(config, run_dir=run_dir)
    db = tmp_path / "results.sqlite"
    with ResultsStore(db) as store:
        store.register(config, run_dir=str(run_dir))
        store.finish(result)
    with pytest.raises(SystemExit) as done:
        main(["report", "--db", str(db), "--chomsky-score", "--paper-selection"])
    assert done.value.code in (0, None)
    table = (tmp_path / "report" / "chomsky_score.md").read_text().splitlines()
    assert len(table) == 3 and table[2].startswith("| parity_check | nope | 0 |")
    want = run_score(str(run_dir))
    assert f"| {100 * want.score:.1f} |" in table[2]
