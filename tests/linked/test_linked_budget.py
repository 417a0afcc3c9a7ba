"""Two linked views measured in one zCDP filter (docs/privacy.md §12, "One filter for both views"): one conversion
of the user's budget, fixed public rho shares each charged once, the user's budget in the report, both plans
before any private step, no joined-view marginal over parent columns alone, and basic composition under pure DP."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.accounting.ledger import as_delta
from synthdp.accounting.zcdp import rho_for_dp
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError, SynthDPError
from synthdp.linked.fitting import PARENT_SHARE, synthesize_linked
from synthdp.mechanisms import partition
from synthdp.methods.measure import method as measure_method

from tests.linked.test_linked_fit import FAST, LINKS, PUBLIC, fit, make_pair


@pytest.fixture(scope="module")
def released():
    return fit(make_pair()).report.to_dict()


def _filter_spent(view: dict) -> Fraction:
    return sum((Fraction(event["rho"]) for event in view["zcdp_ledger"]), Fraction(0))


def test_one_conversion_of_the_budget_is_split_in_fixed_shares(released):
    """Public categories, no numeric column: nothing is spent ahead or reserved, so the one filter's rho is the
    conversion of the whole (1, 1e-9), and the parent view's share is PARENT_SHARE of it."""
    rho = {view: Fraction(value) for view, value in released["rho"].items()}
    assert rho["total"] == rho_for_dp(Fraction(1), as_delta(1e-9))
    assert rho["parent"] == rho["total"] * PARENT_SHARE and rho["joined"] == rho["total"] - rho["parent"]


@pytest.mark.parametrize("view", ["parent", "joined"])
def test_each_view_s_filter_spends_its_share_once(released, view):
    """Each filter's charges add up to its share (the last round takes what is left), never more: a share charged
    twice, or a view converting its own share instead, moves the sum."""
    share, spent = Fraction(released["rho"][view]), _filter_spent(released["views"][view])
    assert share * Fraction(999, 1000) <= spent <= share


def test_the_report_shows_the_user_s_budget_and_how_the_views_composed(released):
    assert released["epsilon_budget"] == 1 and released["delta_budget"] == 1e-9
    assert released["epsilon_spent"] == 1 and released["delta_spent"] == 1e-9
    assert released["composition"].startswith("one zCDP filter for both views")


def test_no_joined_view_marginal_is_over_parent_columns_alone(released):
    """The parent view answers marginals over its columns and m (docs/privacy.md §12 step 2)."""
    measured = [m["marginal"] for m in released["views"]["joined"]["measurements"]]
    assert measured and all("item" in marginal for marginal in measured)
    assert any(len(marginal) > 1 for marginal in measured)


def test_a_refusal_of_the_joined_view_s_plan_comes_before_the_parent_view_runs(monkeypatch):
    """A size cap the joined view's candidates (item, region, m) pass and the parent view's (region, m) do not
    reach: the joined plan refuses, and the parent view's run never starts."""
    monkeypatch.setattr(measure_method, "MAX_COUNTED_CELLS", 30)
    calls = []
    with pytest.raises(InputError, match="candidate marginals"):
        synthesize_linked(make_pair(), SynthesisConfig(**{**FAST, **PUBLIC, "links": LINKS}),
                          lambda *a, **kw: calls.append(a))
    assert calls == []


def test_under_pure_dp_the_views_compose_by_adding_their_shares():
    report = fit(make_pair(), delta=None).report.to_dict()
    assert report["rho"] is None and report["composition"].startswith("basic composition")
    views = report["views"]
    assert views["parent"]["epsilon_budget"] + views["joined"]["epsilon_budget"] <= 1
    assert report["epsilon_spent"] == pytest.approx(1, abs=2e-6)


def test_the_joined_view_s_reserve_for_learning_categories_comes_out_of_the_one_conversion():
    """The child's categories learned in the joined view's filter: the delta it reserves (§10.5) is set aside
    before the one conversion."""
    report = fit(make_pair(), categories={"customers": {"region": ["N", "S"]}}).report.to_dict()
    reserved = as_delta(report["views"]["joined"]["delta_budget"]) * partition.DOMAIN_DELTA_SHARE
    assert Fraction(report["rho"]["total"]) == rho_for_dp(Fraction(1), as_delta(1e-9) - reserved)


def with_numbers(table: str) -> dict:
    """The pair with a numeric column (public bounds, its cells learned) in ``table``."""
    tables = make_pair()
    tables[table]["x"] = np.random.default_rng(1).uniform(0, 90, len(tables[table]))
    return tables


def test_a_pure_step_ahead_of_the_parent_view_s_filter_is_subtracted_before_the_one_conversion():
    """The parent view's noisy total (docs/privacy.md §13) is a pure spend ahead: the filters share the
    conversion of what it leaves."""
    report = fit(with_numbers("customers"), bounds={"customers": {"x": (0.0, 90.0)}}, cells_from_total=True,
                 point_masses=False).report.to_dict()
    ahead = sum(Fraction(spend["epsilon"]) for spend in report["views"]["parent"]["ledger"] if spend["ahead"])
    assert ahead > 0
    assert Fraction(report["rho"]["total"]) == rho_for_dp(1 - ahead, as_delta(1e-9))
    for view in ("parent", "joined"):  # PrivTree's cells are the parent filter's first charges: within its share
        share, spent = Fraction(report["rho"][view]), _filter_spent(report["views"][view])
        assert share * Fraction(999, 1000) <= spent <= share, view


def test_a_pure_step_ahead_of_the_joined_view_s_filter_makes_the_views_compose_by_adding_their_shares():
    """It would sit between the two filters (docs/privacy.md §12, "Where the conservative reading stays")."""
    report = fit(with_numbers("orders"), bounds={"orders": {"x": (0.0, 90.0)}}, cells_from_total=True,
                 point_masses=False).report.to_dict()
    assert report["rho"] is None and report["composition"].startswith("basic composition")
    assert any(spend["ahead"] for spend in report["views"]["joined"]["ledger"])


def _small_pair():
    rng = np.random.default_rng(1)
    customers = pd.DataFrame({"cid": np.arange(300), "region": rng.choice(["N", "S"], 300)})
    owner = np.repeat(np.arange(300), rng.integers(0, 3, 300))
    orders = pd.DataFrame({"cid": owner, "amount": rng.gamma(2, 10, len(owner)),
                           "item": rng.choice(["a", "b", "c"], len(owner))})
    return {"customers": customers, "orders": orders}


@pytest.mark.parametrize("options, message", [
    ({"bounds": {"orders": {"amount": (0, 200)}}, "categories": {"orders": {"item": ["a", "b", "c"]}}},
     "amount"),  # integer bounds, fractional values: the child's values refused
    ({"bounds": {"orders": {"amount": (0.0, 200.0)}}}, "item"),  # too few rows to learn the child's categories
])
def test_a_refusal_read_off_the_child_rows_comes_before_the_parent_view_runs(options, message):
    """The joined view's value and threshold checks run on the kept child rows before either view draws noise."""
    calls = []
    config = SynthesisConfig(query_class="marginals:2", epsilon=1, delta=1e-9, progress=False, random_state=0,
                             max_rows_per_unit=2, links={"orders.cid": "customers.cid"},
                             categories={"customers": {"region": ["N", "S"]}, **options.get("categories", {})},
                             bounds=options["bounds"])
    with pytest.raises(SynthDPError, match=message):  # refused with the fix, naming the column
        synthesize_linked(_small_pair(), config, lambda *a, **kw: calls.append(a))
    assert calls == []


@pytest.mark.parametrize("when", ["run", "checks"])
@pytest.mark.parametrize("stop", ["refusal", "interrupt"])
def test_a_refusal_or_interrupt_in_the_joined_view_states_what_the_parent_view_was_charged(when, stop):
    """The parent view has run (its filter charged): a refusal or an interrupt in the joined view's run, or in the
    checks of the drawn pair, states the parent view's charge as well as the joined view's own, each once
    (docs/privacy.md §10.1, §12); with "auto", the choice of k first."""
    from synthdp import api
    from synthdp.accounting.spend import spend_text, stating_spend

    ledgers = []

    def raise_stop():
        if stop == "refusal":
            raise InputError("the joined view stopped here")
        raise KeyboardInterrupt

    class Checked:
        def __init__(self, run):
            self.run = run

        def __getattr__(self, name):
            return getattr(self.run, name)

        def result(self, records):
            if self.run is not ledgers[0][1] and when == "checks":
                with stating_spend(self.run.ledger):
                    raise_stop()
            return self.run.result(records)

    def run_view(frame, config, **kw):
        run = api.run_release(frame, config, **kw)
        ledgers.append((run.ledger, run))
        if len(ledgers) == 2 and when == "run":
            with stating_spend(run.ledger):
                raise_stop()
        return Checked(run)

    config = SynthesisConfig(**{**FAST, **PUBLIC, "links": LINKS, "max_rows_per_unit": "auto"})
    with pytest.raises(InputError if stop == "refusal" else KeyboardInterrupt) as caught:
        synthesize_linked(make_pair(), config, run_view)
    (parent, _), (joined, _) = ledgers
    assert parent.events and joined.events
    if stop == "refusal":
        text = str(caught.value)
        assert text.count(str(parent.total())) == 1 and text.count(str(joined.total())) == 1, text
        assert "(0.05, 0)-DP" in text, text  # the choice of k, stated too
    else:
        spent = [spend_text(float(l.total().epsilon), float(l.total().delta)) for l in (parent, joined)]
        assert caught.value.charged == f"epsilon=0.05, delta=0, then {spent[0]}, then {spent[1]}"
