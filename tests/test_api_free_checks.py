"""Refusals that cost nothing come before any private step (docs/privacy.md §10.8), and owner-only warnings.

A run whose refusal comes after a charge says so ("This refusal came after private steps ... charged"): the
tests below assert that message is absent, i.e. the ledger held no event when the value was refused.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp import generate_synthetic
from synthdp.accounting.ledger import Ledger
from synthdp.accounting.spend import stating_spend
from synthdp.core.errors import SchemaError
from synthdp.core.owner import OwnerWarning
from synthdp.owner_check import FarFromRealWarning

RUN = dict(epsilon=1.0, delta=1e-6, random_state=0, progress=False)
AFTER_A_CHARGE = "This refusal came after private steps"


def table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A text column to learn, a numeric column to bound, and a column with a public domain."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"city": rng.choice(["north", "south"], n), "amount": rng.integers(0, 100, n).astype(float),
                         "size": rng.integers(1, 5, n)})


def refusal(df: pd.DataFrame, **options) -> str:
    with pytest.raises(SchemaError) as caught:
        generate_synthetic(df, "marginals:2", **{**RUN, **options})
    return str(caught.value)


def test_a_missing_value_of_a_column_to_bound_is_refused_before_any_charge():
    df = table()
    df.loc[17, "amount"] = np.nan
    message = refusal(df, learn_bounds=["amount"], bounds={"size": (1, 4)})
    assert "column 'amount' has a missing value in row 17" in message and AFTER_A_CHARGE not in message
    assert message.endswith("fill the missing values.")


@pytest.mark.parametrize("options", [
    dict(learn_bounds=["amount"], bounds={"size": (1, 4)}),  # a column to bound and one with public cells
    dict(bounds={"amount": (0, 100), "size": (1, 4)}, bins={"amount": 4, "size": 4},
         categories={"city": ["north", "south"]}),  # nothing to learn: the counting pass refuses
])
def test_every_column_with_a_missing_value_is_named_in_one_refusal_before_any_charge(options):
    df = table().astype({"size": object})
    df.loc[17, "amount"], df.loc[5, "size"] = np.nan, None
    message = refusal(df, **options)
    assert "columns 'amount' (row 17), 'size' (row 5) have missing values" in message, message
    assert "nullable=['amount', 'size']" in message and AFTER_A_CHARGE not in message, message


@pytest.mark.parametrize("column,value,expected", [
    ("size", "big", "value 'big' in row 5, numeric column 'size' is not a number"),
    ("size", 2.5, "value 2.5 in row 5, column 'size' is not a whole number"),
    ("size", 9, "value 9 in row 5, column 'size' is outside its public bounds"),
    ("size", None, "column 'size' has a missing value in row 5"),
])
def test_a_bad_value_of_a_public_column_is_refused_before_the_domain_steps(column, value, expected):
    """The tally pass read only the columns the domain steps read: this value was refused after they spent."""
    df = table().astype({"size": object})
    df.loc[5, column] = value
    message = refusal(df, learn_bounds=["amount"], bounds={"size": (1, 4)}, bins={"size": 4})  # cells public
    assert expected in message and AFTER_A_CHARGE not in message, message


@pytest.mark.parametrize("values,token", [
    (pd.Series([0, 1, 2] * 200, dtype="int64"), -1),  # the token as a number: its text was never compared
    (pd.Series(["0", "1", "2"] * 200, dtype=object), "-01"),  # texts whose integer label is the token -1
    (pd.Series(["0", "1", "2"] * 200, dtype=object), "-1.0"),
])
def test_a_missing_value_of_a_column_to_learn_with_an_other_label_is_refused_before_any_charge(values, token):
    """The check before any private step reads a missing value as category encoding will: by its label."""
    df = pd.DataFrame({"a": values, "size": np.arange(len(values)) % 4 + 1})
    df.loc[5, "a"] = token
    message = refusal(df, categorical=["a"], dtypes={"a": "int64"}, other="9", missing=["-1"], bounds={"size": (1, 4)})
    assert "column 'a' has a missing value in row 5" in message and AFTER_A_CHARGE not in message, message


def test_an_other_label_that_is_a_missing_token_is_refused_before_any_charge():
    message = refusal(table(), other="?", missing=["?"], bounds={"size": (1, 4)}, learn_bounds=["amount"])
    assert "other label of column(s) 'city' ('?') is also a missing token" in message, message
    assert AFTER_A_CHARGE not in message, message


def test_a_bad_value_is_refused_before_the_private_choice_of_k():
    df = table().astype({"size": object}).assign(pid=lambda d: [f"p{i % 150}" for i in range(len(d))])
    df.loc[3, "size"] = "big"
    message = refusal(df, privacy_unit="pid", max_rows_per_unit="auto", categories={"city": ["north", "south"]},
                      bounds={"size": (1, 4), "amount": (0, 100)})
    assert "'big'" in message and AFTER_A_CHARGE not in message, message


@pytest.mark.parametrize("text", ["fill the missing values.", "fill the missing values"])
def test_a_refusal_after_a_charge_reads_as_two_sentences(text):
    ledger = Ledger(Fraction(1), Fraction(0))
    ledger.spend("laplace", Fraction(1, 10), Fraction(0), "add-remove")
    with pytest.raises(SchemaError) as caught, stating_spend(ledger):
        raise SchemaError(text)
    assert str(caught.value).startswith("fill the missing values. This refusal came after"), str(caught.value)


def test_an_unforeseen_error_after_a_charge_keeps_its_type_and_says_the_spend_once():
    """A failure no refusal foresaw (a lost Dask worker, a bug) in a nested run still says what was charged, each
    ledger once, and stays the exception it was; before any charge it is left as it came."""
    outer, inner = Ledger(Fraction(1), Fraction(0)), Ledger(Fraction(1), Fraction(0))
    outer.spend("exponential", Fraction(1, 20), Fraction(0), "add-remove")
    inner.spend("laplace", Fraction(1, 10), Fraction(0), "add-remove")
    with pytest.raises(OSError) as caught, stating_spend(outer), stating_spend([outer, inner]):
        raise OSError("connection lost")
    assert caught.value.__notes__ == ["This error came after private steps that ran on the data and were charged "
                                      f"{outer.total()}, then {inner.total()}; nothing was released, but a new run "
                                      "on the same data spends again (docs/privacy.md §10.1)."]
    with pytest.raises(OSError) as caught, stating_spend(Ledger(Fraction(1))):
        raise OSError("connection lost")
    assert not hasattr(caught.value, "__notes__")


def test_an_interrupt_inside_a_nested_run_says_both_charges():
    """A linked run's choice of k is charged on its own ledger, then a view's run charges its own: an interrupt in
    the view names both, and a run with nothing charged leaves the nested run's text as it was."""
    outer, inner = Ledger(Fraction(1), Fraction(0)), Ledger(Fraction(1), Fraction(0))
    outer.spend("exponential", Fraction(1, 20), Fraction(0), "add-remove")
    inner.spend("laplace", Fraction(1, 10), Fraction(0), "add-remove")
    with pytest.raises(KeyboardInterrupt) as caught, stating_spend(outer), stating_spend(inner):
        raise KeyboardInterrupt
    assert caught.value.charged == "epsilon=0.05, then epsilon=0.1"
    with pytest.raises(KeyboardInterrupt) as caught, stating_spend(Ledger(Fraction(1))), stating_spend(inner):
        raise KeyboardInterrupt
    assert caught.value.charged == "epsilon=0.1"


def test_bounding_that_drops_most_rows_warns_the_owner_only():
    df = table(900).assign(pid=lambda d: [f"p{i % 30}" for i in range(len(d))])  # 30 rows per unit
    with pytest.warns(OwnerWarning, match=r"dropped 840 of the 900 rows \(93%\)"):
        result = generate_synthetic(df, "marginals:2", privacy_unit="pid", max_rows_per_unit=2,
                                    categories={"city": ["north", "south"]}, bounds={"size": (1, 4),
                                                                                        "amount": (0.0, 100.0)}, **RUN)
    assert not any("dropped" in w for w in result.report.warnings)
    assert "dropped" not in str(result.report.to_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("error", OwnerWarning)
        warnings.simplefilter("ignore", FarFromRealWarning)  # this small table's columns come back far: not bounding's
        generate_synthetic(df, "marginals:2", privacy_unit="pid", max_rows_per_unit=30,
                           categories={"city": ["north", "south"]}, bounds={"size": (1, 4), "amount": (0.0, 100.0)}, **RUN)


def test_bounds_no_range_can_reach_are_refused_by_column_before_any_charge():
    """344 rows, five columns to bound at a threshold of 252 rows: three hold fewer in their fullest range of the
    grid (every number came back near 0), and are named, in the remedy too; the two that reach it are not."""
    from tests.test_release_check import NUMERIC, small_table

    message = str(pytest.raises(Exception, generate_synthetic, small_table(344), "marginals:2", learn_bounds=NUMERIC,
                                categories={"kind": ["flat", "house"]}, **RUN).value)
    assert "the bounds of ['price', 'rooms', 'area'] privately" in message and "'price' 136" in message, message
    assert "bounds={'price': (lo, hi), 'rooms': (lo, hi), 'area': (lo, hi)}" in message and "'year'" not in message
    assert "It would need about 252 values in one range of the grid" in message and AFTER_A_CHARGE not in message


def test_bounds_from_few_rows_warn_the_owner_only():
    from tests.test_release_check import small_table

    df = small_table(300)
    with pytest.warns(OwnerWarning, match=r"the bounds of \['price'\] .* holds fewer than 222 \('price' 120\)"):
        result = generate_synthetic(df, "marginals:2", learn_bounds=["price"],
                                    bounds={"rooms": (1, 8), "area": (0.0, 300.0), "year": (1900, 2020),
                                            "lat": (30.0, 45.0)},
                                    categories={"kind": ["flat", "house"], "city": sorted(df["city"].unique())},
                                    **RUN)
    assert "120" not in str(result.report.warnings)


@pytest.mark.parametrize("method,delta", [("measure", 1e-6), ("game", 1e-6)])
def test_a_column_of_rare_values_warns_the_owner_by_name_before_any_step(method, delta):
    """An ID column and a 1000-value column were emptied silently, and so was a fifth of a clinic's names; a column
    of common values, and one whose rare values hold a twentieth of its rows, are not named."""
    rng = np.random.default_rng(1)
    n = 3000
    tail = [f"t{i}" for i in range(n)]
    df = pd.DataFrame({"id": [f"id-{i}" for i in range(n)], "code": rng.choice([f"c{i}" for i in range(1000)], n),
                       "kind": rng.choice(["a", "b"], n), "clinic": ["a", "b"] * 1200 + tail[:600],
                       "site": ["a", "b"] * 1425 + tail[:150]})
    with pytest.warns(OwnerWarning) as caught:
        result = generate_synthetic(df, "marginals:1", method=method, **{**RUN, "delta": delta})
    texts = [str(w.message) for w in caught if w.category is OwnerWarning]
    assert any("column 'id' will come back with 100% of its present values missing: 3000 of its 3000" in t
               and "like an ID" in t and "--drop id" in t for t in texts), texts
    assert any("column 'code' will come back with 100% of its present values missing: 3000 of its 3000" in t
               and "(951 values)" in t for t in texts), texts
    assert any("column 'clinic' will come back with 20% of its present values missing: 600 of its 3000" in t
               for t in texts), texts
    assert not any("'kind' will" in t or "'site' will" in t for t in texts)
    assert not any("will come back with" in w for w in result.report.warnings)


def test_learning_bounds_without_a_delta_is_refused_before_the_private_choice_of_k():
    from synthdp.core.errors import InputError

    df = table().assign(pid=lambda d: [f"p{i % 150}" for i in range(len(d))])
    with pytest.raises(InputError) as caught:
        generate_synthetic(df, "marginals:2", epsilon=1.0, random_state=0, progress=False, privacy_unit="pid",
                           max_rows_per_unit="auto", learn_bounds=["amount"], categories={"city": ["north", "south"]},
                           bounds={"size": (1, 4)}, bins={"size": 4})
    assert "needs a delta" in str(caught.value) and AFTER_A_CHARGE not in str(caught.value)
