"""Select-measure-estimate (docs/privacy.md §8; tests of §8.8 items 2-4)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger, exponential_rho, gaussian_rho
from synthdp.methods.measure import algorithm, rounds, state
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.noise_family import GaussianNoise
from synthdp.methods.measure.coarse import CoarseViews
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import candidate_weights, workload_marginals
from synthdp.methods.measure.rounds import _scores
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.queries.spec import parse_query_class

DOMAIN = Domain(("a", "b", "c", "d", "e"), (2, 3, 2, 4, 2))
WORKLOAD = [(0, 1), (1, 2), (2, 3), (0, 3), (3, 4), (1, 4)]
OPTIONS = MeasureOptions(rounds_per_attribute=2, estimator=EstimatorSettings(iters=20, final_iters=50,
                                                                             scoring_sample=2000))


def table(n: int = 400, seed: int = 0) -> AggregatedData:
    gen = np.random.default_rng(seed)
    a = gen.integers(0, 2, n)
    b = (a + gen.integers(0, 2, n)) % 3
    c = (b > 0).astype(int) ^ (gen.random(n) < 0.1)
    d = (2 * c + gen.integers(0, 2, n)) % 4
    e = (d % 2) ^ (gen.random(n) < 0.2)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([a, b, c, d, e]))


def run(data, relation="add-remove", seed=0, rho=Fraction(1, 2), **kw):
    ledger = ZcdpLedger(rho)
    release = measure(data, WORKLOAD, budget=rho, relation=relation, ledger=ledger, rng=PrivateRandom(seed),
                      options=kw.pop("options", OPTIONS), progress=False, **kw)
    return release, ledger


def test_spends_exactly_the_budget_and_records_every_step():
    release, ledger = run(table())
    assert ledger.spent <= ledger.rho_budget
    assert ledger.spent >= ledger.rho_budget * (1 - Fraction(1, 10**6))  # the last round takes what is left
    assert release.rho_spent == ledger.spent
    gauss = [e for e in ledger.events if e.mechanism == "gaussian"]
    assert [m.rho for m in release.measurements] == [e.rho for e in gauss]
    covered = [m for m in release.measurements if m.selected_by == "cover"]  # §8.10, after the rounds
    assert len(release.measurements) == len(DOMAIN) + release.rounds + len(covered) and covered
    assert release.measurements[-len(covered):] == covered
    assert release.records.shape[1] == len(DOMAIN)
    assert (release.records >= 0).all() and (release.records < np.array(DOMAIN.sizes)).all()


@pytest.mark.parametrize("relation,sens_sq,factor", [("add-remove", 1, 1), ("replace-one", 2, 2)])
def test_charges_match_the_noise_drawn_and_the_sensitivities(monkeypatch, relation, sens_sq, factor):
    """Every Gaussian charge is Delta2**2/(2 sigma2) for the sigma2 the sampler actually received, and the
    EM runs with the score sensitivity of §8.3 (max weight, doubled under replace-one)."""
    drawn, em_calls = [], []
    real_gauss, real_em = state.discrete_gaussian_array, rounds.exponential_mechanism

    def gauss(size, sigma2, rng):
        drawn.append(sigma2)
        return real_gauss(size, sigma2, rng)

    def em(scores, **kw):
        em_calls.append(kw)
        return real_em(scores, **kw)

    monkeypatch.setattr(state, "discrete_gaussian_array", gauss)
    monkeypatch.setattr(rounds, "exponential_mechanism", em)
    release, ledger = run(table(), relation=relation)
    gauss_events = [e for e in ledger.events if e.mechanism == "gaussian"]
    assert len(drawn) == len(gauss_events)
    for event, sigma2 in zip(gauss_events, drawn):
        assert event.rho == gaussian_rho(sens_sq, sigma2) == Fraction(sens_sq) / (2 * sigma2)
    max_w = max(candidate_weights(WORKLOAD).values())
    assert [c["sensitivity"] for c in em_calls] == [factor * max_w] * release.rounds
    em_events = [e for e in ledger.events if e.mechanism == "exponential"]
    assert [e.rho for e in em_events] == [exponential_rho(c["epsilon"]) for c in em_calls]


def test_measurement_noise_has_the_charged_scale(monkeypatch):
    """Statistical audit: the noise added to the measured counts has the variance of N_Z(0, sigma2) charged."""
    captured = []
    real = state.measure_one

    def spy(answers, attrs, sigma2, sensitivity_sq, **kw):
        m, y = real(answers, attrs, sigma2, sensitivity_sq, **kw)
        captured.append((y - answers, m.sigma2, m.rho, sensitivity_sq))
        return m, y

    monkeypatch.setattr(state, "measure_one", spy)
    run(table(), rho=Fraction(1, 5000))  # large noise: sigma2 in the hundreds
    noise = np.concatenate([z / math.sqrt(float(s2)) for z, s2, _, _ in captured])
    assert noise.size >= 13
    assert 0.5 < np.mean(noise**2) < 1.6  # ~1 for the right scale; ~0.25 if sigma were halved
    for _, s2, rho, sens_sq in captured:
        assert rho == Fraction(sens_sq) / (2 * s2)


def test_score_sensitivity_by_brute_force():
    """On neighbours, each candidate's score moves by at most the sensitivity the EM is given (§8.3)."""
    data = table()
    release, _ = run(data)
    from synthdp.methods.measure import estimators
    from synthdp.methods.measure.estimators import NoisyMarginal

    weights = candidate_weights(WORKLOAD)
    model = estimators.fit(DOMAIN, [NoisyMarginal((a,), data.marginal((a,)).reshape(-1) + 0.3, 4.0)
                                    for a in range(len(DOMAIN))], 10)
    sample = model.sample(500, np.random.default_rng(0))
    cands = list(weights)

    def scores(d):
        answers = {r: d.marginal(r).reshape(-1) for r in cands}
        return _scores(cands, weights, answers, model, sample, math.sqrt(2 / math.pi) * 2,
                       CoarseViews(DOMAIN, groups=OPTIONS.coarse_groups),
                       {r for r in cands if model.holder(r) is None})  # sigma2 = 4

    base = scores(data)
    extra = np.array([[1, 2, 0, 3, 1]])
    added = AggregatedData.from_codes(DOMAIN, np.vstack([data.expand(), extra]))
    codes = data.expand().copy()
    codes[0] = [1, 2, 0, 3, 1] if tuple(codes[0]) != (1, 2, 0, 3, 1) else [0, 0, 1, 0, 0]
    replaced = AggregatedData.from_codes(DOMAIN, codes)
    max_w = max(weights.values())
    moved_add = np.abs(scores(added) - base).max()
    moved_rep = np.abs(scores(replaced) - base).max()
    assert moved_add <= max_w and moved_rep <= 2 * max_w
    assert moved_add == max_w  # the bound is attained: a halved sensitivity would be wrong


@pytest.mark.parametrize("batch_cells", [1, 2**21])
def test_scores_by_their_definition(batch_cells, monkeypatch):
    """Each score is ``w_r (|r(D) - round(r(p))|_1 - round(noise_per_cell cells_r))`` with ``r(p)`` the model's
    counts (held candidates) or the sample's scaled to the model's total (unheld), whatever the batch of counts."""
    from synthdp.methods.measure import estimators
    from synthdp.methods.measure.estimators import NoisyMarginal

    monkeypatch.setattr(rounds, "SCORE_BATCH_CELLS", batch_cells)
    data = table()
    weights = candidate_weights(WORKLOAD)
    model = estimators.fit(DOMAIN, [NoisyMarginal((a,), data.marginal((a,)).reshape(-1) + 0.3, 4.0)
                                    for a in range(len(DOMAIN))], 10)
    sample = model.sample(500, np.random.default_rng(0))
    cands = list(weights)
    unheld = {r for r in cands if model.holder(r) is None}
    assert unheld and len(unheld) < len(cands)
    answers = {r: data.marginal(r).reshape(-1) for r in cands}
    got = _scores(cands, weights, answers, model, sample, 1.7, CoarseViews(DOMAIN, groups=OPTIONS.coarse_groups), unheld)
    for r, score in zip(cands, got):
        fitted = (np.bincount(DOMAIN.flat_index(sample, r), minlength=DOMAIN.cells(r)) * (model.total / len(sample))
                  if r in unheld else model.counts(r))
        l1 = np.abs(answers[r] - np.rint(fitted)).sum()
        assert score == weights[r] * (l1 - round(1.7 * answers[r].size)), r


def test_true_n_is_never_read(monkeypatch):
    def refuse(self):
        raise AssertionError("the true number of records was read")

    data = table()
    monkeypatch.setattr(AggregatedData, "n", property(refuse))
    release, _ = run(data)
    assert len(release.records) == max(1, round(release.model_total))  # rows from the model's own total


def test_add_remove_neighbours_release_the_same_unpaid_values():
    """D and D plus one record, same seed: everything chosen before the first measurement and every value
    that is not paid for (row count given, schedule of the first round, the charges) is identical."""
    data = table()
    plus = AggregatedData.from_codes(DOMAIN, np.vstack([data.expand(), [[1, 2, 0, 3, 1]]]))
    r1, l1 = run(data, n_rows=123)
    r2, l2 = run(plus, n_rows=123)
    assert len(r1.records) == len(r2.records) == 123
    d = len(DOMAIN)
    # initialisation: chosen before any measurement, from public inputs only
    assert [(m.attrs, m.sigma2, m.rho) for m in r1.measurements[:d]] == [(m.attrs, m.sigma2, m.rho)
                                                                         for m in r2.measurements[:d]]
    assert l1.events[: d + 1] == l2.events[: d + 1]  # and the first selection's charge
    assert r1.measurements[d].sigma2 == r2.measurements[d].sigma2


def test_ledger_refusal_releases_nothing():
    data = table()
    ledger = ZcdpLedger(Fraction(1, 2))
    ledger.charge("gaussian", Fraction(1, 4), "add-remove")
    with pytest.raises(InputError, match="exceeds what the ledger has left"):
        measure(data, WORKLOAD, budget=Fraction(1, 2), relation="add-remove", ledger=ledger,
                rng=PrivateRandom(0), options=OPTIONS, progress=False)
    assert len(ledger.events) == 1


def test_query_classes_it_serves_and_refuses():
    assert workload_marginals(parse_query_class("marginals:2", DOMAIN), DOMAIN) == \
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    assert len(workload_marginals(parse_query_class("marginals:<=2", DOMAIN), DOMAIN)) == 15
    assert len(workload_marginals(parse_query_class("conjunctions:3", DOMAIN), DOMAIN)) == 25
    assert workload_marginals([(1, 0), (3, 2)], DOMAIN) == [(0, 1), (2, 3)]
    assert workload_marginals("marginals:2", DOMAIN) == workload_marginals(parse_query_class("marginals:2", DOMAIN),
                                                                          DOMAIN)
    # classes whose queries read at most K attributes are served by the K-way marginals (subsets are candidates)
    pairs = workload_marginals("marginals:2", DOMAIN)
    for spec in ["parities:2", "disjunctions:2", "monotone:2"]:
        assert workload_marginals(parse_query_class(spec, DOMAIN), DOMAIN) == pairs
    with pytest.raises(InputError, match="not a marginal class"):
        workload_marginals(parse_query_class("halfspaces", DOMAIN), DOMAIN)
    wide = Domain(tuple(f"x{i}" for i in range(16)), (2,) * 16)
    for spec in ["conjunctions", "parities"]:
        with pytest.raises(InputError, match="served through the oracle path"):
            workload_marginals(spec, wide)


def test_a_marginal_class_of_width_k_is_determined_by_its_k_way_marginals():
    """Brute force: every parity/monotone/disjunction of width <= 2 is constant on each cell of some 2-way
    marginal of the workload (so measuring those marginals answers the class)."""
    universe = np.array(list(np.ndindex(*DOMAIN.sizes)))
    for spec in ["parities:2", "monotone:2", "disjunctions:2"]:
        qc = parse_query_class(spec, DOMAIN, closed=False)
        marginals = workload_marginals(qc, DOMAIN)
        values = qc.evaluate(qc.enumerate(), qc.features(universe))
        for row in values:
            assert any(all(len(set(row[DOMAIN.flat_index(universe, m) == c].tolist())) == 1
                           for c in range(DOMAIN.cells(m))) for m in marginals), spec


def test_bad_inputs_name_the_parameter():
    data = table()
    with pytest.raises(InputError, match="budget"):
        measure(data, WORKLOAD, budget=0.5, relation="add-remove", ledger=ZcdpLedger(Fraction(1)),
                rng=PrivateRandom(0), progress=False)
    with pytest.raises(InputError, match="n_rows"):
        run(data, n_rows=0)
    with pytest.raises(InputError, match="relation"):
        run(data, relation="swap")
    with pytest.raises(InputError, match="rounds_per_attribute"):
        MeasureOptions(rounds_per_attribute=0)
    with pytest.raises(InputError, match="selection_share"):
        MeasureOptions(selection_share=0.1)
    with pytest.raises(InputError, match="attributes must be distinct"):
        measure(data, [(0, 0)], budget=Fraction(1), relation="add-remove", ledger=ZcdpLedger(Fraction(1)),
                rng=PrivateRandom(0), progress=False)


def test_accuracy_on_a_small_table():
    """With a generous budget the release reproduces the workload's marginals closely."""
    data = table(2000)
    release, _ = run(data, rho=Fraction(5))
    syn = AggregatedData.from_codes(DOMAIN, release.records)
    for m in WORKLOAD:
        real = data.marginal(m) / data.counts.sum()
        fake = syn.marginal(m) / syn.counts.sum()
        assert np.abs(real - fake).max() < 0.05


def _paid(attrs, selected_by):
    from synthdp.methods.measure.measurements import Measurement

    names = tuple(DOMAIN.names[a] for a in attrs)
    return Measurement(attrs, names, Fraction(1), Fraction(1, 100), None if selected_by in ("initial", "cover")
                       else Fraction(1, 10), selected_by)


def test_the_release_warns_when_the_rounds_selected_no_joint_marginal():
    """Read off the released measurements: no pair selected by the rounds on a pair workload is a warning naming
    the columns with most cells; a selected pair, or a workload of 1-way marginals, is not."""
    from synthdp.methods.measure.method import joint_warning

    ones = [_paid((a,), "initial") for a in range(len(DOMAIN))]
    covered = ones + [_paid((1,), "exponential")] + [_paid(r, "cover") for r in WORKLOAD]
    (warning,) = joint_warning(covered, DOMAIN, WORKLOAD)
    assert warning.startswith("the rounds selected no marginal of two or more columns")
    assert "'d' (4 cells), 'b' (3 cells)" in warning and "A larger epsilon helps" in warning
    assert "--bins" not in warning  # 4 cells: fewer would not help
    wide = Domain(("a", "b", "c", "d", "e"), (2, 3, 2, 40, 2))
    assert "CLI --bins d=8 or --discretise equal-width" in joint_warning(covered, wide, WORKLOAD)[0]
    assert joint_warning(covered + [_paid((0, 1), "exponential")], DOMAIN, WORKLOAD) == []
    assert joint_warning(ones, DOMAIN, [(0,), (3,)]) == []


def test_a_run_on_cells_too_fine_for_its_budget_says_so():
    import pandas as pd
    import synthdp

    rng = np.random.default_rng(0)
    base = rng.normal(size=400)
    df = pd.DataFrame({f"x{i}": np.clip(50 + 15 * (0.6 * base + 0.8 * rng.normal(size=400)), 0, 100)
                       for i in range(3)})
    fine = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.5, delta=1e-6, bounds={c: (0.0, 100.0) for c in df},
                                      bins={c: 50 for c in df}, random_state=0, progress=False)
    assert any(w.startswith("the rounds selected no marginal") for w in fine.report.release.warnings)
    coarse = synthdp.generate_synthetic(df, "marginals:2", epsilon=8.0, delta=1e-6,
                                        bounds={c: (0.0, 100.0) for c in df}, bins={c: 3 for c in df}, random_state=0,
                                        progress=False)
    assert not any(w.startswith("the rounds selected no marginal") for w in coarse.report.release.warnings)


def test_no_marginal_over_released_columns_alone_is_measured():
    """``released_columns`` (a linked run's joined view, docs/privacy.md §12 step 2): neither their 1-way
    marginals, nor a candidate, nor a covered workload marginal over them alone; the budget is still spent."""
    options = MeasureOptions(rounds_per_attribute=2, estimator=OPTIONS.estimator, released_columns=("a", "d"))
    release, ledger = run(table(), options=options)
    measured = [set(m.attrs) for m in release.measurements]
    assert measured and all(not attrs <= {0, 3} for attrs in measured)
    assert any(attrs & {0, 3} for attrs in measured)
    assert ledger.spent >= ledger.rho_budget * (1 - Fraction(1, 10**6))
    start = algorithm._start(table(), WORKLOAD, GaussianNoise("add-remove", 1), options, budget=Fraction(1, 2),
                             ledger=ZcdpLedger(Fraction(1, 2)), relation="add-remove", rng=PrivateRandom(0),
                             oracle=None)
    candidates = [set(r) for r in start[0].weights]
    assert candidates and all(not attrs <= {0, 3} for attrs in candidates)
    with pytest.raises(InputError, match="released_columns names \\['z'\\]"):
        run(table(), options=MeasureOptions(released_columns=("z",)))
    with pytest.raises(InputError, match="released_columns must be a tuple"):
        MeasureOptions(released_columns=["a"])
