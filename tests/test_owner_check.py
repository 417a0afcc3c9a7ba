"""The release against the real table, for the owner only (docs/privacy.md §10.8).

The missing shares: a column that comes back missing where the real one is not is named with the cause; a column
the self-check calls mostly missing that is mostly missing in the real table is said to be the data's shape.  Each
column and strongly related pair: a shape far off, values lost, rows piled on one value, a constant column, a
correlation moved are named, a close table names nothing, ``strict`` fails after the release.  No release holds
any of it."""

from __future__ import annotations

import json
import pickle
import re
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

from synthdp import Synthesizer, generate_synthetic
from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Attribute, Schema
from synthdp.owner_check import (LOST_ROWS, LOST_SHARE, MISSING_RISE, PILE_REAL_SHARE, PILE_SHARE, SHAPE_DISTANCE,
                                 FarFromRealError, FarFromRealWarning, compare_with_real, warn_missing_shares)
from synthdp.release_check import check_release

SCHEMA = Schema(tuple(Attribute(name, "categorical", categories=("a", "b"), missing=True)
                      for name in ("risen", "shape", "steady", "edge")))


def _frame(missing: dict[str, int], n: int = 100) -> pd.DataFrame:
    return pd.DataFrame({c: [None] * missing[c] + ["a", "b"] * ((n - missing[c]) // 2) + ["a"] * ((n - missing[c]) % 2)
                         for c in SCHEMA.names})


def _owner_texts(real: pd.DataFrame, synthetic: pd.DataFrame, raw: dict[str, float]) -> dict[str, str]:
    counted = AggregatedData.from_codes(SCHEMA.domain, Encoder(SCHEMA).encode(real))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_missing_shares(counted, Encoder(SCHEMA).encode(synthetic), SCHEMA, check_release(synthetic, SCHEMA),
                            raw)
    assert all(w.category is OwnerWarning for w in caught)
    named = [next(c for c in SCHEMA.names if repr(c) in str(w.message)) for w in caught]
    assert len(set(named)) == len(named), named  # one warning a column
    return dict(zip(named, (str(w.message) for w in caught)))


def test_a_rise_is_named_with_its_cause_and_a_real_share_explains_the_self_check():
    real = _frame({"risen": 0, "shape": 60, "steady": 20, "edge": 0})
    synthetic = _frame({"risen": 45, "shape": 62, "steady": 25, "edge": int(100 * MISSING_RISE)})
    texts = _owner_texts(real, synthetic, raw={})
    assert set(texts) == {"risen", "shape"}  # a rise of 5 points, and one of exactly MISSING_RISE, are not named
    assert "'risen' comes back 45% missing, and 0% of the real table's rows are missing" in texts["risen"]
    assert "spreads the missing rows" in texts["risen"]
    assert "'shape': 60% of the real table's rows are missing too" in texts["shape"]


def test_values_a_learned_domain_left_out_are_named_as_the_cause():
    """The counted rows hold the left-out values as missing: only the tally says the real column had none."""
    real = _frame({"risen": 30, "shape": 0, "steady": 0, "edge": 0})
    synthetic = _frame({"risen": 31, "shape": 0, "steady": 0, "edge": 0})
    assert _owner_texts(real, synthetic, raw={}) == {}  # measured against the counted rows alone: no rise
    texts = _owner_texts(real, synthetic, raw={"risen": 0.0})
    assert "'risen' comes back 31% missing, and 0% of the real table's rows are missing; 30% of the rows hold " \
           "values the learned domain left out" in texts["risen"]


def test_a_run_warns_the_owner_of_a_column_emptied_by_rare_values_and_the_report_does_not():
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"clinic": rng.permutation(["north"] * 1200 + ["south"] * 1200 + [f"c{i}" for i in range(600)]),
                       "status": rng.permutation(["x"] * 1200 + [None] * 1800), "kind": rng.choice(["a", "b"], n)})
    with pytest.warns(OwnerWarning) as caught:
        result = generate_synthetic(df, "marginals:2", categories={"status": ["x"], "kind": ["a", "b"]},
                                    nullable=["status"], epsilon=1.0, delta=1e-6, random_state=0, progress=False)
    texts = [str(w.message) for w in caught if w.category is OwnerWarning]
    assert any(t.startswith("column 'clinic' comes back 2") and "and 0% of the real table's rows are missing; 20% "
               "of the rows hold values the learned domain left out" in t for t in texts), texts
    assert any(t.startswith("column 'status': 60% of the real table's rows are missing too") for t in texts), texts
    assert any("'status' comes back" in w and "if the real column is not mostly missing, raise epsilon" in w
               for w in result.report.warnings)  # its categories are public: no advice to give them
    assert not any("real table" in w for w in result.report.warnings)


def test_an_owner_warning_is_a_warning_and_an_info_line_of_the_log(caplog):
    """A program that has not set up logging printed an owner's warning twice: as the warning, and as a WARNING
    record through logging's last resort.  The record is INFO: the log holds it, the warning shows it once."""
    import logging

    from synthdp.core.owner import owner_warning

    with caplog.at_level(logging.INFO, logger="synthdp"), pytest.warns(OwnerWarning, match="a note"):
        owner_warning("a note")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, "for the data owner only, not for release: a note")]


# -- each column and strongly related pair against the real rows (compare_with_real) ------------------------------

FAR = Schema((Attribute("x", "numeric", bounds=(0.0, 100.0), bins=10), Attribute("y", "numeric", bounds=(-50.0, 150.0),
                                                                                  bins=10),
              Attribute("z", "numeric", bounds=(0.0, 100.0), bins=10),
              Attribute("c", "categorical", categories=("a", "b", "c", "d"))))


def _real(n: int = 4000) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 100, n)
    return pd.DataFrame({"x": x, "y": x + rng.normal(0, 8, n), "z": np.clip(rng.normal(50, 10, n), 0, 100),
                         "c": rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1])})


def _found(real: pd.DataFrame, synthetic: pd.DataFrame) -> set[tuple[tuple[str, ...], str]]:
    comparison = compare_with_real(real, synthetic, FAR, Encoder(FAR).encode(synthetic))
    return {(f.columns, f.problem) for f in comparison.findings}


def _resampled(real: pd.DataFrame) -> pd.DataFrame:
    """A bootstrap sample of the real rows: as close as a synthetic table can be."""
    return real.iloc[np.random.default_rng(2).integers(0, len(real), len(real))].reset_index(drop=True)


def _constant(s: pd.DataFrame) -> pd.DataFrame:
    return s.assign(z=50.0)


def _piled(s: pd.DataFrame) -> pd.DataFrame:  # 20% of the rows on one value no real row holds; KS about .13
    return s.assign(x=np.where(np.arange(len(s)) % 5 == 0, 37.25, s["x"]))


def _lost_category(s: pd.DataFrame) -> pd.DataFrame:  # 'd' (10% of the rows) comes back as 'a': TVD .10
    return s.assign(c=s["c"].replace("d", "a"))


def _lost_range(s: pd.DataFrame) -> pd.DataFrame:  # the rows of [60, 70) moved to [30, 40): KS .10
    inside = (s["x"] >= 60) & (s["x"] < 70)
    return s.assign(x=np.where(inside, s["x"] - 30, s["x"]))


def _uncorrelated(s: pd.DataFrame) -> pd.DataFrame:  # y's values kept, their rows shuffled: r from .96 to about 0
    return s.assign(y=np.random.default_rng(3).permutation(s["y"].to_numpy()))


def _shifted(s: pd.DataFrame) -> pd.DataFrame:  # z moved by 0.8 of its spread: KS about .31
    return s.assign(z=np.clip(s["z"] + 8, 0, 100))


@pytest.mark.parametrize("change, named", [
    (lambda s: s, set()),
    (_constant, {(("z",), "constant"), (("z",), "lost"), (("z",), "shape")}),
    (_piled, {(("x",), "piled")}),
    (_lost_category, {(("c",), "lost")}),
    (_lost_range, {(("x",), "lost")}),
    (_uncorrelated, {(("x", "y"), "correlation")}),
    (_shifted, {(("z",), "shape"), (("z",), "lost")}),
], ids=["resampled", "constant", "piled", "lost category", "lost range", "correlation", "shape"])
def test_each_way_a_column_comes_back_far_from_the_real_one_is_named_and_nothing_else(change, named):
    real = _real()
    assert _found(real, change(_resampled(real))) == named


def test_the_findings_say_what_and_how_much():
    real = _real()
    synthetic = _piled(_lost_category(_uncorrelated(_constant(_resampled(real)))))
    texts = {f.problem: f.text for f in compare_with_real(real, synthetic, FAR, Encoder(FAR).encode(synthetic)).findings
             if f.problem != "lost" or "'c'" in f.text}
    assert texts["constant"].startswith("column 'z' comes back constant (50 in every synthetic row with a value); "
                                        "the real column has 4000 values")
    assert texts["piled"].startswith("column 'x' piles 20% of its rows on 37.25, which 0.0% of the real rows hold")
    assert texts["lost"] == "column 'c' lost values the real table holds: d (9.7% of the real rows)"
    assert re.fullmatch(r"columns 'x' and 'y': their correlation is -?0\.0\d, and 0\.96 in the real table",
                        texts["correlation"]), texts["correlation"]
    assert texts["shape"] == "column 'z': its distribution is far from the real one (KS 0.51)"
    moved = _lost_range(_resampled(real))
    (lost,) = compare_with_real(real, moved, FAR, Encoder(FAR).encode(moved)).findings
    assert lost.text == ("column 'x' lost ranges the real table holds: 60.3832 to 69.5103 (9.0% of the real rows, "
                         "0.0% of the synthetic)")


def test_below_each_threshold_nothing_is_named():
    """A pile of 12% (below PILE_SHARE), a pile of 20% on a value 7% of the real rows hold (not below
    PILE_REAL_SHARE: the data's shape), a category of 0.5% lost (below LOST_SHARE), a shift of KS about .15."""
    real = _real()
    real = real.assign(c=np.where(np.arange(len(real)) % 200 == 0, "d", real["c"].replace("d", "c")),
                       y=np.where(np.arange(len(real)) % 100 < 7, 60.5, real["y"]))
    s = _resampled(real)
    s = s.assign(x=np.where(np.arange(len(s)) % 8 == 0, 37.25, s["x"]), z=np.clip(s["z"] + 4, 0, 100),
                 c=s["c"].replace("d", "c"), y=np.where(np.arange(len(s)) % 5 == 0, 60.5, s["y"]))
    assert _found(real, s) == set()
    assert PILE_SHARE > 0.125 and PILE_REAL_SHARE <= 0.07 and LOST_SHARE > 0.005 and SHAPE_DISTANCE > 0.15


@pytest.mark.parametrize("seed", range(5))
def test_values_a_small_faithful_table_leaves_out_by_chance_are_not_named(seed):
    """300 rows: 1% of them is 3, which a bootstrap sample often leaves out; LOST_ROWS asks for more."""
    real = _real(300).assign(y=lambda d: np.round(d["y"]))
    assert LOST_ROWS > LOST_SHARE * 300
    resampled = real.iloc[np.random.default_rng(seed).integers(0, 300, 300)].reset_index(drop=True)
    assert _found(real, resampled) == set()


def test_a_large_table_is_compared_on_a_fixed_sample(monkeypatch):
    import synthdp.owner_check as owner_check

    monkeypatch.setattr(owner_check, "COMPARED_ROWS", 1000)
    real = _real()
    synthetic = _constant(_resampled(real))
    first, second = (compare_with_real(real, synthetic, FAR, Encoder(FAR).encode(synthetic)) for _ in range(2))
    assert first == second and (first.real_compared, first.synthetic_compared) == (1000, 1000)
    assert "on 1,000 of 4,000 real rows and 1,000 of 4,000 synthetic rows, a fixed sample" in first.summary()
    assert {f.problem for f in first.findings} == {"constant", "lost", "shape"}


def _amounts(n: int = 2000) -> pd.DataFrame:
    """A column of amounts, 0 in 85% of the rows and thinly spread otherwise, whose bounds, learned from 2,000
    rows at epsilon 0.1, hold only the zeros: it comes back constant."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"amount": np.where(rng.random(n) < 0.85, 0.0, np.round(rng.lognormal(9, 1.5, n), 2)),
                         "kind": rng.choice(["a", "b"], n)})


AMOUNTS = dict(query_class="marginals:2", epsilon=0.1, delta=1e-6, learn_bounds=["amount"],
               categories={"kind": ["a", "b"]}, random_state=0, progress=False)


def test_a_run_names_a_column_that_comes_back_constant_to_the_owner_only(tmp_path):
    with pytest.warns(OwnerWarning) as caught:
        result = generate_synthetic(_amounts(), **AMOUNTS)
    far = [str(w.message) for w in caught if w.category is FarFromRealWarning]
    assert any(t.startswith("column 'amount' comes back constant (") for t in far), far
    assert {f.problem for f in result.far_from_real} == {"constant", "lost"}
    assert "'amount' comes back constant (" in result.comparison.summary()
    result.save(tmp_path / "out.csv")
    result.model.save(tmp_path / "model.zip")
    released = [json.dumps(result.report.to_dict()), result.report.summary(), (tmp_path / "out.csv").read_text(),
                *(zipfile.ZipFile(tmp_path / "model.zip").read(name).decode("latin-1")
                  for name in zipfile.ZipFile(tmp_path / "model.zip").namelist())]
    for text in released:
        assert "in every synthetic row" not in text and "of the real rows" not in text
        assert "far from the real" not in text and "real table holds" not in text


def test_a_pickle_of_a_fitted_synthesizer_leaves_the_comparison_out():
    """pickle and joblib, as save(), hold no statistic of the real rows: the comparison comes back None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OwnerWarning)
        synthesizer = Synthesizer(**AMOUNTS).fit(_amounts())
    assert synthesizer.result_.comparison is not None
    pickled = pickle.dumps(synthesizer)
    assert b"comes back constant (" not in pickled and b"RealComparison" not in pickled  # the owner's finding
    loaded = pickle.loads(pickled)
    assert loaded.result_.comparison is None and loaded.result_.far_from_real == ()
    assert loaded.result_.data.equals(synthesizer.result_.data) and len(loaded.sample(5)) == 5
    assert synthesizer.result_.comparison is not None  # the owner's own object keeps it


def test_a_clean_run_names_nothing():
    """A high epsilon on an easy table: two related numbers and a category with public domains."""
    rng = np.random.default_rng(0)
    x = rng.normal(50, 10, 2000)
    df = pd.DataFrame({"x": x, "y": x + rng.normal(0, 3, 2000),
                       "kind": rng.choice(["a", "b", "c"], 2000, p=[0.5, 0.3, 0.2])})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FarFromRealWarning)
        result = generate_synthetic(df, "marginals:2", epsilon=50.0, delta=1e-6, bounds={"x": (0.0, 100.0),
                                    "y": (0.0, 100.0)}, categories={"kind": ["a", "b", "c"]}, random_state=0,
                                    progress=False, strict=True)
    assert result.comparison is not None and result.far_from_real == ()
    assert "no column or pair of columns is far from it" in result.comparison.summary()


def test_strict_raises_after_the_release_with_the_result():
    with pytest.raises(FarFromRealError, match=r"strict=True: 2 findings .*'amount' comes back constant") as raised:
        generate_synthetic(_amounts(), **AMOUNTS, strict=True)
    assert len(raised.value.result.data) and raised.value.findings == raised.value.result.far_from_real
    assert raised.value.result.report.epsilon_spent == 0.1
    synthesizer = Synthesizer(**AMOUNTS, strict=True)
    with pytest.raises(FarFromRealError):
        synthesizer.fit(_amounts())
    assert synthesizer.result_.far_from_real and len(synthesizer.sample(5)) == 5  # fitted: the release is made


def test_a_failing_comparison_with_the_real_rows_keeps_the_release_and_tells_the_owner(monkeypatch):
    """The release is made and charged before the owner's check: an error of the check is a warning, not a loss."""
    import synthdp.owner_check as owner_check

    monkeypatch.setattr(owner_check, "compare_with_real", lambda *args: (_ for _ in ()).throw(RuntimeError("broken")))
    failed = r"the release was made, but comparing it with the real rows failed \(RuntimeError: broken\)"
    with pytest.warns(OwnerWarning, match=failed):
        result = generate_synthetic(_amounts(), **AMOUNTS)
    assert len(result.data) and result.comparison is None and result.report.epsilon_spent == 0.1
    # strict: nothing was checked, which a pipeline must not take for a pass; the release is in the error
    with pytest.warns(OwnerWarning, match=failed), \
            pytest.raises(FarFromRealError, match=r"strict=True: the release could not be compared with the real "
                                                  r"table") as raised:
        generate_synthetic(_amounts(), **AMOUNTS, strict=True)
    assert len(raised.value.result.data) and raised.value.findings == ()


def test_strict_needs_the_rows_in_memory():
    with pytest.raises(InputError, match=r"strict=True compares the release with the real rows in memory, which "
                                         r"engine='dask' never holds"):
        Synthesizer(epsilon=1.0, engine="dask", strict=True).config()


def test_the_command_writes_the_release_then_lists_the_findings_and_strict_exits_3(tmp_path, capsys):
    from synthdp.cli import main
    from synthdp.cli.generate import STRICT_STATUS

    _amounts().to_csv(tmp_path / "in.csv", index=False)
    base = ["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--report",
            str(tmp_path / "report.json"), "--epsilon", "0.1", "--delta", "1e-6", "--learn-bounds", "amount",
            "--queries", "marginals:2", "--seed", "0", "-q"]
    assert main(base) == 0
    captured = capsys.readouterr()
    assert "for the data owner only (read off the real rows, not part of the release): compared with the real " \
           "table on 2,000 real rows" in captured.err and "  column 'amount' comes back constant (" in captured.err
    assert "for the data owner only" not in captured.out  # stdout carries the release's summary only
    (tmp_path / "out.csv").unlink()
    assert main([*base, "--strict"]) == STRICT_STATUS == 3
    captured = capsys.readouterr()
    assert "  column 'amount' comes back constant (" in captured.err and "comes back constant (" not in captured.out
    assert "--strict: the release has columns far from the real table (listed above" in captured.err
    assert captured.err.count("in every synthetic row") == 1  # listed once, in the comparison's summary
    assert (tmp_path / "out.csv").exists() and "in every synthetic row" not in (tmp_path / "report.json").read_text()
    assert main([*base, "--strict", "--tune", str(tmp_path / "none.json")]) == 2
    assert "--strict is not available with --tune" in capsys.readouterr().err


def test_help_says_what_strict_does(capsys):
    from synthdp.cli import main
    from synthdp.cli.generate import STRICT_STATUS

    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--strict Fail when the release has columns far from the real table" in text
    assert f"the command writes its outputs, lists the findings and exits with status {STRICT_STATUS}" in text


def test_every_numeric_column_far_from_the_real_one_on_the_loans_table_is_named():
    """The loans table by learn_bounds (10,000 x 55) at epsilon 1: no column piles 15% of its rows on a value under
    5% of the real rows hold, and each number column whose KS against the real one exceeds .3 is named to the
    owner (whatever the bounds learned)."""
    from synthdp.bench.numeric import load_table
    from synthdp.evaluation.similarity import ks_complement

    table = load_table("loans")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = generate_synthetic(table.data, "marginals:1", epsilon=1.0, delta=1e-9, learn_bounds=list(table.bounds),
                                    categories=table.categories, decimals=table.decimals, random_state=0,
                                    progress=False)
    named = {c for f in result.far_from_real for c in f.columns}
    far = {c for c in table.bounds if 1 - ks_complement(table.data[c].to_numpy(float),
                                                        result.data[c].dropna().to_numpy(float)) > 0.3}
    assert far <= named, far - named
    for c in table.bounds:
        synthetic, real = (frame[c].value_counts(normalize=True) for frame in (result.data, table.data))
        value, share = synthetic.index[0], synthetic.iloc[0]
        assert share < 0.15 or real.get(value, 0.0) >= 0.05, (c, value, share)  # piled at 2^k before


def test_the_command_says_a_clean_comparison_unless_quiet(tmp_path, capsys):
    from synthdp.cli import main

    rng = np.random.default_rng(0)
    pd.DataFrame({"x": rng.integers(0, 100, 2000)}).to_csv(tmp_path / "in.csv", index=False)
    base = ["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--epsilon", "20",
            "--bounds", "x=0:99", "--queries", "marginals:1", "--seed", "0"]
    said = "no column or pair of columns is far from it"
    assert main(base) == 0 and said in capsys.readouterr().err
    (tmp_path / "out.csv").unlink()
    assert main([*base, "-q"]) == 0 and said not in capsys.readouterr().err
