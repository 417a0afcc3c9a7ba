"""Sampling two linked tables given conditions on the parent table (docs/privacy.md §12 step 4): the parents from
the parent model's conditional, their children given each parent as always; every other form refused by name."""

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.errors import InputError

from tests.linked.test_linked_fit import FAST, LINKS, PUBLIC, make_pair


@pytest.fixture(scope="module")
def fitted():
    return synthdp.Synthesizer(links=LINKS, random_state=3, **{**FAST, **PUBLIC}).fit(make_pair(customers=1500))


def _children_shares(tables, parents):
    """The shares of (customer's m, order's item) among the orders of ``parents``."""
    orders = tables["orders"][tables["orders"]["cid"].isin(parents["cid"])]
    m = orders["cid"].map(tables["orders"]["cid"].value_counts())
    return pd.Series(list(zip(m, orders["item"]))).value_counts(normalize=True)


def test_every_parent_meets_the_condition_and_keeps_its_children(fitted):
    tables = fitted.sample(400, random_state=1, conditions={"region": "S"})
    customers, orders = tables["customers"], tables["orders"]
    assert len(customers) == 400 and (customers["region"] == "S").all()
    assert list(customers["cid"]) == list(range(1, 401)) and orders["cid"].isin(customers["cid"]).all()
    assert 0 < len(orders) <= 3 * 400


def test_the_children_given_the_parent_follow_the_joined_model(fitted):
    """The orders of customers drawn given region S are distributed, with their parent's m, as the orders of the
    region-S customers of an unconditioned draw: both are the joined model given (S, m), m from the parent model
    given S.  The unconditioned draw's region-N orders differ (the positive control: a, b against b, c)."""
    given = fitted.sample(6000, random_state=2, conditions={"region": "S"})
    free = fitted.sample(12000, random_state=3)
    south = free["customers"][free["customers"]["region"] == "S"]
    north = free["customers"][free["customers"]["region"] == "N"]
    shares = [_children_shares(given, given["customers"]), _children_shares(free, south),
              _children_shares(free, north)]
    tvd = [0.5 * shares[0].sub(other, fill_value=0).abs().sum() for other in shares[1:]]
    assert tvd[0] < 0.03 < 0.3 < tvd[1], tvd


def test_a_condition_on_the_count_of_children_fixes_every_parent_s(fitted):
    tables = fitted.sample(200, random_state=4, conditions={"n_orders": 2})
    per = tables["orders"].groupby("cid").size().reindex(tables["customers"]["cid"], fill_value=0)
    assert (per == 2).all()


def test_the_same_seed_gives_the_same_tables_after_save_and_load(fitted, tmp_path):
    fitted.save(tmp_path / "pair.synthdp")
    loaded = synthdp.Synthesizer.load(tmp_path / "pair.synthdp")
    a = fitted.sample(50, random_state=5, conditions={"region": "N"})
    b = loaded.sample(50, random_state=5, conditions={"region": "N"})
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name])


@pytest.mark.parametrize("conditions, message", [
    ({"item": "a"}, "'item' is a column of the child table 'orders'"),
    ({"customers": {"region": "N"}}, r"not keyed by table: conditions=\{'region': 'N'\}"),
    ({"orders": {"item": "a"}}, "'orders' is the child table; conditions on two linked tables are on the columns"),
    ({"regoin": "N"}, "unknown column 'regoin'; did you mean 'region'"),
    ({"region": "W"}, "'W' is not a category of column 'region'"),
    ({"cid": 3}, "'cid' is the key of 'customers'"),
    ({"n_orders": 7}, "not a category of column 'n_orders'"),
    ("region=N", "conditions must map columns to values"),
])
def test_bad_conditions_are_refused_naming_the_column(fitted, conditions, message):
    with pytest.raises(InputError, match=message):
        fitted.sample(10, conditions=conditions)


def test_conditions_need_a_number_of_parents(fitted):
    with pytest.raises(InputError, match="give the number of parents"):
        fitted.sample(conditions={"region": "N"})
    assert np.array_equal(fitted.sample()["customers"]["cid"], fitted.result_.tables["customers"]["cid"])


def test_a_column_both_tables_hold_is_conditioned_on_as_the_parent_s():
    """The orders hold a ``region`` of their own (where they were shipped): ``conditions={"region": ...}`` names the
    customer's, the parent column, and is not refused as a child column."""
    tables = make_pair(customers=400)
    orders = tables["orders"]
    tables["orders"] = orders.assign(region=np.where(np.arange(len(orders)) % 4, "N", "S"))
    categories = {"customers": PUBLIC["categories"]["customers"],
                  "orders": {**PUBLIC["categories"]["orders"], "region": ["N", "S"]}}
    fitted = synthdp.Synthesizer(links=LINKS, random_state=3, **{**FAST, **PUBLIC, "categories": categories})
    drawn = fitted.fit(tables).sample(200, random_state=1, conditions={"region": "S"})
    assert (drawn["customers"]["region"] == "S").all() and set(drawn["orders"]["region"]) <= {"N", "S"}
    with pytest.raises(InputError, match="'item' is a column of the child table"):
        fitted.sample(10, conditions={"item": "a"})
