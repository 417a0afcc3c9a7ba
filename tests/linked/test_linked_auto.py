"""``max_rows_per_unit="auto"`` for two linked tables (docs/privacy.md §12, "Choosing k privately"): ``k`` chosen
by §10.6's mechanism on each family's child rows, charged ahead of both views and stated in the report; every
refusal before it, with nothing charged."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.accounting.ledger import as_delta, as_epsilon
from synthdp.accounting.zcdp import rho_for_dp
from synthdp.config import SynthesisConfig
from synthdp.core.errors import SynthDPError
from synthdp.core.owner import OwnerWarning
from synthdp.linked import fitting
from synthdp.linked.fitting import synthesize_linked
from synthdp.mechanisms import units
from synthdp.methods.measure import method as measure_method

from tests.linked.test_linked_fit import FAST, LINKS, PUBLIC, fit, make_pair

AUTO = {**FAST, "max_rows_per_unit": "auto"}


class Stop(Exception):
    """Raised by a stand-in for the views' runs: the test only looks at what came before them."""


@pytest.fixture
def choices(monkeypatch):
    """Each call of the single table's mechanism from the linked run: its rows per unit, its ledger's spends
    before it, its candidates and what it chose."""
    calls = []
    real = units.choose_rows_per_unit

    def spy(rows, **kw):
        chosen = real(rows, **kw)
        calls.append(dict(rows=np.asarray(rows), chosen=chosen, ledger=kw["ledger"]))
        return chosen

    monkeypatch.setattr(fitting, "choose_rows_per_unit", spy)
    return calls


def _stopped(tables, runs=None, **options):
    """The linked run up to its first view's run (which raises :class:`Stop`)."""
    def run_view(*args, **kwargs):
        if runs is not None:
            runs.append(args)
        raise Stop

    with pytest.raises(Stop):
        synthesize_linked(tables, SynthesisConfig(**{**AUTO, **PUBLIC, "links": LINKS, **options}), run_view)


def test_the_score_reads_each_family_s_child_rows(choices):
    """One count per family (a parent key with all its rows): a key held by two parent rows is one family, a parent
    without a key or without children counts 0, orphans count for nobody, a family of 40 children counts 40 (the
    count is taken before the cap, never per child row or per value of the child's own key)."""
    customers = pd.DataFrame({"cid": ["a", "b", "b", "c", "d", None], "region": ["N", "S", "N", "S", "N", "S"]})
    per = {"a": 2, "b": 5, "c": 40}
    cid = [key for key, m in per.items() for _ in range(m)] + ["zz", None, "zz"]  # three orphans
    orders = pd.DataFrame({"cid": cid, "oid": np.arange(len(cid)), "item": "a"})
    _stopped({"customers": customers, "orders": orders}, keys={"orders": "oid"})
    (call,) = choices
    assert sorted(call["rows"].tolist()) == [0, 0, 2, 5, 40]


def test_the_choice_is_the_first_charge_and_the_views_share_what_it_leaves(choices):
    result = fit(make_pair(), max_rows_per_unit="auto")
    (call,) = choices
    assert len(call["ledger"].events) == 1
    event = call["ledger"].events[0]
    assert event.ahead and event.epsilon == Fraction(1, 20) and "rows per unit" in event.note
    report = result.report.to_dict()
    k = call["chosen"].k
    assert report["max_rows_per_unit"] == k == result.model.k
    choice = report["max_rows_per_unit_choice"]
    assert choice["value"] == k and choice["epsilon"] == 0.05 and choice["candidates"] == "1..32"
    assert report["composition"].startswith("the choice of k first (pure epsilon 0.05)")
    assert Fraction(report["rho"]["total"]) == rho_for_dp(as_epsilon(0.95), as_delta(1e-9))
    views = report["views"]
    assert views["parent"]["epsilon_budget"] + views["joined"]["epsilon_budget"] <= 0.95 + 1e-12
    assert views["joined"]["max_rows_per_unit"] == k
    assert result.model.parent.schema["n_orders"].categories == tuple(map(str, range(k + 1)))
    assert report["epsilon_spent"] == 1 and f"epsilon={0.05:g}" in result.report.summary()


def test_under_pure_dp_the_choice_is_added_to_the_views_spends(choices):
    report = fit(make_pair(), max_rows_per_unit="auto", delta=None).report.to_dict()
    views = report["views"]
    assert report["epsilon_spent"] == pytest.approx(
        0.05 + views["parent"]["epsilon_spent"] + views["joined"]["epsilon_spent"])
    assert 0.94 < report["epsilon_spent"] <= 1


def test_families_over_the_largest_candidate_choose_it(choices):
    """Every family holds 40 children: the largest candidate stands for "32 or more" (the score's cap), so it is
    drawn, not a k uniform over 1..32."""
    pair = make_pair(customers=150)
    pair["orders"] = pd.DataFrame({"cid": np.repeat(pair["customers"]["cid"], 40), "item": "a"})
    for seed in range(3):
        _stopped(pair, epsilon=10, random_state=seed)
    assert [call["chosen"].k for call in choices] == [32] * 3


def test_neighbours_differing_by_one_family_release_the_same_unpaid_fields():
    """One family of 7 children added, the same seed: the same k (for this seed) and every field that is not
    paid for the same, as with a public k."""
    tables = make_pair()
    more = {"customers": pd.concat([tables["customers"], pd.DataFrame({"cid": [999], "region": ["N"]})],
                                   ignore_index=True),
            "orders": pd.concat([tables["orders"], pd.DataFrame({"cid": [999] * 7, "item": ["a"] * 7})],
                                ignore_index=True)}
    a, b = (fit(t, n_rows=50, max_rows_per_unit="auto") for t in (tables, more))
    ra, rb = a.report.to_dict(), b.report.to_dict()
    assert ra["max_rows_per_unit"] == rb["max_rows_per_unit"]
    paid = {"selected_queries", "measurements", "rows_written"}
    for view in ("parent", "joined"):
        va, vb = ra["views"][view], rb["views"][view]
        assert set(va) == set(vb) and [f for f in set(va) - paid if va[f] != vb[f]] == [], view
    assert {f: ra[f] for f in set(ra) - {"views"}} == {f: rb[f] for f in set(rb) - {"views"}}
    assert list(a.tables["customers"]["cid"]) == list(b.tables["customers"]["cid"]) == list(range(1, 51))


def _refused_before_the_choice(choices, tables, message, **options):
    runs = []
    with pytest.raises(SynthDPError, match=message) as caught:
        synthesize_linked(tables, SynthesisConfig(**{**AUTO, **PUBLIC, "links": LINKS, **options}),
                          lambda *a, **kw: runs.append(a))
    assert choices == [] and runs == [] and "came after private steps" not in str(caught.value)


@pytest.mark.parametrize("options, message", [
    (dict(links={"orders.cid": "customers.nope"}), "has no column 'nope'"),
    (dict(categories={"region": ["N", "S"]}), "keyed by table name"),
    (dict(query_class="bogus:2"), "bogus"),
])
def test_bad_links_and_options_are_refused_before_the_choice(choices, options, message):
    _refused_before_the_choice(choices, make_pair(), message, **options)


def test_a_plan_refused_at_every_k_is_refused_before_the_choice(choices, monkeypatch):
    """A cap on counted cells below what either view counts at k = 1: refused at every candidate, nothing charged."""
    monkeypatch.setattr(measure_method, "MAX_COUNTED_CELLS", 20)
    _refused_before_the_choice(choices, make_pair(), "candidate marginals")


def test_a_plan_refused_above_some_k_narrows_the_candidates(choices, monkeypatch):
    """The joined view's candidates grow with k (m has k + 1 values): a cap on counted cells that its plans pass
    at k <= 3 only makes the choice range over 1..3, the largest standing for "3 or more" (public inputs: the
    plans), and the report says so."""
    monkeypatch.setattr(measure_method, "MAX_COUNTED_CELLS", 40)
    report = fit(make_pair(), max_rows_per_unit="auto").report.to_dict()
    (call,) = choices
    assert call["chosen"].candidates == (1, 2, 3) and call["chosen"].k <= 3
    assert report["max_rows_per_unit_choice"]["candidates"] == "1..3"


@pytest.mark.parametrize("table, change, message", [
    ("orders", dict(item="z"), "'z'"),           # a child value outside its public categories
    ("customers", dict(region="W"), "'W'"),      # a parent value outside its public categories
])
def test_a_value_refused_in_either_view_is_refused_before_the_choice(choices, table, change, message):
    tables = make_pair()
    tables[table].loc[tables[table].index[-1], list(change)] = list(change.values())
    _refused_before_the_choice(choices, tables, message)


@pytest.mark.parametrize("customers, categories", [
    (600, {"customers": {"region": ["N", "S"]}}),  # the child's categories: they fit at small k, not at every k
    (40, {"orders": {"item": ["a", "b", "c"]}}),   # the parent's categories: 40 parents are too few at any k
])
def test_a_column_too_small_to_learn_is_refused_before_the_choice(choices, customers, categories):
    """Categories learned privately in either view, with too few rows at some candidate (the joined view at k keeps
    sum min(m_w, k) rows; the parent view one row a family): refused before anything is charged."""
    _refused_before_the_choice(choices, make_pair(customers=customers), "rows", categories=categories)


def test_the_choice_comes_before_either_view_runs(choices):
    """The choice of k is the linked run's first private step: when the first view's run starts, k has been drawn
    and charged, and that view is planned at the drawn k."""
    seen = []

    def run_view(frame, config, **kw):
        seen.append((len(choices), config.schema["n_orders"].categories if config.schema else
                     tuple(map(str, config.categories["n_orders"]))))
        raise Stop

    with pytest.raises(Stop):
        synthesize_linked(make_pair(), SynthesisConfig(**{**AUTO, **PUBLIC, "links": LINKS}), run_view)
    (call,) = choices
    assert seen == [(1, tuple(map(str, range(call["chosen"].k + 1))))]


def test_the_owner_is_warned_once_of_what_the_plans_at_every_candidate_read():
    """Planning both views at each of the 32 candidates reads the same rows each time: an owner's warning of those
    plans (here the frame's dtype against the declared bounds) is given once, by the views' runs."""
    tables = make_pair()
    tables["orders"] = tables["orders"].assign(amount=np.arange(len(tables["orders"])) % 90)  # int64, declared real
    with pytest.warns(OwnerWarning) as caught:
        fit(tables, max_rows_per_unit="auto", bounds={"orders": {"amount": (0.0, 100.0)}})
    dtypes = [w for w in caught if "dtypes do not type a release" in str(w.message)]
    assert len(dtypes) == 1, [str(w.message)[:80] for w in caught]
