"""Two linked tables released as one (docs/privacy.md §12): the joined view's charges, domains learned once,
neighbours, fresh keys, generation from the released models, save and load, and refusals before any spend."""

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.owner import OwnerWarning
from synthdp.linked.fitting import synthesize_linked
from synthdp.model import ReleasedRecords

K = 3
LINKS = {"orders.cid": "customers.cid"}
PUBLIC = dict(categories={"customers": {"region": ["N", "S"]}, "orders": {"item": ["a", "b", "c"]}})
FAST = dict(query_class="marginals:2", epsilon=1, delta=1e-9, max_rows_per_unit=K, progress=False)


def make_pair(customers=600, seed=0, key=lambda i: i):
    rng = np.random.default_rng(seed)
    region = rng.choice(["N", "S"], customers)
    per = rng.integers(0, K + 1, customers)
    owner = np.repeat(np.arange(customers), per)
    item = np.where(region[owner] == "N", rng.choice(["a", "b"], len(owner)), rng.choice(["b", "c"], len(owner)))
    keys = np.array([key(i) for i in range(customers)], dtype=object)
    return {"customers": pd.DataFrame({"cid": keys, "region": region}),
            "orders": pd.DataFrame({"cid": keys[owner], "item": item})}


def fit(tables, **options):
    return synthdp.generate_synthetic(tables, links=LINKS, random_state=3, **{**FAST, **PUBLIC, **options})


@pytest.fixture(scope="module")
def released():
    return fit(make_pair())


def test_tables_keep_referential_integrity_with_fresh_keys(released):
    customers, orders = released.tables["customers"], released.tables["orders"]
    assert list(customers["cid"]) == list(range(1, len(customers) + 1)) and customers["cid"].dtype == np.int64
    assert orders["cid"].isin(customers["cid"]).all()
    assert orders.groupby("cid").size().max() <= K
    assert list(orders.columns) == ["cid", "item"] and list(customers.columns) == ["cid", "region"]


def test_the_joined_view_is_charged_for_k_rows_and_the_parent_view_for_one(released):
    """Every Gaussian measurement's rho is Delta^2 / (2 sigma^2) with Delta = k in the joined view, 1 in the
    parent view (docs/privacy.md §12, Lemma 12.2)."""
    for view, bound in (("joined", K), ("parent", 1)):
        measurements = released.report.to_dict()["views"][view]["measurements"]
        assert measurements
        for m in measurements:
            assert Fraction(m["rho"]) == Fraction(bound ** 2) / (2 * Fraction(m["sigma2"])), (view, m)


def test_the_budget_is_split_in_public_shares_that_sum_to_it(released):
    report = released.report.to_dict()
    assert report["epsilon_spent"] <= 1 + 1e-12 and report["delta_spent"] <= 1e-9 * (1 + 1e-12)
    assert report["views"]["parent"]["epsilon_budget"] == pytest.approx(1 / 3)
    assert report["max_rows_per_unit"] == K and report["privacy_unit"] == "customers.cid"
    assert report["views"]["joined"]["privacy_unit"] == "cid"


def test_a_parent_column_domain_is_learned_once_on_the_parent_view():
    """Region's categories are learned by the parent view's run; the joined run reuses them and spends nothing
    on that column (docs/privacy.md §12 step 3)."""
    result = fit(make_pair(customers=1500), categories={"orders": {"item": ["a", "b", "c"]}})
    views = result.report.to_dict()["views"]
    assert "region" in str(views["parent"]["plan"]["domains"])
    assert "domains" not in views["joined"]["plan"]  # the child's categories are public: nothing to learn
    parent, joined = result.model.parent.schema, result.model.joined.schema
    assert replace(joined["customers.region"], name="region") == parent["region"]


def test_neighbours_differing_by_one_family_release_the_same_unpaid_fields_and_keys():
    tables = make_pair()
    more = {"customers": pd.concat([tables["customers"], pd.DataFrame({"cid": [999], "region": ["N"]})],
                                   ignore_index=True),
            "orders": pd.concat([tables["orders"], pd.DataFrame({"cid": [999] * 7, "item": ["a"] * 7})],
                                ignore_index=True)}
    a, b = fit(tables, n_rows=50), fit(more, n_rows=50)
    ra, rb = a.report.to_dict(), b.report.to_dict()
    paid = {"selected_queries", "measurements", "rows_written"}
    for view in ("parent", "joined"):
        va, vb = ra["views"][view], rb["views"][view]
        assert set(va) == set(vb)
        assert [f for f in set(va) - paid if va[f] != vb[f]] == [], view
    assert {f: ra[f] for f in set(ra) - {"views"}} == {f: rb[f] for f in set(rb) - {"views"}}
    assert list(a.tables["customers"]["cid"]) == list(b.tables["customers"]["cid"]) == list(range(1, 51))


def test_output_keys_do_not_depend_on_the_input_keys():
    """Relabelled keys (unique, no parent over k children: bounding keeps every row) give the same tables."""
    a = fit(make_pair())
    b = fit(make_pair(key=lambda i: f"key-{i * 7 + 3}"))
    for name in ("customers", "orders"):
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])


def test_the_number_of_children_is_the_parent_model_s(released):
    """Generation reads each m_i off the parent model's draw: a parent model whose records all have m = 2 gives
    every parent exactly two children, whatever the real counts."""
    model = released.model
    codes = model.parent.estimate.sample(10, np.random.default_rng(0))
    column = model.parent.schema.names.index("n_orders")
    codes[:, column] = model.parent.schema["n_orders"].code_of["2"]
    fixed = replace(model, parent=replace(model.parent, estimate=ReleasedRecords(model.parent.schema.domain, codes)))
    tables = fixed.sample(25, random_state=1)
    assert (tables["orders"].groupby("cid").size().reindex(tables["customers"]["cid"], fill_value=0) == 2).all()


def test_synthesizer_samples_parents_with_children_and_keeps_both_models(tmp_path):
    fitted = synthdp.Synthesizer(links=LINKS, random_state=3, **{**FAST, **PUBLIC}).fit(make_pair())
    drawn = fitted.sample(40, random_state=9)
    assert len(drawn["customers"]) == 40 and drawn["orders"]["cid"].isin(range(1, 41)).all()
    fitted.save(tmp_path / "pair.synthdp")
    loaded = synthdp.Synthesizer.load(tmp_path / "pair.synthdp")
    again = loaded.sample(40, random_state=9)
    for name in drawn:
        pd.testing.assert_frame_equal(drawn[name], again[name])
    assert loaded.epsilon == pytest.approx(1)


@pytest.mark.parametrize("change, message", [
    (dict(links={"orders.cid": "customers.nope"}), "has no column 'nope'"),
    (dict(links={"orders.cid": "customers.cid", "customers.cid": "orders.cid"}), "only one parent-child pair"),
    (dict(relation="replace-one"), "needs relation='add-remove'"),
    (dict(privacy_unit="cid"), "drop privacy_unit"),
    (dict(categories={"region": ["N", "S"]}), "keyed by table name"),
    (dict(engine="dask"), "engine='dask' reads the child table 'orders' part by part from its files: pass"),
    (dict(strict=True), "without strict"),
])
def test_bad_input_is_refused_before_anything_is_spent(change, message):
    calls = []
    options = {**FAST, **PUBLIC, "links": LINKS, **change}
    with pytest.raises(InputError, match=message):
        synthesize_linked(make_pair(), SynthesisConfig(**options), lambda *a, **kw: calls.append(a))
    assert calls == []


def _refused(tables, message, **options):
    calls = []
    with pytest.raises(InputError, match=message):
        synthesize_linked(tables, SynthesisConfig(**{**FAST, **PUBLIC, "links": LINKS, **options}),
                          lambda *a, **kw: calls.append(a))
    assert calls == []


def test_tables_that_clash_or_hold_nothing_are_refused_before_anything_is_spent():
    pair = make_pair()
    _refused(pair["customers"], "dict of DataFrames")
    _refused({**pair, "customers": pair["customers"].assign(n_orders=1)}, "rename that column")
    _refused({**pair, "orders": pair["orders"].assign(**{"customers.region": "N"})}, "rename them")
    _refused({**pair, "orders": pair["orders"][["cid"]]}, "no column besides its keys")
    _refused({**pair, "orders": pair["orders"][["cid"]].assign(oid=1)}, "no column besides its keys",
             keys={"orders": "oid"})


def test_a_child_table_none_of_whose_rows_finds_its_parent_is_refused_naming_the_link():
    pair = make_pair()
    _refused({**pair, "orders": pair["orders"].assign(cid=lambda d: d["cid"] + 10_000)},
             r"no row of table 'orders' has a cid that a row of customers.cid holds \(\d+ without one")


def test_a_dotted_key_column_is_linked_by_its_table_s_name():
    tables = {name: df.rename(columns={"cid": "c.id"}) for name, df in make_pair().items()}
    result = synthdp.generate_synthetic(tables, links={"orders.c.id": "customers.c.id"}, random_state=3,
                                        **{**FAST, **PUBLIC})
    assert result.tables["orders"]["c.id"].isin(result.tables["customers"]["c.id"]).all()


def test_the_child_s_own_key_is_never_modelled_and_written_fresh():
    tables = make_pair()
    tables["orders"].insert(0, "oid", np.arange(len(tables["orders"])) * 7 + 1000)
    orders = fit(tables, keys={"orders": "oid"}).tables["orders"]
    assert list(orders["oid"]) == list(range(1, len(orders) + 1)) and orders["oid"].dtype == np.int64


def test_a_child_table_without_its_foreign_key_is_refused():
    tables = make_pair()
    tables["orders"] = tables["orders"].rename(columns={"cid": "customer"})
    with pytest.raises(InputError, match="the foreign key column"):
        fit(tables)


def test_a_duplicated_parent_key_is_told_to_the_owner_only():
    tables = make_pair()
    tables["customers"] = pd.concat([tables["customers"], tables["customers"].iloc[:4]], ignore_index=True)
    with pytest.warns(OwnerWarning, match="4 key"):
        result = fit(tables)
    assert "4 key" not in str(result.report.to_dict())


def test_a_list_option_is_given_per_table():
    """``categorical=`` (a list of columns) keyed by table, checked per table (docs/privacy.md §12)."""
    tables = make_pair()
    tables["customers"]["band"] = np.arange(len(tables["customers"])) % 2
    categories = {"customers": {"region": ["N", "S"], "band": ["0", "1"]}, "orders": {"item": ["a", "b", "c"]}}
    result = fit(tables, categorical={"customers": ["band"]}, categories=categories)
    assert set(result.tables["customers"]["band"].astype(str)) <= {"0", "1"}
    with pytest.raises(InputError, match="categorical"):
        fit(tables, categorical={"customers": "band"})


def test_children_of_parents_the_joined_model_gives_no_mass_come_from_its_marginal(released):
    """A joined model holding only children of region N: parents of region S still get their m_i children, drawn
    from the joined model unconditioned (the public fallback, docs/privacy.md §12 step 5)."""
    model = released.model
    joined = model.joined
    codes = joined.estimate.sample(200, np.random.default_rng(0))
    region = joined.schema.names.index("customers.region")
    only_n = codes[codes[:, region] == joined.schema["customers.region"].code_of["N"]]
    fixed = replace(model, joined=replace(joined, estimate=ReleasedRecords(joined.schema.domain, only_n)))
    tables = fixed.sample(300, random_state=2)
    south = tables["customers"].loc[tables["customers"]["region"] == "S", "cid"]
    assert len(south) and tables["orders"]["cid"].isin(south).any()
    assert set(tables["orders"]["item"]) <= {"a", "b", "c"}
