"""One object per method: the registry is the one list, a new method is one class plus a registration, and auto's
choice among them follows from each method's suitability and error bound (public inputs only)."""

from __future__ import annotations

import dataclasses
import itertools

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.accounting.ledger import Ledger
from synthdp.accounting.zcdp import rho_for_dp
from synthdp.config import SynthesisConfig, options_in
from synthdp.core import parameters
from synthdp.core.errors import InputError
from synthdp.methods import registry
from synthdp.methods.base import Choice, ErrorBound, Method, MethodInputs, MethodOutput, Suitability
from synthdp.methods.game.method import planned_spends
from synthdp.methods.game.settings import GameSettings
from synthdp.methods.measure.method import ORACLE_OPTIONS
from synthdp.plan import make_plan


def test_the_registry_is_the_one_list_of_methods():
    """The config checks a method's name against the registry; the options each method owns are its package's."""
    assert registry.method_names() == ("auto", "measure", "game") and not hasattr(parameters, "METHODS")
    with pytest.raises(InputError, match=r"method 'measur' is not available; choose one of \['auto', 'measure', "
                                         r"'game'\]"):
        synthdp.generate_synthetic("no-such-file.csv", epsilon=1, method="measur")  # before anything is read
    assert registry.METHODS["game"].options == GameSettings.names() == options_in("game")
    assert registry.METHODS["measure"].options == ("measure_options",) and ORACLE_OPTIONS <= set(GameSettings.names())
    with pytest.raises(InputError, match="not available.*'auto', 'measure', 'game'"):
        registry.get_method("measure-later")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.METHODS["game"])


@dataclasses.dataclass(frozen=True)
class UniformPlan:
    inputs: MethodInputs
    rows: Choice


class Uniform(Method):
    """A toy method, defined here only: records drawn uniformly from the public domain, its whole budget charged."""

    name = "uniform"
    title = "uniform toy"
    release_defaults = {"toy_draws": None}

    def suitability(self, inputs):
        return Suitability(True, "the toy serves every class")

    def plan(self, inputs):
        return UniformPlan(inputs, Choice(inputs.n_rows or 7, "the toy's fixed size"))

    def run(self, plan, real, ledger, rng, zcdp=None):
        inputs = plan.inputs
        ledger.spend("uniform", inputs.epsilon, inputs.delta or Fraction(0), inputs.relation, "the toy's charge")
        post = rng.numpy_generator()
        codes = np.column_stack([post.integers(0, k, plan.rows.value) for k in plan.inputs.query_class.domain.sizes])
        return MethodOutput(codes, ledger, post, False, [], {"toy_draws": len(codes)}, {}, ["the toy read nothing"])

    def choices(self, plan):
        return {"toy_rows": plan.rows.to_dict()}

    def rows(self, plan):
        return plan.rows

    def summary(self, release):
        return f"uniform toy: {release.toy_draws} records drawn uniformly"


@pytest.fixture
def toy(monkeypatch):
    """The toy registered (last: the preference order), for one test: nothing else names it."""
    toy = Uniform()
    monkeypatch.setitem(registry.METHODS, toy.name, toy)
    return toy


def test_a_new_method_is_planned_run_and_reported_by_name_without_touching_the_driver(demo, toy):
    df, schema = demo
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, method="uniform", random_state=0,
                                     progress=False)
    assert res.plan.method is toy and res.plan.method_reason == "chosen by the caller"
    assert isinstance(res.plan.method_plan, UniformPlan) and len(res.data) == 7
    assert res.report.method == "uniform" and res.report.epsilon_spent == 1
    assert [e["mechanism"] for e in res.report.ledger] == ["uniform"]
    assert res.report.plan["toy_rows"] == {"value": 7, "reason": "the toy's fixed size"}
    assert res.report.plan["rows"]["reason"] == "the toy's fixed size"
    assert "uniform toy: 7 records drawn uniformly" in res.report.summary()
    assert res.report.toy_draws == 7 and res.report.to_dict()["toy_draws"] == 7  # its release section
    assert res.report.to_dict()["rho_budget"] is None and res.report.rounds is None  # the others' at their defaults
    with pytest.raises(InputError, match=r"choose one of \['auto', 'measure', 'game', 'uniform'\]"):
        synthdp.generate_synthetic(df, epsilon=1, method="uniformm")


def test_a_method_releases_only_the_fields_it_declares(toy):
    with pytest.raises(ValueError, match=r"released fields it does not declare: \['rho_budget'\]"):
        toy.release_section({"toy_draws": 3, "rho_budget": "1"})
    assert toy.release_section({}) == {"toy_draws": None}


def test_auto_takes_the_first_method_that_serves(demo, toy, monkeypatch):
    df, schema = demo
    monkeypatch.setattr(registry, "METHODS", {toy.name: toy, **registry.METHODS})
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9, schema=schema, random_state=0,
                                     progress=False)  # auto: planned, run, charged and reported
    assert res.report.method == "uniform" and res.report.plan["method"]["reason"] == "the toy serves every class"
    assert res.report.epsilon_spent == 1 and res.report.toy_draws == len(res.data) == 7
    plan = make_plan(SynthesisConfig(epsilon=1, delta=1e-9, schema=schema), schema)
    assert plan.method is toy and plan.method_reason == "the toy serves every class"
    game = make_plan(SynthesisConfig(epsilon=1, delta=1e-9, schema=schema, rounds=3), schema)
    assert game.method.name == "game" and "over uniform toy and select-measure-estimate, which do not" in \
        game.method_reason


def test_auto_says_why_the_preferred_method_declined(demo):
    """Pure DP on a class that is not a marginal class: select-measure-estimate declines, the game serves."""
    _, schema = demo
    plan = make_plan(SynthesisConfig(epsilon=1, delta=1e-9, schema=schema, query_class="halfspaces"), schema)
    assert plan.method.name == "measure" and "most probable records" in plan.method_reason
    method, why = registry.choose_method("auto", dataclasses.replace(plan.method_plan.inputs, delta=None))
    assert method.name == "game"
    assert why == ("pure DP: select-measure-estimate serves only marginal classes under pure DP (docs/privacy.md "
                   "§10.2): the game serves it")


@pytest.mark.parametrize("a, b", list(itertools.product([(12.0, 0.0), (3.0, 0.2), (40.0, 0.05), (5.0, 1.2)],
                                                   [(10.0, 0.1), (2.0, 0.0), (30.0, 0.3), (12.0, 0.0)])))
def test_bound_comparison_is_the_comparison_at_every_informative_n(a, b):
    """Brute force over n: ``a`` is at most ``b`` wherever ``a`` is below 1, exactly when the closed form says so."""
    mine, other = ErrorBound(*a, ""), ErrorBound(*b, "")
    ns = np.concatenate([np.arange(1, 10_000), np.geomspace(1e4, 1e12, 2000)])
    informative = [n for n in ns if mine.a / n + mine.b < 1]
    brute = bool(informative) and all(mine.a / n + mine.b <= other.a / n + other.b + 1e-12 for n in informative)
    assert mine.at_most_wherever_informative(other) == brute


def test_methods_see_public_inputs_only():
    """The inputs a method plans from hold no table: only the class, the budget, the relation and the options."""
    names = {f.name for f in dataclasses.fields(MethodInputs)}
    assert names == {"query_class", "epsilon", "delta", "relation", "contribution_bound", "options",
                     "budget_epsilon", "given", "filter_rho", "filter_delta", "filter_budget", "released_columns"}


#: The driver's modules whose functions stay within 60 lines (synthdp/methods/: tests/repository/test_packaging.py), and the
#: functions not yet split (the parameter list's).
@pytest.mark.parametrize("ahead", [Fraction(0), Fraction(1, 100), Fraction(1, 20)])
def test_the_filter_is_the_conversion_of_the_methods_budget_whatever_the_steps_ahead_spent_in_it(demo, ahead):
    """The zCDP filter opened for select-measure-estimate has exactly the ``rho`` that the method's
    ``(epsilon, delta)`` converts to (docs/privacy.md §8.5), which is what the run's ledger is charged; what PrivTree
    or partition selection spent in it first (§10.3, §10.5) leaves the method that much less, never more."""
    _, schema = demo
    plan = make_plan(SynthesisConfig(epsilon=1, delta=1e-6, schema=schema, query_class="marginals:2"), schema)
    method, inputs = plan.method, dataclasses.replace(plan.method_plan.inputs, filter_rho=ahead)
    ledger = Ledger(inputs.epsilon, inputs.delta)
    measured = method.plan(inputs)
    zcdp = method.open_filter(measured, ledger)
    assert zcdp.rho_budget == rho_for_dp(inputs.epsilon, inputs.delta)
    assert method.zcdp_budget(measured) == zcdp.rho_budget - ahead
    assert ledger.total().epsilon == inputs.epsilon and ledger.total().delta == inputs.delta


def test_planned_rspm_spends_follow_the_rows_per_unit():
    """With a privacy unit of up to ``k`` rows, RSPM's sensitivity (and so its clip) grows by ``k`` (docs/privacy.md
    §10.6): the game's dry run must replay exactly what the players record, or its up-front check is wrong."""
    rng = np.random.default_rng(0)
    pid = np.repeat([f"p{i}" for i in range(150)], rng.integers(1, 4, 150))
    df = pd.DataFrame({"pid": pid, "a": rng.choice(["x", "y", "z"], len(pid)), "b": rng.choice(["p", "q"], len(pid))})
    config = SynthesisConfig(epsilon=1, delta=1e-7, query_class="conjunctions:2", query_player="rspm", rounds=4,
                             samples_per_round=5, progress=False, random_state=1, privacy_unit="pid",
                             max_rows_per_unit=3, categories={"a": ["x", "y", "z"], "b": ["p", "q"]})
    res = synthdp.api.synthesize(df, config)
    planned = planned_spends(res.plan.method_plan)
    assert [(m, e, d, float(c)) for m, e, d, c in planned] == \
        [(x["mechanism"], Fraction(x["epsilon"]), Fraction(x["delta"]), x["clip"]) for x in res.report.ledger]
    alone = dataclasses.replace(res.plan.method_plan.inputs, contribution_bound=1)
    assert planned_spends(dataclasses.replace(res.plan.method_plan, inputs=alone)) != planned


@pytest.mark.parametrize("relation, l1", [("add-remove", 1), ("replace-one", 2)])
def test_pure_measurement_bound_reads_the_relations_sensitivity(demo, relation, l1):
    """``A = k Delta_1 (ln(2C) + 1) / epsilon + 1`` (docs/privacy.md §10.2): ``Delta_1`` is 2 under replace-one."""
    _, schema = demo
    plan = make_plan(SynthesisConfig(epsilon=2, schema=schema, query_class="marginals:2", relation=relation), schema)
    inputs = plan.method_plan.inputs
    workload = list(itertools.combinations(range(len(schema.domain)), 2))
    cells = sum(schema.domain.cells(m) for m in workload)
    bound = registry.METHODS["measure"].suitability(inputs).bound
    assert bound.a == pytest.approx(len(workload) * l1 * (np.log(2 * cells) + 1) / 2 + 1) and bound.b == 0
