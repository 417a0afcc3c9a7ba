"""Bounding and the two views of two linked tables (docs/privacy.md §12 steps 1-2)."""

import numpy as np
import pandas as pd
import pytest

from synthdp.core.errors import InputError
from synthdp.linked.bounding import bound_families, key_text
from synthdp.linked.links import Link, read_link, split_options
from synthdp.linked.views import joined_view, parent_view

LINK = Link("orders", "cid", "customers", "cid")
KEYS = (np.array([3, 4], dtype=np.uint64), np.array([5, 6], dtype=np.uint64))


def pair(parents, children):
    return (pd.DataFrame({"cid": [p[0] for p in parents], "region": [p[1] for p in parents]}),
            pd.DataFrame({"cid": [c[0] for c in children], "item": [c[1] for c in children]}))


def bound(parents, children, k=3, keys=KEYS):
    p, c = pair(parents, children)
    return bound_families(p, c, LINK, k, *keys)


def test_a_parent_with_k_plus_5_children_contributes_k_joined_rows():
    k = 3
    f = bound([(1, "N"), (2, "S")], [(1, f"x{i}") for i in range(k + 5)] + [(2, "y")], k=k)
    assert list(f.m) == [k, 1]
    joined = joined_view(f, LINK)
    assert len(joined) == k + 1 and sorted(joined["customers.n_orders"]) == [1] + [k] * k
    assert (joined.groupby("cid").size() == pd.Series({"1": k, "2": 1})).all()


def test_a_duplicated_parent_key_keeps_one_parent_and_at_most_k_joined_rows():
    f = bound([(1, "N"), (1, "S"), (1, "E"), (2, "W")], [(1, f"x{i}") for i in range(6)])
    assert len(f.parents) == 2 and f.merged_keys == 1
    assert list(f.m) == [3, 0]
    assert len(joined_view(f, LINK)) == 3
    assert len(parent_view(f, LINK)) == 2


def test_missing_keys_never_join():
    """A missing foreign key is an orphan; a parent with a missing key is its own family with no children, even
    when children have a missing key too."""
    f = bound([(1, "N"), (None, "S"), (np.nan, "E")], [(None, "a"), (np.nan, "b"), (1, "c"), (9, "d")])
    assert len(f.parents) == 3 and list(f.m) == [1, 0, 0]
    assert f.orphans == 3 and list(f.children["item"]) == ["c"]


def test_keys_are_exact_text():
    assert list(key_text(pd.Series([7, 7.0, None]), "cid")) == ["7", "7", None]
    f = bound([("7", "N")], [(7, "a"), (7.0, "b")])
    assert list(f.m) == [2]


def test_adding_a_family_changes_no_other_family():
    """Lemma 12.1, for fixed keys: the other families keep the same parent row and the same children."""
    parents = [(i, r) for i in range(30) for r in ("N", "S")]  # every key held twice
    children = [(i, f"{i}-{j}") for i in range(30) for j in range(6)]
    base = bound(parents, children)
    more = bound(parents + [(99, "E")], children[:40] + [(99, f"new{j}") for j in range(8)] + children[40:])
    kept = set(base.children["item"])
    assert kept == set(more.children["item"]) - {f"new{j}" for j in range(8)}
    assert list(base.parents["region"]) == list(more.parents["region"][:len(base.parents)])
    assert (more.m[more.keys == "99"] == 3).all()


def test_refusals_name_the_fix():
    c, o = pair([(1, "N")], [(1, "a")])
    tables = {"customers": c, "orders": o}
    cases = [
        ({"orders.cid": "shops.cid"}, "names table 'shops'"),
        ({"orders.cid": "customers.id"}, "has no column 'id' (the parent key column"),
        ({"orders.customer": "customers.cid"}, "has no column 'customer' (the foreign key column"),
        ({"orders.cid": "orders.cid"}, "to itself"),
        ({"orders.cid": "customers.cid", "customers.cid": "orders.cid"}, "only one parent-child pair"),
        ({}, "need links="),
        ({"orders": "customers.cid"}, "'table.column'"),
    ]
    for links, message in cases:
        with pytest.raises(InputError, match=message.replace("(", r"\(")):
            read_link(tables, links)
    with pytest.raises(InputError, match="in no link"):
        read_link({**tables, "extra": c}, {"orders.cid": "customers.cid"})
    with pytest.raises(InputError, match="keyed by table name"):
        split_options({"categories": {"region": ["N"]}}, LINK)
