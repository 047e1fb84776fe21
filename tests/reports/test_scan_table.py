"""The SCAN Table-5 report: cells are per-setting means of what the store holds."""

from __future__ import annotations

from rasplab.reports.scan_table import main, markdown


def test_cells_average_seeds_and_keep_settings_apart():
    rows = [
        {"split": "mcd1", "variant": "absolute", "layers": 2, "accuracy": 0.02},
        {"split": "mcd1", "variant": "absolute", "layers": 2, "accuracy": 0.04},
        {"split": "length", "variant": "relative_shared", "layers": 6, "accuracy": 0.10},
    ]
    lines = markdown(rows).splitlines()
    assert lines[0] == "| split | weight sharing | positions | 2 | 6 |"
    assert lines[2] == "| length | yes | relative | - | 10.0 |"  # length sorts before mcd1
    assert lines[3] == "| mcd1 | no | absolute | 3.0 | - |"


def test_missing_database_is_one_line_exit_2(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "none.sqlite"), "--out", str(tmp_path / "t.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rasplab: error:") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.md").exists()


def _stored_scan_run(tmp_path, bins, counts):
    """A store holding one tiny trained SCAN run whose stored test metrics are ``bins``."""
    import dataclasses

    from rasplab.harness import experiment_from_dict, train
    from rasplab.harness.store import ResultsStore

    config = experiment_from_dict(
        {
            "task": "scan",
            "model": {"pe": "rope", "layers": 1, "heads": 1, "width": 8},
            "train": {"steps": 2, "batch_size": 4, "eval_every": 2, "threads": 1},
            "eval": {"size": 4, "batch_size": 4},
        }
    )
    result = train(config, run_dir=tmp_path / "run")
    db = tmp_path / "scan.sqlite"
    with ResultsStore(db) as store:
        store.register(config, run_dir=str(tmp_path / "run"))
        store.finish(dataclasses.replace(result, bins=bins, counts=counts))
    return db


def test_a_cell_is_the_share_of_test_commands_right_not_a_mean_over_bins(tmp_path):
    from rasplab.reports.scan_table import scan_rows

    db = _stored_scan_run(tmp_path, {"1-4": 1.0, "5-9": 0.0}, {"1-4": 30, "5-9": 10})
    (row,) = scan_rows(db)
    assert row["accuracy"] == 0.75  # 30 of 40 commands (the mean over the two bins is 0.5)


def test_fit_adds_the_training_split_table_scored_from_the_saved_weights(tmp_path, capsys):
    from rasplab.harness.split_eval import score_split

    db = _stored_scan_run(tmp_path, {"1-9": 0.0}, {"1-9": 4})
    assert main(["--db", str(db), "--fit", "30"]) == 0
    out = capsys.readouterr().out
    assert "Training split (30 commands)" in out
    fit = 100 * score_split(tmp_path / "run", "train", 30).accuracy
    assert out.rstrip().splitlines()[-1] == f"| length | no | rope | {fit:.1f} |"


def test_a_negative_fit_is_one_line_exit_2(tmp_path, capsys):
    db = _stored_scan_run(tmp_path, {"1-9": 0.0}, {"1-9": 4})
    assert main(["--db", str(db), "--fit", "-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rasplab: error: --fit") and "\n" not in err


def test_paper_brackets_quote_table5_where_it_has_a_value():
    rows = [
        {"split": "mcd2", "variant": "relative", "layers": 2, "accuracy": 0.05},
        {"split": "mcd2", "variant": "relative", "layers": 128, "accuracy": 0.01},
    ]
    assert (
        markdown(rows, paper=True).splitlines()[-1]
        == "| mcd2 | no | relative | 5.0 (13) | 1.0 (-) |"
    )


def test_out_writes_the_printed_table_and_paper_names_its_brackets(tmp_path, capsys):
    db = _stored_scan_run(tmp_path, {"1-9": 0.5}, {"1-9": 4})
    out = tmp_path / "table.md"
    assert main(["--db", str(db), "--paper", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Test split, whole-sequence accuracy (%); in brackets the seed's")
    assert out.read_text() == printed
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
