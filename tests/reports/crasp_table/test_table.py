"""`rasplab crasp table` on a tiny real sweep (trained by the harness in the test), and the
comparison rule on hand-made measurements."""

from __future__ import annotations

import csv
import io
import json

import pytest
import torch
import yaml

from rasplab.cli import main
from rasplab.errors import RasplabError
from rasplab.harness import ResultsStore, run_sweep
from rasplab.reports.crasp_table.measure import Measurement, measure
from rasplab.reports.crasp_table.table import TableRow, build_table
from rasplab.reports.crasp_table.text import csv_text, markdown, records

from .hand_runs import THREE

SWEEP = {
    "name": "tiny_fig1",
    "base": {
        "model": {"layers": 1, "heads": 1, "width": 8},
        "train": {"steps": 10, "batch_size": 8, "eval_every": 10, "lr": 0.01, "bin": "1-6"},
        "eval": {"size": 12, "batch_size": 12, "bins": ["1-6", "7-10", "11-14"]},
    },
    "grid": {"task": ["tomita1", "aa_star"], "variant": ["ape", "nope"], "seed": [0, 1]},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A results store with 8 real runs (2 tasks x APE/NoPE x 2 seeds, tiny models)."""
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("sweep")
    db = folder / "results.sqlite"
    summary = run_sweep(SWEEP, db, workers=1, progress=False)
    assert summary.executed == 8 and summary.failed == 0
    config = folder / "tiny.yaml"
    config.write_text(yaml.safe_dump(SWEEP))
    return db, config


def stored(db):
    with ResultsStore(db, create=False) as s:
        return s.runs()


def by_definition(runs, threshold):
    """Fitted seeds and 'generalizes' recomputed straight from the stored metrics."""
    fitted = [r for r in runs if r.metrics["bins"]["1-6"] >= threshold]
    if not fitted:
        return fitted, "not fitted"
    ok = all(
        sum(r.metrics["bins"][b] for r in fitted) / len(fitted) >= threshold
        for b in ("7-10", "11-14")
    )
    return fitted, "generalizes" if ok else "does not generalize"


@pytest.mark.parametrize("threshold", [0.5, 0.9, 1.0])
def test_measurements_are_the_stored_runs_means(store, threshold):
    db, _ = store
    runs = stored(db)
    measured = measure(db, threshold=threshold)
    assert set(measured) == {(t, e) for t in ("tomita1", "aa_star") for e in ("APE", "NoPE")}
    for (task, enc), m in measured.items():
        mine = [r for r in runs if r.task == task and r.config["model"]["pe"] == enc.lower()]
        assert len(mine) == 2 and m.seeds == (0, 1) and m.id_bins == ("1-6",)
        assert m.bins == ("1-6", "7-10", "11-14") and m.ood_bins == ("7-10", "11-14")
        for b in m.bins:
            assert m.all[b] == pytest.approx(sum(r.metrics["bins"][b] for r in mine) / 2)
        fitted, status = by_definition(mine, threshold)
        assert m.fitted_seeds == tuple(sorted(r.seed for r in fitted)) and m.status == status
        assert m.counts == mine[0].metrics["counts"]


def test_table_compares_prediction_and_measurement(store):
    db, _ = store
    table = build_table(db=db, tasks=["tomita1", "aa_star", "parity_language"], threshold=0.9)
    rows = {r.row.task: r for r in table.rows}
    assert rows["parity_language"].agree == "not measured"
    for task in ("tomita1", "aa_star"):
        r = rows[task]
        for enc in ("APE", "NoPE"):
            m = r.measurement(enc)
            if m.status == "not fitted":
                assert r.agreement(enc) == "inconclusive"
            else:
                guaranteed = enc == "APE" or r.row.prediction == "guaranteed (NoPE)"
                generalizes = m.status == "generalizes"
                if guaranteed:
                    assert r.agreement(enc) == ("yes" if generalizes else "no")
                else:  # no guarantee: never scored as agreement
                    assert r.agreement(enc) == ("no prediction" if generalizes else "consistent")
    recs = {rec["task"]: rec for rec in records(table)}
    assert (
        recs["aa_star"]["measured"]["APE"]["accuracy_all_seeds"]
        == rows["aa_star"].measurement("APE").all
    )
    assert recs["parity_language"]["measured"] == {"APE": None, "NoPE": None}
    text = markdown(table)
    assert "| tomita1 | NoPE | 1-6 / 7-10 / 11-14 |" in text
    lines = list(csv.DictReader(io.StringIO(csv_text(table))))
    assert [line["task"] for line in lines] == ["tomita1", "parity_language", "aa_star"]
    assert lines[1]["APE_status"] == "not measured"


def test_config_keeps_only_its_grid_and_other_settings_are_an_error(store, tmp_path):
    db, config = store
    only_tomita = dict(SWEEP, grid=dict(SWEEP["grid"], task=["tomita1"]))
    path = tmp_path / "only_tomita.yaml"
    path.write_text(yaml.safe_dump(only_tomita))
    table = build_table(db=db, config=path, tasks=["tomita1", "aa_star"])
    assert [r.agree == "not measured" for r in table.rows] == [False, True]
    # a config whose grid no stored run belongs to (one setting changed) is an error
    changed = dict(SWEEP, base=dict(SWEEP["base"], train=dict(SWEEP["base"]["train"], steps=11)))
    path.write_text(yaml.safe_dump(changed))
    with pytest.raises(RasplabError, match="none of the 8 runs .* belongs to the current grid"):
        build_table(db=db, config=path)
    # a second setting for one task (another learning rate) in the same store
    other = dict(SWEEP, name="other_lr")
    other["base"] = dict(SWEEP["base"], train=dict(SWEEP["base"]["train"], lr=0.02))
    copy_db = tmp_path / "copy.sqlite"
    copy_db.write_bytes(db.read_bytes())
    run_sweep(other, copy_db, workers=1, progress=False, only={"task": ["tomita1"], "seed": [0]})
    with pytest.raises(RasplabError, match="2 different settings for task tomita1 with APE"):
        build_table(db=copy_db)
    assert len(build_table(db=copy_db, config=config).rows) == 26


def cli(capsys, *args):
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out = capsys.readouterr()
    return done.value.code, out.out, out.err


def test_cli_writes_markdown_csv_png_and_prints_json(store, tmp_path, capsys):
    db, config = store
    out_dir = tmp_path / "table"
    code, out, err = cli(
        capsys,
        "crasp",
        "table",
        "--db",
        str(db),
        "--config",
        str(config),
        "--out",
        str(out_dir),
        "--json",
    )
    assert code == 0, err
    recs = [json.loads(line) for line in out.splitlines()]
    assert len(recs) == 26
    for rec in recs:
        assert {
            "task",
            "crasp",
            "crasp_periodic_local",
            "star_free",
            "ac0",
            "dot_depth",
            "prediction",
        } <= set(rec)
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "crasp_table.csv",
        "crasp_table.md",
        "crasp_table.png",
    ]
    assert (out_dir / "crasp_table.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| aa_star | APE |" in (out_dir / "crasp_table.md").read_text()
    code, printed, _ = cli(capsys, "crasp", "table", "--db", str(db), "--config", str(config))
    assert code == 0 and printed == (out_dir / "crasp_table.md").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--db", "missing.sqlite"], "does not exist"),
        (["--task", "tomita9"], "unknown task for the C-RASP table 'tomita9'"),
        (["--threshold", "0"], "--threshold must be in (0, 1]"),
        (["--config", "nope.yaml"], "give --db RESULTS too"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2_and_nothing_written(capsys, tmp_path, args, message):
    out_dir = tmp_path / "out"
    code, out, err = cli(capsys, "crasp", "table", "--out", str(out_dir), *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err
    assert not out_dir.exists()


def test_cli_bad_config_is_exit_2(store, capsys, tmp_path):
    db, _ = store
    bad = tmp_path / "bad.yaml"
    bad.write_text("grid: [unclosed\n")
    code, _, err = cli(capsys, "crasp", "table", "--db", str(db), "--config", str(bad))
    assert code == 2 and len(err.strip().splitlines()) == 1


# The comparison rule on hand-made measurements (arithmetic only, no training).
def _m(fitted_seeds, ood):
    return Measurement(
        "t",
        "APE",
        ("1-50", "51-100"),
        ("1-50",),
        {},
        (0, 1),
        fitted_seeds,
        {"1-50": 1.0, "51-100": ood},
        {"1-50": 1.0, "51-100": ood} if fitted_seeds else {},
        0,
        0.9,
    )


def test_agreement_rule_on_hand_made_measurements():
    from rasplab.crasp.expressibility import row

    ape_only = row("aa_star")  # guarantees APE; nothing for NoPE
    r = TableRow(ape_only, {"APE": _m((0,), 0.95), "NoPE": _m((0,), 0.2)})
    assert (r.agreement("APE"), r.agreement("NoPE"), r.agree) == ("yes", "consistent", "yes")
    r = TableRow(ape_only, {"APE": _m((0,), 0.95), "NoPE": _m((0,), 0.95)})
    assert (r.agreement("NoPE"), r.agree) == ("no prediction", "yes")
    r = TableRow(ape_only, {"APE": _m((0,), 0.85), "NoPE": _m((), 0.0)})
    assert (r.agreement("APE"), r.agreement("NoPE"), r.agree) == ("no", "inconclusive", "no")
    r = TableRow(ape_only, {"APE": _m((0,), 0.9)})
    assert (r.agreement("NoPE"), r.agree) == ("not measured", "yes")  # only APE is scored
    nope = TableRow(row("tomita1"), {"APE": _m((0,), 0.95), "NoPE": _m((0, 1), 0.95)})
    assert nope.agree == "yes"
    # nothing guaranteed: failures are consistent, never "yes"; a success is no prediction
    parity = row("parity")
    failed = TableRow(parity, {"APE": _m((0,), 0.2), "NoPE": _m((0,), 0.1)})
    assert (failed.agreement("APE"), failed.agree) == ("consistent", "consistent")
    passed = TableRow(parity, {"APE": _m((0,), 0.95), "NoPE": _m((0,), 0.1)})
    assert (passed.agreement("APE"), passed.agree) == ("no prediction", "no prediction")


def test_agreement_rule_with_the_regularized_encoding():
    from rasplab.crasp.expressibility import row
    from rasplab.reports.crasp_table.table import WITH_REGULARIZED

    ape_only = row("aa_star")  # guarantees APE and APE+reg; nothing for NoPE
    agreeing = {"APE": _m((0,), 0.95), "NoPE": _m((0,), 0.2)}
    r = TableRow(ape_only, {**agreeing, "APE+reg": _m((0, 1), 0.91)}, WITH_REGULARIZED)
    assert (r.agreement("APE+reg"), r.agree) == ("yes", "yes")
    r = TableRow(ape_only, {**agreeing, "APE+reg": _m((0,), 0.6)}, WITH_REGULARIZED)
    assert (r.agreement("APE"), r.agreement("NoPE"), r.agreement("APE+reg")) == (
        "yes",
        "consistent",
        "no",
    )
    assert r.agree == "no"
    assert TableRow(ape_only, agreeing, WITH_REGULARIZED).agree == "inconclusive"
    r = TableRow(ape_only, {**agreeing, "APE+reg": _m((), 0.0)}, WITH_REGULARIZED)
    assert (r.agreement("APE+reg"), r.agree) == ("inconclusive", "inconclusive")
    # the same measurements in a two-encoding row: APE+reg is not one of its columns
    assert TableRow(ape_only, {**agreeing, "APE+reg": _m((0,), 0.6)}).agree == "yes"
    neither = TableRow(
        row("parity"),
        {"APE": _m((0,), 0.2), "NoPE": _m((0,), 0.1), "APE+reg": _m((0,), 0.95)},
        WITH_REGULARIZED,
    )
    assert (neither.agreement("APE+reg"), neither.agree) == ("no prediction", "no prediction")


# A hand-filled store (tests/reports/crasp_table/conftest.py) of the runs in hand_runs.py: aa_star predicts
# "guaranteed (APE)".
BEFORE_HEAD = (
    "| paper | task | C-RASP[] | C-RASP[periodic,local] | star-free | AC0 | dot-depth | "
    "prediction | APE | NoPE | agree |"
)
BEFORE_CSV = (
    "task,label,crasp,crasp_reason,crasp_periodic_local,crasp_periodic_local_reason,"
    "star_free,ac0,ac0_source,dot_depth,prediction,"
    "APE_status,APE_seeds,APE_fitted,APE_bins,APE_all,APE_fitted_acc,APE_agree,"
    "NoPE_status,NoPE_seeds,NoPE_fitted,NoPE_bins,NoPE_all,NoPE_fitted_acc,NoPE_agree,agree"
)
BEFORE_FIGURE = ["C-RASP[]", "[per.,local]", "star-free", "AC0", "prediction"]
BEFORE_FIGURE += ["APE\nbin 1", "APE\nbin 2", "APE\nbin 3", "APE\nfitted"]
BEFORE_FIGURE += ["NoPE\nbin 1", "NoPE\nbin 2", "NoPE\nbin 3", "NoPE\nfitted", "agree"]


def _figure_head(table):
    import matplotlib.pyplot as plt

    from rasplab.reports.crasp_table.plot import table_figure

    fig = table_figure(table)
    head = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    plt.close(fig)
    return head


def test_the_regularized_column_in_markdown_csv_json_and_png(hand_store, tmp_path):
    from rasplab.reports.crasp_table.table import write_table

    table = build_table(db=hand_store(THREE), tasks=["aa_star", "tomita1"], threshold=0.9)
    assert table.encodings == ("APE", "NoPE", "APE+reg")
    aa, tomita = table.rows[1], table.rows[0]
    assert [aa.agreement(e) for e in table.encodings] == ["yes", "consistent", "no"]
    assert (aa.agree, tomita.agree) == ("no", "not measured")
    assert table.tally() == {
        "yes": 0,
        "no": 1,
        "consistent": 0,
        "no prediction": 0,
        "inconclusive": 0,
        "not measured": 1,
    }

    text = markdown(table)
    assert BEFORE_HEAD.replace("| NoPE |", "| NoPE | APE+reg |") in text
    assert (
        "| guaranteed (APE) | generalizes (2/2 fitted) | does not generalize (1/1 fitted) | "
        "does not generalize (2/3 fitted) | no |"
    ) in text
    assert (
        "| aa_star | APE+reg | 1-50 / 51-100 / 101-150 | 10/10/10 | 2/3 | 93.3 / 70.0 / 50.0 | "
        "100.0 / 60.0 / 30.0 | no |"
    ) in text
    assert "APE+reg: the runs with `model.pe=ape` and `train.pe_penalty` > 0" in text

    lines = list(csv.DictReader(io.StringIO(csv_text(table))))
    reg = {k[len("APE+reg_") :]: v for k, v in lines[1].items() if k.startswith("APE+reg_")}
    assert reg == {
        "status": "does not generalize",
        "seeds": "3",
        "fitted": "2",
        "bins": "1-50 51-100 101-150",
        "all": "0.9333 0.7000 0.5000",
        "fitted_acc": "1.0000 0.6000 0.3000",
        "agree": "no",
    }
    assert (lines[1]["APE_agree"], lines[1]["agree"]) == ("yes", "no")
    assert lines[0]["APE+reg_status"] == "not measured"

    recs = records(table)
    assert recs[0]["measured"] == {"APE": None, "NoPE": None, "APE+reg": None}
    assert recs[1]["measured"]["APE+reg"]["fitted_seeds"] == [0, 1]
    assert recs[1]["measured"]["APE+reg"]["agree"] == "no"

    head = _figure_head(table)
    assert head[-5:] == [
        "APE+reg\nbin 1",
        "APE+reg\nbin 2",
        "APE+reg\nbin 3",
        "APE+reg\nfitted",
    ] + ["agree"]
    assert head[:-5] == BEFORE_FIGURE[:-1]
    written = write_table(table, tmp_path / "out")
    assert [p.name for p in written] == ["crasp_table.md", "crasp_table.csv", "crasp_table.png"]
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_regularized_runs_the_columns_are_the_previous_ones(hand_store):
    two = [r for r in THREE if r[1] != "ape_reg"]
    two.append(("aa_star", "ape", 2, {"model.pe": "ape", "train.weight_penalty": 0.0}, (1, 1, 1)))
    table = build_table(db=hand_store(two), tasks=["aa_star"])
    assert table.encodings == ("APE", "NoPE")
    text = markdown(table)
    assert BEFORE_HEAD in text and "APE+reg" not in text
    assert (
        "| guaranteed (APE) | generalizes (3/3 fitted) | does not generalize (1/1 fitted) | yes |"
        in text
    )
    assert csv_text(table).splitlines()[0] == BEFORE_CSV
    assert set(records(table)[0]["measured"]) == {"APE", "NoPE"}
    assert _figure_head(table) == BEFORE_FIGURE
