"""Select-measure-estimate under pure DP (docs/privacy.md §10.2): the Laplace measurement, the filter, the report."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.data import AggregatedData
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms import laplace as laplace_module
from synthdp.accounting.ledger import Ledger
from synthdp.mechanisms.laplace import laplace_mean_abs, laplace_measure, laplace_variance, spent_epsilon
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import estimators, rounds
from synthdp.methods.measure import release as release_module
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import candidate_weights
from tests.methods.measure.test_measure import DOMAIN, OPTIONS, WORKLOAD, table


def pure_run(data, relation="add-remove", seed=0, epsilon=Fraction(1), **kw):
    ledger = Ledger(epsilon, Fraction(0))
    release = measure(data, WORKLOAD, budget=epsilon, relation=relation, ledger=ledger, rng=PrivateRandom(seed),
                      options=kw.pop("options", OPTIONS), progress=False, pure=True, **kw)
    return release, ledger


def neighbours(data: AggregatedData, relation: str):
    """Every neighbour of ``data`` under ``relation`` (brute force over the domain's records)."""
    codes = data.expand()
    records = list(itertools.product(*(range(s) for s in DOMAIN.sizes)))
    if relation == "add-remove":
        yield AggregatedData.from_codes(DOMAIN, codes[1:])
        for x in records:
            yield AggregatedData.from_codes(DOMAIN, np.vstack([codes, [x]]))
    else:
        for x in records:
            changed = codes.copy()
            changed[0] = x
            yield AggregatedData.from_codes(DOMAIN, changed)


# --------------------------------------------------------------------------
# the measurement (Lemma 10.1)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_laplace_measurements_are_epsilon_dp_on_every_neighbour(monkeypatch, relation):
    """The exact privacy loss of each Laplace measurement of a run, a * ||f(D) - f(D')||_1 maximised over every
    neighbour (brute force), is at most the epsilon charged for it, and equals it: a halved sensitivity (or a
    doubled rate) exceeds the charge on some neighbour, a doubled one leaves it unattained."""
    data = table(60)
    drawn = []
    real = laplace_module.discrete_laplace_array

    def spy(size, s, t, rng):
        drawn.append(Fraction(s, t))
        return real(size, s, t, rng)

    monkeypatch.setattr(laplace_module, "discrete_laplace_array", spy)
    release, ledger = pure_run(data, relation=relation, options=OPTIONS)
    charged = [e for e in ledger.events if e.mechanism == "laplace"]
    assert len(charged) == len(release.measurements) == len(drawn)
    others = list(neighbours(data, relation))
    for m, event, rate in zip(release.measurements, charged, drawn):
        assert m.scale == rate and m.cost == event.epsilon  # the charge is for the rate actually drawn
        loss = max(rate * int(np.abs(other.marginal(m.attrs) - data.marginal(m.attrs)).sum()) for other in others)
        assert loss == event.epsilon


def test_laplace_noise_has_the_law_of_its_rate():
    """Statistical audit: the measurement's noise has DLap(a)'s variance 2e^-a/(1-e^-a)^2 and mean |Z| 1/sinh a
    (20,000 draws; a halved rate would double the spread, a doubled one halve it)."""
    rate = Fraction(1, 4)
    ledger = Ledger(Fraction(10**4), Fraction(0))
    zeros = np.zeros(20_000, dtype=np.int64)
    noise = laplace_measure(zeros, rate=rate, sensitivity=1, rng=PrivateRandom(7), ledger=ledger,
                            relation="add-remove")
    assert abs(np.var(noise) / laplace_variance(rate) - 1) < 0.06
    assert abs(np.mean(np.abs(noise)) / laplace_mean_abs(rate) - 1) < 0.04
    assert laplace_variance(rate) == pytest.approx(2 * math.exp(-0.25) / (1 - math.exp(-0.25)) ** 2)
    # the exact pmf's moments, summed directly
    k = np.arange(-400, 401)
    pmf = np.tanh(0.125) * np.exp(-0.25 * np.abs(k))
    assert laplace_variance(rate) == pytest.approx(float(pmf @ k**2), rel=1e-9)
    assert laplace_mean_abs(rate) == pytest.approx(float(pmf @ np.abs(k)), rel=1e-9)
    assert [e.epsilon for e in ledger.events] == [rate]


def test_a_refused_measurement_draws_nothing():
    ledger = Ledger(Fraction(1, 2), Fraction(0))
    rng = PrivateRandom(3)
    before = rng.random_words(1)
    rng = PrivateRandom(3)
    with pytest.raises(PrivacyError, match="budget exceeded"):
        laplace_measure(np.zeros(3, dtype=np.int64), rate=Fraction(1, 2), sensitivity=2, rng=rng, ledger=ledger,
                        relation="replace-one")
    assert ledger.events == [] and (rng.random_words(1) == before).all()


# --------------------------------------------------------------------------
# the filter (Theorem 10.2)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_the_filter_never_lets_the_sum_exceed_epsilon(seed):
    """An adversarial schedule of Laplace measurements and exponential selections against one pure ledger: every
    step that would take the sum past epsilon is refused before it draws, and the sum never exceeds epsilon."""
    from synthdp.mechanisms.selection import exponential_mechanism

    gen = np.random.default_rng(seed)
    budget = Fraction(1)
    ledger, rng = Ledger(budget, Fraction(0)), PrivateRandom(seed)
    refused = 0
    for _ in range(60):
        eps = Fraction(int(gen.integers(1, 200)), 1000)
        try:
            if gen.random() < 0.5:
                laplace_measure(np.arange(4), rate=eps, sensitivity=int(gen.integers(1, 3)), rng=rng, ledger=ledger,
                                relation="add-remove")
            else:
                exponential_mechanism(np.arange(5), epsilon=eps, sensitivity=1, rng=rng, ledger=ledger,
                                      relation="add-remove")
        except PrivacyError:
            refused += 1
        assert spent_epsilon(ledger) <= budget
        assert ledger.total().epsilon == spent_epsilon(ledger)
    assert refused > 0


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_a_pure_run_spends_its_epsilon_and_charges_each_selection_its_epsilon(monkeypatch, relation):
    """The run's ledger holds only pure spends summing to at most epsilon (all of it: the last round takes what
    is left); each exponential selection is charged its own epsilon (not eps**2/8) with the score sensitivity
    of §8.3, and each measurement rate * Delta_1 with Delta_1 = 1 or 2 by relation."""
    em = []
    real = rounds.exponential_mechanism

    def spy(scores, **kw):
        em.append(kw)
        return real(scores, **kw)

    monkeypatch.setattr(rounds, "exponential_mechanism", spy)
    release, ledger = pure_run(table(), relation=relation, epsilon=Fraction(2))
    assert all(e.delta == 0 and e.clip == 0 for e in ledger.events)
    assert Fraction(2) * (1 - Fraction(1, 10**6)) <= spent_epsilon(ledger) <= 2
    selections = [e for e in ledger.events if e.mechanism == "exponential"]
    assert [e.epsilon for e in selections] == [kw["epsilon"] for kw in em]
    factor = 1 if relation == "add-remove" else 2
    assert all(kw["sensitivity"] == factor * max(candidate_weights(WORKLOAD).values()) for kw in em)
    assert all(m.cost == m.scale * factor for m in release.measurements)
    covered = sum(m.selected_by == "cover" for m in release.measurements)  # §8.10
    assert len(release.measurements) == len(DOMAIN) + release.rounds + covered
    with pytest.raises(AttributeError):
        release.measurements[0].sigma2


def test_pure_runs_never_read_the_true_n(monkeypatch):
    def refuse(self):
        raise AssertionError("the true number of records was read")

    data = table()
    monkeypatch.setattr(AggregatedData, "n", property(refuse))
    release, _ = pure_run(data)
    assert len(release.records) == max(1, round(release.model_total))  # n from the measured marginals' sums


def test_the_estimator_weights_laplace_measurements_by_their_inverse_variance(monkeypatch):
    fitted = []
    real = estimators.fit

    def spy(domain, measurements, iters, warm_start=None, **kw):
        fitted.append(list(measurements))
        return real(domain, measurements, iters, warm_start=warm_start, **kw)

    groups = []
    real_weights = release_module.fit_weights

    def spy_weights(model, measured_groups, **kw):
        groups.append(list(measured_groups))
        return real_weights(model, measured_groups, **kw)

    monkeypatch.setattr(estimators, "fit", spy)
    monkeypatch.setattr(release_module, "fit_weights", spy_weights)
    release, _ = pure_run(table())
    held = [m for m in release.measurements if m.selected_by != "cover"]
    cover = release.measurements[len(held):]  # the covering step's, served by the reweighted sample (§8.10)
    assert cover and [y.sigma2 for y in fitted[-1]] == [laplace_variance(m.scale) for m in held]
    assert [g.sigma2 for g in groups[-1][-len(cover):]] == [laplace_variance(m.scale) for m in cover]


def test_pure_measure_refuses_the_oracle_path():
    with pytest.raises(InputError, match="marginal classes only"):
        measure(table(), WORKLOAD, budget=Fraction(1), relation="add-remove", ledger=Ledger(Fraction(1)),
                rng=PrivateRandom(0), options=OPTIONS, progress=False, pure=True, oracle=object())


# --------------------------------------------------------------------------
# through generate_synthetic: auto, the report, refusals
# --------------------------------------------------------------------------
def frame(n: int = 300) -> tuple[pd.DataFrame, dict]:
    """A small table and its public categories."""
    df = pd.DataFrame(table(n).expand(), columns=list(DOMAIN.names)).astype(str)
    return df, {c: [str(v) for v in range(s)] for c, s in zip(DOMAIN.names, DOMAIN.sizes)}


@pytest.mark.parametrize("delta", [None, 0, 0.0])
def test_pure_release_has_epsilon_only(delta):
    df, cats = frame()
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, delta=delta, categories=cats, random_state=0,
                                     progress=False, method="measure")
    rep = res.report.to_dict()
    assert rep["method"] == "measure" and rep["epsilon_spent"] <= 2.0
    assert "delta" not in json.dumps(rep).lower().replace("(no delta)", "")
    assert "rho" not in {k for m in rep["measurements"] for k in m} and rep["rho_budget"] is None
    assert {e["mechanism"] for e in rep["ledger"]} == {"laplace", "exponential"}
    assert sum(Fraction(e["epsilon"]) for e in rep["ledger"]) <= 2
    assert "delta" not in res.report.summary()


def test_auto_takes_pure_measurement_when_its_bound_is_smaller_and_says_why():
    df, cats = frame()
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, categories=cats, random_state=0, progress=False)
    reason = res.report.plan["method"]["reason"]
    assert res.report.method == "measure" and "Theorem 4.4" in reason and "/n" in reason
    from synthdp.methods.registry import METHODS, choose_method

    inputs = res.plan.method_plan.inputs
    measured, game = (METHODS[name].suitability(inputs).bound for name in ("measure", "game"))
    a_m, a_g, b_g = measured.a, game.a, game.b
    assert measured.b == 0 and 1 - a_g / a_m <= b_g and measured.at_most_wherever_informative(game)
    assert choose_method("auto", inputs)[0].name == "measure"
    k, cells = 10, sum(DOMAIN.cells(m) for m in itertools.combinations(range(5), 2))
    assert a_m == pytest.approx(k * (math.log(2 * cells) + 1) / 2.0 + 1)


def test_pure_dp_refuses_what_is_approximate():
    df, cats = frame()
    with pytest.raises(InputError, match="categories"):  # partition selection needs a delta
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, progress=False, method="measure")
    with pytest.raises(InputError, match="marginal classes only"):
        synthdp.generate_synthetic(df, "halfspaces", epsilon=1.0, categories=cats, progress=False, method="measure")
    with pytest.raises(InputError, match="delta"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, categories=cats, progress=False, method="game",
                                   query_player="rspm")
    with pytest.raises(InputError, match="delta"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, categories=cats, progress=False, method="game",
                                   query_player="prsma", relation="replace-one")


def test_a_unit_of_k_rows_multiplies_the_l1_sensitivity_by_k():
    """docs/privacy.md §10.6: with up to k rows per person a marginal moves by k (add/remove): each Laplace
    measurement is charged rate * k, and the run still spends at most its epsilon."""
    ledger = Ledger(Fraction(2), Fraction(0), contribution_bound=3)
    release = measure(table(), WORKLOAD, budget=Fraction(2), relation="add-remove", ledger=ledger,
                      rng=PrivateRandom(0), options=OPTIONS, progress=False, pure=True)
    assert all(m.cost == 3 * m.scale for m in release.measurements)
    laplace = [e.epsilon for e in ledger.events if e.mechanism == "laplace"]
    assert laplace == [m.cost for m in release.measurements] and spent_epsilon(ledger) <= 2


def test_pure_numeric_cells_are_learned_ahead_and_the_method_gets_the_rest():
    """A numeric column without public cells under pure DP: PrivTree (docs/privacy.md §10.3) spends pure epsilon
    ahead in the same ledger, no zCDP filter opens, and the measurements take what is left: epsilon in all."""
    gen = np.random.default_rng(0)
    df = pd.DataFrame({"age": gen.integers(18, 90, 2000).astype(float), "b": gen.choice(["p", "q"], 2000)})
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=2.0, categories={"b": ["p", "q"]},
                                     bounds={"age": (0, 100)}, random_state=0, progress=False, method="measure")
    rep = res.report.to_dict()
    mechanisms = [e["mechanism"] for e in rep["ledger"]]
    assert mechanisms[0] == "privtree" and set(mechanisms[1:]) == {"laplace", "exponential"}
    assert sum(Fraction(e["epsilon"]) for e in rep["ledger"]) <= 2 and "delta" not in json.dumps(rep).lower()
