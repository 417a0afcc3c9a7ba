"""The covering step of select-measure-estimate (docs/privacy.md §8.10)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from synthdp.accounting.ledger import Ledger
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.errors import InputError
from synthdp.mechanisms.laplace import spent_epsilon
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import covering_step, rounds, state
from synthdp.methods.measure import release as release_module
from synthdp.methods.measure.coverage import (cover_shares, covering_pays, fill, maximal_marginals, precision_level,
                                      rounds_budget, water_level)
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.measurements import REWEIGHTED_SAMPLE
from synthdp.methods.measure.reweight import CAPPED_GROWTH
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.noise_family import GaussianNoise, LaplaceNoise
from tests.methods.measure.test_measure import DOMAIN, OPTIONS, WORKLOAD, table


def covering_run(data, *, relation="add-remove", budget=Fraction(1, 2), pure=False, seed=0, options=OPTIONS,
                 workload=WORKLOAD, contribution_bound=1):
    ledger = Ledger(budget, Fraction(0), contribution_bound=contribution_bound) if pure \
        else ZcdpLedger(budget, contribution_bound=contribution_bound)
    release = measure(data, workload, budget=budget, relation=relation, ledger=ledger, rng=PrivateRandom(seed),
                      options=options, progress=False, pure=pure)
    return release, ledger


def test_cover_shares_by_brute_force():
    """The covering shares are the water-filling of what is left: each maximal workload marginal holds the largest
    cost of a paid measurement containing it; those below one level L get L minus it, the others nothing, and the
    shares sum to exactly what is left (§8.10, steps 2-3)."""
    gen = np.random.default_rng(0)
    subsets = [s for k in (1, 2, 3) for s in itertools.combinations(range(5), k)]
    costs = [Fraction(1, 2**j) for j in range(6)]
    refilled = 0
    for _ in range(300):
        workload = [subsets[i] for i in gen.choice(len(subsets), gen.integers(1, 8))]
        paid = [(subsets[i], costs[gen.integers(len(costs))]) for i in gen.choice(len(subsets), gen.integers(0, 6))]
        left = Fraction(int(gen.integers(1, 9)), 16)
        maximal = [m for i, m in enumerate(workload) if m not in workload[:i]
                   and not any(set(m) < set(o) for o in workload)]
        assert maximal_marginals(workload) == maximal
        held = {m: max([c for a, c in paid if set(m) <= set(a)], default=0) for m in maximal}
        shares = cover_shares(workload, paid, left, precision_power=1)
        assert [m for m, _ in shares] == [m for m in maximal if m in dict(shares)]  # the workload's order
        assert sum(share for _, share in shares) == left and all(share > 0 for _, share in shares)
        levels = {held[m] + share for m, share in shares}
        assert len(levels) == 1
        level = held[shares[0][0]] + shares[0][1]
        assert all(held[m] >= level for m in maximal if m not in dict(shares))
        refilled += any(held[m] > 0 for m, _ in shares)
    assert refilled > 20  # the random cases do top up marginals a measurement already holds
    assert maximal_marginals([(1, 0), (0, 1), (0,)]) == [(0, 1)]  # sorted, once, the contained 1-way dropped
    assert rounds_budget(Fraction(1), Fraction(3, 4), True) == Fraction(1, 4)
    assert rounds_budget(Fraction(1), Fraction(3, 4), False) == Fraction(1)


def test_a_coarse_measurement_is_topped_up():
    """A workload marginal a round measured coarsely is measured again at what brings it to the others' level; one
    measured above that level costs nothing; a measurement that contains none holds nothing."""
    workload = [(0, 1), (1, 2)]

    def shares(paid):
        return cover_shares(workload, paid, Fraction(1), precision_power=GaussianNoise.precision_power)

    assert shares([]) == [((0, 1), Fraction(1, 2)), ((1, 2), Fraction(1, 2))]
    assert shares([((0, 1), Fraction(1, 4))]) == [((0, 1), Fraction(3, 8)), ((1, 2), Fraction(5, 8))]
    assert shares([((0, 1), Fraction(2))]) == [((1, 2), Fraction(1))]
    assert shares([((0, 1, 2), Fraction(1, 4))]) == [((0, 1), Fraction(1, 2)), ((1, 2), Fraction(1, 2))]
    assert shares([((0,), Fraction(1))]) == [((0, 1), Fraction(1, 2)), ((1, 2), Fraction(1, 2))]


def test_pure_dp_fills_by_precision_by_hand():
    """Under pure DP precision grows as the square of the cost (§8.10, q = 2): two holders of nothing get equal
    halves; holders of 0 and h get L and sqrt(L**2 - h**2) with L + sqrt(L**2 - h**2) = left, the solution
    L = (left**2 + h**2) / (2 left), the second rounded down, the first the exact remainder; one holding above
    the level gets nothing."""
    assert LaplaceNoise.precision_power == 2 and GaussianNoise.precision_power == 1
    assert fill([Fraction(0), Fraction(0)], Fraction(1), precision_power=2) == [Fraction(1, 2), Fraction(1, 2)]
    for h, left in ((Fraction(1, 4), Fraction(1)), (Fraction(3, 10), Fraction(1, 2)), (Fraction(1, 99), Fraction(3))):
        e1, e2 = fill([Fraction(0), h], left, precision_power=2)
        level = (left**2 + h**2) / (2 * left)
        assert e1 + e2 == left and e1 > 0 and e2 > 0
        assert math.isclose(e1, level, rel_tol=1e-9) and math.isclose(e2, math.sqrt(level**2 - h**2), rel_tol=1e-9)
        assert e2 > (left + h) / 2 - h  # more than the cost fill's top-up, which leaves h below the level
        assert e2**2 <= level**2 - h**2 < (e2 + Fraction(2, 10**12)) ** 2  # rounded down onto the 1e-12 grid
    assert fill([Fraction(0), Fraction(2)], Fraction(1), precision_power=2) == [Fraction(1), Fraction(0)]
    with pytest.raises(InputError, match="precision_power"):
        fill([Fraction(0)], Fraction(1), precision_power=0)


def test_pure_dp_fill_by_brute_force():
    """On random holdings the q = 2 fill brings every marginal it measures to one precision h**2 + e**2 (1e-9
    relative), leaves every other at or above it, and its shares are positive exact rationals summing to exactly
    what is left; with q = 1 the bisection finds the exact rational level of the closed form."""
    gen = np.random.default_rng(1)
    costs = [Fraction(0)] + [Fraction(int(k), 64) for k in range(1, 65)]
    topped = 0
    for _ in range(300):
        held = [costs[i] for i in gen.integers(0, len(costs), gen.integers(1, 9))]
        left = Fraction(int(gen.integers(1, 65)), 32)
        shares = fill(held, left, precision_power=2)
        assert all(isinstance(e, Fraction) and e >= 0 for e in shares) and sum(shares) == left
        measured = [(h, e) for h, e in zip(held, shares) if e > 0]
        precisions = [float(h) ** 2 + float(e) ** 2 for h, e in measured]
        assert max(precisions) - min(precisions) <= 1e-9 * max(precisions)
        assert all(float(h) ** 2 >= min(precisions) * (1 - 1e-9) for h, e in zip(held, shares) if e == 0)
        topped += any(h > 0 for h, _ in measured)
        assert math.isclose(precision_level(held, left, 1), water_level(held, left), rel_tol=1e-12)
    assert topped > 50
    workload = [(0, 1), (1, 2), (0, 2)]
    assert cover_shares(workload, [((0, 1), Fraction(5))], Fraction(1), precision_power=2) == [
        ((1, 2), Fraction(1, 2)), ((0, 2), Fraction(1, 2))]  # the held one is above the level


@pytest.mark.parametrize("relation,sens_sq", [("add-remove", 1), ("replace-one", 2)])
def test_covering_measurements_and_their_charges(monkeypatch, relation, sens_sq):
    """The rounds spend at most (1 - c) rho; then each workload marginal below the water level is measured once at
    the scale of its share of what is left (cover_shares), each charged Delta2**2 / (2 sigma2) for the sigma2 its
    sampler received, served by the reweighted sample; the run spends all of rho and no more."""
    drawn = []
    real = state.discrete_gaussian_array

    def spy(size, sigma2, rng):
        drawn.append(sigma2)
        return real(size, sigma2, rng)

    monkeypatch.setattr(state, "discrete_gaussian_array", spy)
    budget = Fraction(1, 2)
    release, ledger = covering_run(table(), relation=relation, budget=budget)
    paid = release.measurements
    rounds = [m for m in paid if m.selected_by != "cover"]
    cover = paid[len(rounds):]
    assert all(m.selected_by != "cover" for m in rounds) and cover
    rounds_spent = sum(m.rho + m.selection_rho for m in rounds)
    assert rounds_spent <= budget * (1 - OPTIONS.cover_share)
    assert rounds_spent >= budget * (1 - OPTIONS.cover_share) * (1 - Fraction(1, 10**6))
    shares = cover_shares(WORKLOAD, [(m.attrs, m.cost) for m in rounds], budget - rounds_spent, precision_power=1)
    assert [m.attrs for m in cover] == [r for r, _ in shares]
    scales = [GaussianNoise(relation).scale_for(share) for _, share in shares]
    assert [m.sigma2 for m in cover] == scales
    assert drawn[-len(cover):] == scales  # the sampler got the scale charged
    events = [e for e in ledger.events if e.mechanism == "gaussian"][-len(cover):]
    assert [e.rho for e in events] == [Fraction(sens_sq) / (2 * s) for s in scales] == [m.rho for m in cover]
    assert all(m.estimator == REWEIGHTED_SAMPLE and m.selection_epsilon is None for m in cover)
    assert budget * (1 - Fraction(1, 10**6)) <= ledger.spent <= budget and release.rho_spent == ledger.spent


def test_covering_under_units_of_several_rows():
    """A privacy unit of k rows: each covering measurement is charged k**2 / (2 sigma2) (§10.6)."""
    release, ledger = covering_run(table(), budget=Fraction(4), contribution_bound=3)
    cover = [m for m in release.measurements if m.selected_by == "cover"]
    assert cover and all(m.rho == Fraction(9) / (2 * m.sigma2) for m in cover)
    assert ledger.spent <= Fraction(4)


def test_covering_under_pure_dp():
    """Under pure DP the covering measurements are discrete Laplace at the rate for its share of what is left,
    poured by precision (cover_shares with q = 2), each charged a * Delta_1 (§10.2 (P2)) at most its share; the
    pure ledger ends at most at epsilon."""
    epsilon = Fraction(1)
    for relation, delta1 in (("add-remove", 1), ("replace-one", 2)):
        release, ledger = covering_run(table(), relation=relation, budget=epsilon, pure=True)
        paid = release.measurements
        cover = [m for m in paid if m.selected_by == "cover"]
        rounds_spent = sum(m.cost + (m.selection_epsilon or 0) for m in paid if m.selected_by != "cover")
        assert cover and rounds_spent <= epsilon * (1 - OPTIONS.cover_share)
        shares = cover_shares(WORKLOAD, [(m.attrs, m.cost) for m in paid if m.selected_by != "cover"],
                              epsilon - rounds_spent, precision_power=2)
        rates = [LaplaceNoise(relation).scale_for(share) for _, share in shares]
        assert [m.attrs for m in cover] == [r for r, _ in shares] and [m.scale for m in cover] == rates
        assert all(m.noise == "laplace" and m.cost == m.scale * delta1 for m in cover)
        assert all(m.cost <= share for m, (_, share) in zip(cover, shares))
        assert [e.epsilon for e in ledger.events[-len(cover):]] == [m.cost for m in cover]
        assert epsilon * (1 - Fraction(1, 10**6)) <= spent_epsilon(ledger) <= epsilon


def test_no_covering_step_when_switched_off_or_on_the_oracle_path():
    """cover_share 0 runs the rounds on the whole budget, with no covering measurement."""
    release, ledger = covering_run(table(), options=replace(OPTIONS, cover_share=Fraction(0)))
    assert not any(m.selected_by == "cover" for m in release.measurements)
    assert ledger.spent >= Fraction(1, 2) * (1 - Fraction(1, 10**6))


def test_covering_pays_at_the_exact_ratio_under_heavy_tails_only():
    """§8.10 step 0: covers iff ``c T >= k (1 - c) M`` under Laplace noise; Gaussian noise always covers."""
    c = Fraction(3, 4)
    assert covering_pays(6, 10, cover_share=c, min_ratio=Fraction(5), light_tailed=False)  # 7.5 = 5 * 1/4 * 6
    assert not covering_pays(6, 10, cover_share=c, min_ratio=Fraction(5) + Fraction(1, 10**9), light_tailed=False)
    assert not covering_pays(7, 10, cover_share=c, min_ratio=Fraction(5), light_tailed=False)
    assert covering_pays(10**6, 10, cover_share=c, min_ratio=Fraction(5), light_tailed=True)
    # the defaults on the tuning sets' shapes (docs/privacy.md §8.10): NLTCS all 3-way (560 marginals, d = 16)
    # does not pay, BR2000 with 64 random 3-way marginals (d = 14) does
    default = MeasureOptions()
    pays = {m: covering_pays(m, default.rounds_per_attribute * d, cover_share=default.cover_share,
                             min_ratio=default.cover_min_ratio, light_tailed=False) for m, d in ((560, 16), (64, 14))}
    assert pays == {560: False, 64: True}


@pytest.mark.parametrize("min_ratio, covers", [(Fraction(5), True), (Fraction(6), False)])
def test_pure_dp_runs_the_covering_step_only_when_it_pays(min_ratio, covers):
    """Six maximal marginals, 10 planned rounds, c = 3/4: the covering step pays up to k = 5.  When it does not,
    the rounds run on the whole epsilon (the initial 1-way marginals at its per-round rate), a first round selects
    with ``uncovered_pure_selection_share`` of it, and they spend it all; zCDP covers whatever ``k``."""
    options = replace(OPTIONS, cover_min_ratio=min_ratio)
    release, ledger = covering_run(table(), budget=Fraction(1), pure=True, options=options)
    assert any(m.selected_by == "cover" for m in release.measurements) == covers
    rounds_budget_ = Fraction(1) * (1 - OPTIONS.cover_share if covers else 1)
    share = OPTIONS.selection_share if covers else OPTIONS.uncovered_pure_selection_share
    epsilon, rate = LaplaceNoise("add-remove").split(rounds_budget_ / (OPTIONS.rounds_per_attribute * len(DOMAIN)),
                                                     share)
    first, chosen = release.measurements[0], release.measurements[len(DOMAIN)]
    assert first.selected_by == "initial" and first.scale == rate
    assert chosen.selected_by == "exponential" and (chosen.selection_epsilon, chosen.scale) == (epsilon, rate)
    assert Fraction(1) * (1 - Fraction(1, 10**6)) <= spent_epsilon(ledger) <= Fraction(1)
    zcdp, _ = covering_run(table(), options=options)
    assert any(m.selected_by == "cover" for m in zcdp.measurements)


def test_the_plan_says_whether_pure_dp_covers():
    from synthdp.methods.measure.method import covering_note

    assert "the rest measures once each workload marginal" in covering_note(DOMAIN, WORKLOAD, OPTIONS, pure=True)
    skip = replace(OPTIONS, cover_min_ratio=Fraction(6))
    assert "no covering step: under pure DP each of the 6 workload marginals" in \
        covering_note(DOMAIN, WORKLOAD, skip, pure=True)
    assert "1/4 of each round selecting" in covering_note(DOMAIN, WORKLOAD, skip, pure=True)
    assert "the rest measures once" in covering_note(DOMAIN, WORKLOAD, skip, pure=False)
    assert covering_note(DOMAIN, WORKLOAD, replace(OPTIONS, cover_share=Fraction(0)), pure=True) == ""


def test_covering_noise_has_the_charged_scale(monkeypatch):
    """Statistical audit of the covering measurements alone: their noise has the variance of N_Z(0, sigma2) (a
    quarter of it if the noise were drawn at half the standard deviation charged)."""
    captured = []
    real = state.measure_one

    def spy(answers, attrs, sigma2, sensitivity_sq, **kw):
        m, y = real(answers, attrs, sigma2, sensitivity_sq, **kw)
        if kw.get("selected_by") == "cover":
            captured.append((y - answers) / math.sqrt(float(sigma2)))
        return m, y

    monkeypatch.setattr(state, "measure_one", spy)
    for seed in range(3):
        covering_run(table(), budget=Fraction(1, 5000), seed=seed)  # sigma2 in the thousands
    noise = np.concatenate(captured)
    assert noise.size >= 40
    assert 0.6 < np.mean(noise**2) < 1.5


#: The final fit's two settings told apart: 7 deep (uncapped) steps or 5 capped ones.
FIT_OPTIONS = replace(OPTIONS, cover_deep_iters=7, cover_iters=5)


def spy_fit(monkeypatch) -> dict:
    """The keywords the last reweighted fit of a run is given (filled as the run goes)."""
    seen = {}
    real = release_module.fit_weights

    def spy(model, groups, **kw):
        seen.update(kw)
        return real(model, groups, **kw)

    monkeypatch.setattr(release_module, "fit_weights", spy)
    return seen


def final_fit_run(monkeypatch, **run):
    """A covering run with :data:`FIT_OPTIONS`; returns the release, the covering measurements' median noise
    standard deviation over the released total, and the (iters, growth) the final fit was given."""
    seen = spy_fit(monkeypatch)
    release, _ = covering_run(table(), options=FIT_OPTIONS, **run)
    noise = LaplaceNoise("add-remove", 1) if run.get("pure") else GaussianNoise("add-remove", 1)
    sd = [math.sqrt(noise.variance(m.scale)) for m in release.measurements if m.selected_by == "cover"]
    return release, float(np.median(sd)) / release.model_total, (seen["iters"], seen["growth"])


@pytest.mark.parametrize("budget, deep", [(Fraction(1, 2), True), (Fraction(1, 20), True), (Fraction(1, 100), False),
                                         (Fraction(1, 5000), False)])  # median sd / total: 0.007, 0.024, 0.050, 0.55
def test_final_fit_is_deep_only_when_the_covering_noise_is_small(monkeypatch, budget, deep):
    """The covering step's final fit: uncapped steps (``cover_deep_iters``) when the covering measurements' median
    noise standard deviation is at most ``cover_deep_below`` of the model's released total, else the capped rule
    (``cover_iters``); computed from the released scales and total, never from the data."""
    _, spread, fit = final_fit_run(monkeypatch, budget=budget)
    assert (spread <= FIT_OPTIONS.cover_deep_below) == deep
    assert fit == ((7, math.inf) if deep else (5, CAPPED_GROWTH))


def test_final_fit_under_pure_dp_keeps_the_capped_steps(monkeypatch):
    """Under pure DP (discrete Laplace, heavy tails) the final fit keeps the capped steps however small the noise."""
    _, spread, fit = final_fit_run(monkeypatch, budget=Fraction(4), pure=True)
    assert spread < FIT_OPTIONS.cover_deep_below  # small enough for the deep fit under zCDP
    assert fit == (5, CAPPED_GROWTH)


def test_cover_share_is_checked():
    for bad in (Fraction(1), Fraction(-1, 2), 0.5, 1):
        with pytest.raises(InputError, match="cover_share"):
            MeasureOptions(cover_share=bad)
    for bad in (-0.1, math.inf, "0.04", True):
        with pytest.raises(InputError, match="cover_deep_below"):
            MeasureOptions(cover_deep_below=bad)
    for bad in (Fraction(-1), 1.25, None):
        with pytest.raises(InputError, match="cover_min_ratio"):
            MeasureOptions(cover_min_ratio=bad)
    for bad in (Fraction(0), Fraction(1), 0.25):
        with pytest.raises(InputError, match="uncovered_pure_selection_share"):
            MeasureOptions(uncovered_pure_selection_share=bad)


def test_footprint_counts_the_covering_reweighting():
    """The plan's memory estimate holds the covering step's design (an entry per measurement and support record,
    twice) when the step runs, and nothing for it when it does not (docs/privacy.md §8.10, step 4)."""
    from synthdp.methods.measure.footprint import BYTES_PER_DESIGN_ENTRY, SAMPLE_COPIES, footprint
    from synthdp.methods.measure.measurements import candidate_weights

    cands = list(candidate_weights(WORKLOAD))
    on = footprint(DOMAIN, cands, OPTIONS, n_rows=None, oracle=False)
    off = footprint(DOMAIN, cands, replace(OPTIONS, cover_share=Fraction(0)), n_rows=None, oracle=False)
    # pure DP counts the covering step only where it runs (docs/privacy.md §8.10 step 0)
    skip = replace(OPTIONS, cover_min_ratio=Fraction(6))
    assert footprint(DOMAIN, cands, skip, n_rows=None, oracle=False, pure=True).memory_bytes == off.memory_bytes
    assert footprint(DOMAIN, cands, skip, n_rows=None, oracle=False).memory_bytes == on.memory_bytes
    support = SAMPLE_COPIES * OPTIONS.cover_support * 8 * len(DOMAIN)
    design = BYTES_PER_DESIGN_ENTRY * OPTIONS.cover_support * (len(cands) + on.rounds + len(DOMAIN))
    assert on.memory_bytes - off.memory_bytes == support + design


def test_sample_counts_in_batches_give_the_same_release_and_no_true_count_outlives_the_measurements(monkeypatch):
    """On a table whose rounds and covering step read marginals off the model's sample (no clique holds them),
    counting them one set at a time gives the same release and table as the default batches; and once the last
    measurement is taken no true count is held: the final fit and the reweighted sample read released values."""
    import synthdp
    from synthdp.bench.numeric import load_table

    table = load_table("flights", 4000)
    columns = ["date", "hour", "distance", "dep_delay", "arr_delay", "carrier", "origin", "dest", "aircraft", "gate"]
    data, categories = table.data[columns], {c: v for c, v in table.categories.items() if c in columns}
    bounds = {c: b for c, b in table.bounds.items() if c in columns}
    options = dict(epsilon=1.0, delta=1e-9, bounds=bounds, categories=categories, clip=True,
                   nullable=list(categories), datetimes=table.datetimes, random_state=0, progress=False)
    counted, held = [], []
    real_batches, real_refit = rounds.marginal_counts_in_batches, state.refit
    for module in (rounds, covering_step):  # the rounds' scores, the covering step's readings
        monkeypatch.setattr(module, "marginal_counts_in_batches",
                            lambda domain, sample, sets, **k: (counted.append(len(sets)),
                                                               real_batches(domain, sample, sets, **k))[1])
    for module in (rounds, release_module):  # every fit: the rounds' and the final one
        monkeypatch.setattr(module, "refit",
                            lambda run, *a, **k: (held.append(len(run.answers)), real_refit(run, *a, **k))[1])
    whole = synthdp.generate_synthetic(data, "marginals:3", **options)
    assert sum(counted) > 20 and held[-1] == 0 and max(held) > 0
    for module in (rounds, covering_step):
        monkeypatch.setattr(module, "SCORE_BATCH_CELLS", 1)
    one_by_one = synthdp.generate_synthetic(data, "marginals:3", **options)
    assert one_by_one.report.release.to_dict() == whole.report.release.to_dict()
    assert one_by_one.data.equals(whole.data)


@pytest.mark.parametrize("groups, iters", [(12, 3), (25, 3), (50, 7)])
def test_the_deep_fit_is_shorter_when_numeric_columns_are_read_through_groups(monkeypatch, groups, iters):
    """Two 48-cell numeric columns read through 12 groups (a full view each) or, with 25, through 12 (a covering
    view) take ``cover_numeric_iters`` deep steps; with 50 groups no column has a view (a covering view of 25 needs
    50 cells) and the fit takes ``cover_deep_iters`` (a choice of public inputs)."""
    from tests.methods.measure.test_copula import triple_table

    seen = spy_fit(monkeypatch)
    options = replace(OPTIONS, coarse_groups=groups, cover_deep_iters=7, cover_numeric_iters=3)
    measure(triple_table(0.9, n=5_000), [(0, 1, 2)], budget=Fraction(1, 2), relation="add-remove",
            ledger=ZcdpLedger(Fraction(1, 2)), rng=PrivateRandom(0), options=options, progress=False)
    assert (seen["iters"], seen["growth"]) == (iters, math.inf)
