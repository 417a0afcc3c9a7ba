"""The release's missing shares against the real table's, for the owner only (docs/privacy.md §10.8): a column that
comes back missing where the real one is not is named with the cause; a column the self-check calls mostly
missing that is mostly missing in the real table is said to be the data's shape; the report holds neither."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp import generate_synthetic
from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Attribute, Schema
from synthdp.owner_check import MISSING_RISE, warn_missing_shares
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
