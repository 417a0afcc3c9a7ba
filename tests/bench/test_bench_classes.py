"""``synthdp bench classes``: one tiny run agrees with a direct certified evaluation; resume; the table's ratios."""

from __future__ import annotations

import json

import pytest

from synthdp.bench.classes import load_inputs, ratio, run, tables
from synthdp.datasets import load_coded

TINY = ["--suite", "nltcs", "--eps", "1", "--seeds", "1", "--methods", "measure-3way", "--rows", "3000", "--dims", "6",
        "--classes", "conjunctions,parities:2"]


def test_one_tiny_run_matches_a_direct_evaluation_and_resume_skips_it(shared_data_dir, tmp_path):
    import synthdp

    run([*TINY, "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "results.json").read_text())
    assert [(r["method"], r["class"], r["query"]) for r in saved["runs"]] == [
        ("measure-3way", "conjunctions", "marginals:3"), ("measure-3way", "parities:2", "marginals:3")]
    first = saved["runs"][0]
    # 0 is possible: these 3000 rows x 6 columns of NLTCS are one record repeated, which the estimate can match exactly
    assert first["status"] == "ok" and first["certified"] and 0 <= first["value"] < 1
    assert first["rows"] == 3000 and first["dims"] == 6 and first["choice"] == "measure" and first["player"] is None
    df, schema = load_inputs("nltcs", 3000, 6)
    full, _ = load_coded("nltcs")
    assert df.equals(full.iloc[:3000, :6]) and schema.names == tuple(full.columns[:6])  # first rows/columns
    syn = synthdp.generate_synthetic(df, "marginals:3", epsilon=1.0, delta=1e-9, schema=schema, random_state=0,
                                     progress=False, method="measure").data
    direct = synthdp.worst_case_error(df, syn, "conjunctions", schema=schema, time_limit=120)
    assert direct.certified and first["value"] == direct.error
    parities = synthdp.worst_case_error(df, syn, "parities:2", schema=schema, time_limit=120)
    assert saved["runs"][1]["value"] == parities.error  # the one table, evaluated on each class (the two errors
    assert saved["runs"][1]["backend"] == parities.backend != direct.backend  # may coincide: a 1-way query is both)
    table = (tmp_path / "results.md").read_text()
    assert "| 1 | " + f"{direct.error:.3f}" + " |" in table
    assert "Method run (plan's method/game player): measure-3way: measure\n" in table

    before = (tmp_path / "results.json").read_text()
    run([*TINY, "--out", str(tmp_path), "--resume"])  # nothing left to do: no generation, same runs
    assert json.loads((tmp_path / "results.json").read_text())["runs"] == json.loads(before)["runs"]
    from synthdp.core.errors import InputError

    with pytest.raises(InputError, match="--resume"):
        run([*TINY, "--rows", "2000", "--out", str(tmp_path), "--resume"])


def test_a_method_the_version_cannot_run_is_recorded_not_raised(shared_data_dir, tmp_path, monkeypatch):
    import synthdp
    from synthdp.core.errors import InputError

    def refuse(df, query, **kwargs):
        raise InputError(f"method={kwargs['method']!r} does not serve {query}")

    monkeypatch.setattr(synthdp, "generate_synthetic", refuse)
    run(["--suite", "nltcs", "--eps", "1", "--seeds", "1", "--methods", "measure", "--rows", "500", "--dims", "4",
         "--classes", "parities:2", "--out", str(tmp_path)])
    (entry,) = json.loads((tmp_path / "results.json").read_text())["runs"]
    assert entry["status"] == "not available: method='measure' does not serve parities:2" and "value" not in entry
    assert "| 1 | n/a |" in (tmp_path / "results.md").read_text()


def test_ratios_use_the_bounds_and_the_table_marks_them():
    measure = {"status": "ok", "lower": 0.1, "upper": 0.2, "certified": False, "seeds": 1}
    game = {"status": "ok", "lower": 0.4, "upper": 0.5, "certified": False, "seeds": 1}
    assert ratio(measure, game) == pytest.approx((0.2, 0.5))
    assert ratio(measure, None) is None
    rows = [dict(measure, dataset="nltcs", **{"class": "conjunctions"}, method="measure", epsilon=1.0),
            dict(game, dataset="nltcs", **{"class": "conjunctions"}, method="game", epsilon=1.0)]
    text = tables(rows)
    assert "| 1 | ≥0.400 ≤0.500 | ≥0.100 ≤0.200 | 0.20..0.50 |" in text
    assert "| 0.583 | 0.079 |" in text  # the reference figures beside
    assert "game (reference)" in text and "issue" not in text
