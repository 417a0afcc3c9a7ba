"""Private tuning (docs/privacy.md §5): the private score, random stopping, accuracy-first.

The privacy tests compute output laws exactly (closed forms of the discrete
Laplace law, §1.6) on tiny instances built from the module's own pieces (its
integer error, noise rates, budget recipe and outcome order), and check the
ratio bounds of Theorems 5.1 and 5.3; each check is also shown to flag a
broken variant.
"""

from __future__ import annotations

import importlib
import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.accounting.ledger import Ledger
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.tuning import TargetNotReached, accuracy_first, tune
from synthdp.tuning import stopping
from synthdp.tuning.accuracy_first import plan_accuracy_first, statistic_sensitivity, accuracy_statistic
from synthdp.tuning.score import (EvalWorkload, Outcome, integer_error, outranks, private_score, score_noise_rate,
                                  score_sensitivity)
from synthdp.tuning.stopping import plan_stopping, random_stopping

RELATIONS = ("replace-one", "add-remove")


# --------------------------------------------------------------------------
# exact discrete Laplace helpers (docs/privacy.md §1.6)
# --------------------------------------------------------------------------
def dlap_pmf(rate: Fraction, k: int) -> float:
    t = math.exp(-float(rate))
    return (1 - t) / (1 + t) * t ** abs(k)


def dlap_at_least(rate: Fraction, k: int) -> float:
    """P[Z >= k] (F2 and symmetry)."""
    t = math.exp(-float(rate))
    return t**k / (1 + t) if k >= 1 else 1 - t ** (1 - k) / (1 + t)


# --------------------------------------------------------------------------
# tiny datasets
# --------------------------------------------------------------------------
TINY = Domain(("a", "b"), (2, 2))
TINY_WORKLOAD = EvalWorkload(((0,), (1,), (0, 1)), "tiny")
RECORDS = [(0, 0), (0, 1), (1, 0), (1, 1)]


def table(rows) -> AggregatedData:
    return AggregatedData.from_codes(TINY, np.array(rows, dtype=np.int64).reshape(-1, 2))


def datasets(max_n: int):
    for n in range(1, max_n + 1):
        yield from itertools.combinations_with_replacement(RECORDS, n)


def neighbours(rows, relation: str):
    rows = list(rows)
    if relation == "add-remove":
        for x in RECORDS:
            yield rows + [x]
        if len(rows) > 1:
            for i in range(len(rows)):
                yield rows[:i] + rows[i + 1:]
    else:
        for i, x in itertools.product(range(len(rows)), RECORDS):
            yield rows[:i] + [x] + rows[i + 1:]


SYNTHETIC = [table(rows) for rows in itertools.combinations_with_replacement(RECORDS, 2)]


# --------------------------------------------------------------------------
# §5.2 the private score
# --------------------------------------------------------------------------
@pytest.mark.parametrize("relation", RELATIONS)
def test_integer_error_sensitivity_is_n_out_brute_force(relation):
    """|Err(D, y) - Err(D', y)| <= N_out over all tiny neighbours, with equality somewhere (§5.2)."""
    worst = 0
    for rows in datasets(3):
        real = table(rows)
        for other in neighbours(rows, relation):
            for y in SYNTHETIC:
                gap = abs(integer_error(real, y, TINY_WORKLOAD) - integer_error(table(other), y, TINY_WORKLOAD))
                worst = max(worst, gap)
    assert worst == score_sensitivity(2)


def test_integer_error_is_scaled_max_cell_error():
    real, syn = table([(0, 0), (0, 1), (1, 1)]), table([(0, 0), (0, 0)])
    fractions = [abs(real.marginal(m) / real.n - syn.marginal(m) / syn.n).max() for m in TINY_WORKLOAD.marginals]
    assert integer_error(real, syn, TINY_WORKLOAD) == round(real.n * syn.n * max(fractions))


def test_score_law_ratio_is_e_eps_s_and_tight():
    """Pointwise ratio of the score law on neighbours with Err apart by N_out: at most e^eps_s, attained."""
    eps_s, n_out = Fraction(1, 3), 2
    rate = score_noise_rate(eps_s, n_out)
    err, err_other = 4, 4 + score_sensitivity(n_out)
    ratios = [dlap_pmf(rate, -s - err) / dlap_pmf(rate, -s - err_other) for s in range(-40, 40)]
    assert max(ratios) <= math.exp(eps_s) * (1 + 1e-12)
    assert max(ratios) >= math.exp(eps_s) * (1 - 1e-12)


def test_private_score_draws_the_stated_law():
    """Empirical law of private_score matches -(Err + DLap(eps_s / N_out))."""
    rng, eps_s, n_out, err = PrivateRandom(5), Fraction(1, 2), 1, 3
    draws = [private_score(err, eps_s, n_out, rng) for _ in range(4000)]
    rate = score_noise_rate(eps_s, n_out)
    for s in (-3, -4, -2, -6):
        assert abs(draws.count(s) / len(draws) - dlap_pmf(rate, -s - err)) < 0.03


# --------------------------------------------------------------------------
# §5.1 random stopping: exact output law on a tiny instance
# --------------------------------------------------------------------------
ONE = Domain(("a",), (2,))
ONE_WORKLOAD = EvalWorkload(((0,),), "one")


def one(rows) -> AggregatedData:
    return AggregatedData.from_codes(ONE, np.array(rows, dtype=np.int64).reshape(-1, 1))


D, D_PRIME = one([0, 0]), one([0, 1])  # replace-one neighbours
TABLES = [[0, 0], [0, 1], [1, 1]]  # the generator's possible outputs, N_out = 2
FRAMES = [pd.DataFrame({"a": t}) for t in TABLES]
#: Candidate j's favourite table on D and on D' (a randomized-response generator).
FAVOURITE = {0: {"D": 0, "D'": 1}, 1: {"D": 2, "D'": 0}}


def generator_law(j: int, which: str, eps_gen: Fraction) -> list[float]:
    """P_j(y): e^eps_gen on the favourite table, 1 elsewhere, normalised: eps_gen-DP across D, D'."""
    weights = [math.exp(eps_gen) if y == FAVOURITE[j][which] else 1.0 for y in range(len(TABLES))]
    return [w / sum(weights) for w in weights]


class TinyInstance:
    """Q_D of one iteration and the RS output law, from the module's integer error, noise rate and order."""

    def __init__(self, plan, rate: Fraction | None, window: int = 400):
        self.plan, self.rate, self.window = plan, rate, window
        self.errors = {w: [integer_error(d, one(t), ONE_WORKLOAD) for t in TABLES]
                       for w, d in (("D", D), ("D'", D_PRIME))}
        self.pairs = [(j, y) for j in range(2) for y in range(len(TABLES))]
        self.law = {(w, j): generator_law(j, w, plan.epsilon_generator) for w in ("D", "D'") for j in range(2)}
        # Among equal scores the order of (j, y) does not depend on the score: read it off ``outranks`` once.
        self.beaten = {pair: [other for other in self.pairs
                              if outranks(Outcome(0, pair[0], FRAMES[pair[1]]), Outcome(0, other[0], FRAMES[other[1]]))]
                       for pair in self.pairs}

    def score_pmf(self, which, y, s) -> float:
        err = self.errors[which][y]
        if self.rate is None:  # broken variant: no score noise
            return float(s == -err)
        return dlap_pmf(self.rate, -s - err)

    def score_below(self, which, y, s) -> float:
        err = self.errors[which][y]
        if self.rate is None:
            return float(-err < s)
        return dlap_at_least(self.rate, -s - err + 1)  # -(err + Z) < s  <=>  Z >= -s - err + 1

    def q(self, which, j, y, s) -> float:
        return 0.5 * self.law[which, j][y] * self.score_pmf(which, y, s)

    def below(self, which, j, y, s) -> float:
        """Q(outcomes strictly below (j, y, s)) in the order of ``outranks``."""
        total = sum(0.5 * self.law[which, jj][yy] * self.score_below(which, yy, s) for jj, yy in self.pairs)
        return total + sum(self.q(which, jj, yy, s) for jj, yy in self.beaten[j, y])

    def outcomes(self):
        for s in range(-self.window, self.window):
            for j, y in self.pairs:
                yield j, y, s

    def rs(self, which, j, y, s, gamma: float) -> float:
        p, pbar = self.q(which, j, y, s), self.below(which, j, y, s)
        return gamma * p / ((1 - (1 - gamma) * (pbar + p)) * (1 - (1 - gamma) * pbar))


def max_log_ratio(law_d, law_d_prime, keys) -> float:
    worst = -math.inf
    for key in keys:
        a, b = law_d(*key), law_d_prime(*key)
        if a == 0 and b == 0:
            continue
        worst = max(worst, math.inf if b == 0 or a == 0 else abs(math.log(a / b)))
    return worst


@pytest.fixture(scope="module")
def tiny():
    plan = plan_stopping(Fraction(3), Fraction(0), 2, Fraction(1, 2))
    return TinyInstance(plan, score_noise_rate(plan.epsilon_score, 2))


def test_tiny_instance_is_tight_per_iteration(tiny):
    """One iteration Q_D is eps_c-DP and the bound is attained (so a weaker score noise would show)."""
    keys = list(tiny.outcomes())
    worst = max_log_ratio(lambda *o: tiny.q("D", *o), lambda *o: tiny.q("D'", *o), keys)
    eps_c = float(tiny.plan.epsilon_candidate)
    assert worst <= eps_c + 1e-9
    assert worst >= eps_c - 1e-9


def test_random_stopping_exact_law_is_3_eps_c_dp(tiny):
    """Theorem 5.1 (a): RS(D)(o) <= e^{3 eps_c} RS(D')(o) for every outcome, via H(p_bar + p) - H(p_bar)."""
    gamma = float(tiny.plan.gamma)
    keys = list(tiny.outcomes())
    mass = sum(tiny.rs("D", *o, gamma) for o in keys)
    assert mass == pytest.approx(1, abs=1e-6)  # the window holds the law: the formula and the order agree
    worst = max_log_ratio(lambda *o: tiny.rs("D", *o, gamma), lambda *o: tiny.rs("D'", *o, gamma), keys)
    assert worst <= 3 * float(tiny.plan.epsilon_candidate) + 1e-9


def test_exact_check_flags_a_leaked_iteration_count(tiny):
    """Releasing (best, K) is not 3 eps_c-DP: the same exact check fails on it."""
    gamma = float(tiny.plan.gamma)

    def leaked(which, j, y, s, k):
        p, pbar = tiny.q(which, j, y, s), tiny.below(which, j, y, s)
        return gamma * (1 - gamma) ** (k - 1) * ((pbar + p) ** k - pbar**k)

    keys = [(j, y, s, k) for j, y, s in tiny.outcomes() if abs(s) < 30 for k in (1, 5, 20, 60)]
    worst = max_log_ratio(lambda *o: leaked("D", *o), lambda *o: leaked("D'", *o), keys)
    assert worst > 3 * float(tiny.plan.epsilon_candidate)


def test_exact_check_flags_a_missing_score_noise(tiny):
    broken = TinyInstance(tiny.plan, None, window=20)
    gamma = float(tiny.plan.gamma)
    keys = list(broken.outcomes())
    worst = max_log_ratio(lambda *o: broken.rs("D", *o, gamma), lambda *o: broken.rs("D'", *o, gamma), keys)
    assert worst > 3 * float(tiny.plan.epsilon_candidate)


def test_loop_draws_the_exact_law(tiny):
    """The implemented loop (with the module's score and order) draws the law H(p_bar + p) - H(p_bar)."""
    gamma = Fraction(1, 3)
    rng = PrivateRandom(11)
    gen = np.random.default_rng(12)

    def draw(j):
        y = int(gen.choice(len(TABLES), p=generator_law(j, "D", tiny.plan.epsilon_generator)))
        s = private_score(integer_error(D, one(TABLES[y]), ONE_WORKLOAD), tiny.plan.epsilon_score, 2, rng)
        return Outcome(s, j, FRAMES[y])

    runs = 3000
    counts: dict[tuple[int, int], int] = {}
    for _ in range(runs):
        best = random_stopping(draw, 2, gamma, None, rng)
        key = (best.index, TABLES.index(list(best.table["a"])))
        counts[key] = counts.get(key, 0) + 1
    exact = {pair: sum(tiny.rs("D", *pair, s, float(gamma)) for s in range(-tiny.window, tiny.window))
             for pair in tiny.pairs}
    tv = 0.5 * sum(abs(counts.get(pair, 0) / runs - exact[pair]) for pair in tiny.pairs)
    assert tv < 0.04


# --------------------------------------------------------------------------
# §5.1 the stopping rule reads released values only
# --------------------------------------------------------------------------
class Poisoned:
    """A table that fails on any use: the loop must not look inside candidates' tables."""

    def __getattr__(self, name):
        raise AssertionError(f"the stopping rule read the table ({name})")


def test_stopping_rule_uses_only_scores_and_the_coin(monkeypatch):
    coins = iter([0, 0, 0, 1, 0, 0])
    monkeypatch.setattr(stopping, "bernoulli", lambda num, den, rng: next(coins))
    scores = iter([-5, -2, -9, -3, -1])
    seen = []

    def draw(j):
        seen.append(j)
        return Outcome(next(scores), j, Poisoned())

    best = random_stopping(draw, 3, Fraction(1, 2), None, PrivateRandom(0))
    assert len(seen) == 4  # stopped exactly at the first 1 of the coin
    assert best.score == -2  # the best released score among the runs made


def test_the_stopping_coin_of_the_loop_is_bernoulli_gamma():
    """With one trivial candidate the number of runs is Geometric(gamma): P(T = t) = (1 - gamma)^(t-1) gamma.

    A chi-square test over T = 1..9 and T >= 10 (3000 loops, the real exact
    coin): a coin of gamma/2 doubles the mean and fails it with p ~ 1e-300.
    """
    gamma, loops = Fraction(1, 4), 3000
    rng = PrivateRandom(21)
    runs = []
    for _ in range(loops):
        made = []
        random_stopping(lambda j: made.append(j) or Outcome(0, j, FRAMES[0]), 1, gamma, None, rng)
        runs.append(len(made))
    g = float(gamma)
    law = [(1 - g) ** (t - 1) * g for t in range(1, 10)] + [(1 - g) ** 9]
    seen = [runs.count(t) for t in range(1, 10)] + [sum(t >= 10 for t in runs)]
    chi2 = sum((o - loops * p) ** 2 / (loops * p) for o, p in zip(seen, law))
    assert chi2 < 33.7, (chi2, seen)  # chi-square with 9 degrees of freedom: P(> 33.7) = 1e-4
    assert abs(np.mean(runs) - 1 / g) < 5 * math.sqrt((1 - g) / g**2 / loops)


def test_hard_stop_caps_the_runs(monkeypatch):
    monkeypatch.setattr(stopping, "bernoulli", lambda num, den, rng: 0)
    runs = []
    random_stopping(lambda j: runs.append(j) or Outcome(-len(runs), j, Poisoned()), 2, Fraction(1, 5), 7,
                    PrivateRandom(0))
    assert len(runs) == 7


def test_ties_break_by_index_then_serialisation():
    a, b = pd.DataFrame({"x": [1]}), pd.DataFrame({"x": [2]})
    assert outranks(Outcome(-1, 5, a), Outcome(-2, 0, a))
    assert outranks(Outcome(-1, 0, b), Outcome(-1, 1, a))
    assert outranks(Outcome(-1, 0, a), Outcome(-1, 0, b)) != outranks(Outcome(-1, 0, b), Outcome(-1, 0, a))


# --------------------------------------------------------------------------
# §5.1 recipe
# --------------------------------------------------------------------------
def test_recipe_pure_candidates():
    plan = plan_stopping(Fraction(1), Fraction(0), 6, Fraction(1, 10))
    assert plan.gamma == Fraction(1, 120) and plan.max_iterations is None
    assert (plan.epsilon_candidate, plan.epsilon_score, plan.epsilon_generator) == (Fraction(1, 3), Fraction(1, 30),
                                                                                    Fraction(3, 10))
    assert (plan.epsilon, plan.delta, plan.theorem) == (1, 0, "Theorem 5.1 (a)")


def test_recipe_approximate_candidates():
    eps, dlt = Fraction(1), Fraction(1, 10**6)
    plan = plan_stopping(eps, dlt, 6, Fraction(1, 10))
    gamma = Fraction(1, 120)
    assert plan.delta_candidate == gamma * dlt / 4
    assert plan.epsilon_candidate == (eps - Fraction(101, 100) * dlt) / 3
    assert plan.max_iterations == math.ceil(math.log(4 * (1 + math.e) / 1e-6) / (1 / 120))
    assert plan.epsilon <= eps and plan.delta <= dlt / 2
    hard = (1 + math.exp(float(plan.epsilon))) * (1 - 1 / 120) ** plan.max_iterations
    assert float(plan.delta) == pytest.approx(1e-6 / 4 + hard, rel=1e-9)
    assert float(plan.epsilon) >= 3 * float(plan.epsilon_candidate) - 2 * math.log1p(-float(dlt) / 2)


def test_recipe_pure_candidates_with_hard_stop():
    plan = plan_stopping(Fraction(1), Fraction(1, 10**6), 4, Fraction(1, 10), pure_candidates=True)
    assert plan.delta_candidate == 0 and plan.epsilon == 1
    assert plan.theorem == "Theorem 5.1 (a) and (c)" and 0 < plan.delta <= Fraction(1, 10**6)


# --------------------------------------------------------------------------
# §5.3 accuracy-first
# --------------------------------------------------------------------------
@pytest.mark.parametrize("relation", RELATIONS)
def test_test_statistic_sensitivity_by_relation_brute_force(relation):
    """max |g(D) - g(D')| over tiny neighbours is within Delta_g: b N (replace-one, attained), (a + b) N (add/remove).

    Under add/remove the a-term is needed (the max exceeds b N: ``a n N``
    moves with ``n``); the proved ``(a + b) N`` (docs/privacy.md §5.3) is an
    upper bound, not attained here (the max found is ``a N + b (N - 1)``).
    """
    plan = plan_accuracy_first(Fraction(2, 3), Fraction(10), Fraction(1), Fraction(0), 2, relation)
    worst = 0
    for rows in datasets(3):
        real = table(rows)
        for other in neighbours(rows, relation):
            for y in SYNTHETIC:
                g = accuracy_statistic(integer_error(real, y, TINY_WORKLOAD), real.n, plan)
                g_other = accuracy_statistic(integer_error(table(other), y, TINY_WORKLOAD), len(other), plan)
                worst = max(worst, abs(g - g_other))
    assert worst <= plan.sensitivity == statistic_sensitivity(2, 3, 2, relation)
    if relation == "replace-one":
        assert worst == plan.sensitivity == 3 * 2
    else:
        assert worst == 2 * 2 + 3 * (2 - 1) and plan.sensitivity == (2 + 3) * 2


def test_test_statistic_sign_is_the_target():
    plan = plan_accuracy_first(Fraction(1, 4), Fraction(10), Fraction(1), Fraction(0), 2, "replace-one")
    real = table([(0, 0), (0, 0), (1, 1), (1, 1)])
    for y in SYNTHETIC:
        err = integer_error(real, y, TINY_WORKLOAD)
        assert (accuracy_statistic(err, real.n, plan) >= 0) == (err / (real.n * 2) <= Fraction(1, 4))


def stop_law(g, rate0: Fraction, rate: Fraction, window: int = 1500) -> list[float]:
    """tau(k) of discrete AboveThreshold for a fixed sequence g (k = 1..len(g), then 'never')."""
    out = [0.0] * (len(g) + 1)
    for z0 in range(-window, window + 1):
        w, alive = dlap_pmf(rate0, z0), 1.0
        for k, gk in enumerate(g):
            stop = dlap_at_least(rate, z0 - gk)
            out[k] += w * alive * stop
            alive *= 1 - stop
        out[-1] += w * alive
    return out


def test_above_threshold_exact_law_is_eps_a_dp():
    """Step 1 of Theorem 5.3: tau_D(k) <= e^eps_A tau_D'(k) when each g_k moves by at most Delta_g.

    The adversarial pair (earlier levels up by Delta_g, the last one down)
    attains the bound, so a halved noise scale on either threshold or level
    noise breaks it.
    """
    plan = plan_accuracy_first(Fraction(1, 2), Fraction(60), Fraction(1), Fraction(0), 2, "add-remove")
    dg, eps_a = plan.sensitivity, float(plan.epsilon_test)
    worst = 0.0
    for prefix, last in ((4, -3), (4, -6), (0, -3), (-2, 1)):
        g = [prefix * dg] * 8 + [last * dg]
        for step in (dg, -dg):
            other = [x + step for x in g[:-1]] + [g[-1] - step]
            law = stop_law(g, plan.threshold_rate, plan.level_rate, window=300)
            law_other = stop_law(other, plan.threshold_rate, plan.level_rate, window=300)
            worst = max(worst, max(abs(math.log(a / b)) for a, b in zip(law, law_other)))
    assert worst <= eps_a * (1 + 1e-9)
    assert worst >= eps_a * (1 - 1e-6)


def test_plan_levels_and_costs():
    plan = plan_accuracy_first(Fraction(1, 20), Fraction(4), Fraction(1, 10), Fraction(0), 100, "add-remove")
    assert plan.epsilon_test == Fraction(2, 5)
    assert plan.max_level == math.floor(math.log2(1 + 0.9 * 4 / 0.1))  # 5
    assert plan.levels == tuple(Fraction(1, 10) * 2**k for k in range(5))
    assert plan.ex_post(2) == (Fraction(2, 5) + Fraction(3, 10), 0)
    assert plan.worst_case == (Fraction(2, 5) + Fraction(31, 10), 0)
    assert plan.worst_case[0] <= 4


# --------------------------------------------------------------------------
# end to end on the demo table (fast)
# --------------------------------------------------------------------------
CANDIDATES = [{"rounds": 2, "samples_per_round": 10}, {"rounds": 4, "samples_per_round": 20},
              {"rounds": 3, "samples_per_round": 15, "respond_to": "round"}]


def run_tune(demo, **kw):
    df, schema = demo
    args = dict(epsilon=1.0, eval_workload="marginals:2", target_failure=0.9, n_out=150, random_state=4,
                schema=schema)
    args.update(kw)
    return tune(df, "marginals:2", CANDIDATES, **args)


def test_tune_releases_only_the_chosen_candidate(demo):
    res = run_tune(demo)
    rep = res.report
    assert len(res.data) == 150 and rep.rows_written == 150
    assert rep.chosen_config == CANDIDATES[res.chosen_index] and rep.chosen_index == res.chosen_index
    assert (rep.epsilon_spent, rep.delta_spent, rep.theorem) == (1.0, 0.0, "Theorem 5.1 (a)")
    assert [e["mechanism"] for e in rep.ledger] == ["random stopping"]
    others = [c for i, c in enumerate(CANDIDATES) if i != res.chosen_index]
    assert all(str(c) not in rep.summary() and c not in rep.to_dict().values() for c in others)
    assert not {"iterations", "runs", "scores", "score"} & set(rep.to_dict())
    again = run_tune(demo)
    assert again.chosen_index == res.chosen_index and again.data.equals(res.data)  # seeded: reproducible


def test_tune_with_delta_uses_theorem_b_and_c(demo):
    res = run_tune(demo, delta=1e-6, relation="replace-one")
    assert res.report.theorem == "Theorem 5.1 (b) and (c)"
    assert res.report.epsilon_spent <= 1.0 and res.report.delta_spent <= 0.5e-6


def test_tune_refuses_before_running_when_the_ledger_cannot_pay(demo, monkeypatch):
    from synthdp.tuning.runs import Runner

    monkeypatch.setattr(Runner, "run", lambda *a, **k: pytest.fail("a generator ran"))
    with pytest.raises(PrivacyError, match="budget exceeded"):
        run_tune(demo, ledger=Ledger(Fraction(1, 2)))


def test_accuracy_first_stops_and_reports_both_costs(demo):
    df, schema = demo
    res = accuracy_first(df, "marginals:2", target_error=0.5, max_epsilon=2.0, epsilon_1=0.1,
                         eval_workload="marginals:2", n_out=100, random_state=3, schema=schema, rounds=3)
    rep = res.report
    assert res.level == rep.level == 1 and len(res.data) == 100
    assert rep.epsilon_ex_post == pytest.approx(0.2 + 0.1)
    assert rep.epsilon_worst_case == pytest.approx(0.2 + 0.1 * (2**4 - 1)) and rep.max_level == 4
    assert rep.ledger[0]["epsilon"] == str(Fraction(2, 10) + Fraction(15, 10))
    assert "worst-case" in rep.explanation and "depends on the data" in rep.explanation
    assert str(len(df)) not in str(rep.to_dict())  # n (private under add/remove) is not shown


def test_accuracy_first_draws_the_threshold_noise_once_for_all_levels(demo, monkeypatch):
    """AboveThreshold (docs/privacy.md §5.3): one threshold draw zeta_0, then one level draw per level.

    The statistics and noise are scripted: g = -1, -1, -1, 0 with level noise 0
    and zeta_0 = 0 passes first at level 4; a threshold redrawn at level 2
    (scripted -5) would stop there instead.
    """
    af = importlib.import_module("synthdp.tuning.accuracy_first")  # the package exports the function of that name
    df, schema = demo
    statistics = iter([-1, -1, -1, 0])
    monkeypatch.setattr(af, "accuracy_statistic", lambda error, n, plan: next(statistics))
    plan = plan_accuracy_first(Fraction(1, 2), Fraction(2), Fraction(1, 10), Fraction(0), 60, "add-remove")
    draws, thresholds = [], iter([0, -5, -5, -5])

    def noise(num, den, rng):
        rate = Fraction(num, den)
        draws.append(rate)
        return next(thresholds) if rate == plan.threshold_rate else 0

    monkeypatch.setattr(af, "discrete_laplace", noise)
    res = accuracy_first(df, "marginals:2", target_error=0.5, max_epsilon=2.0, epsilon_1=0.1,
                         eval_workload="marginals:2", n_out=60, random_state=3, schema=schema, rounds=2)
    assert plan.threshold_rate != plan.level_rate and plan.max_level == 4
    assert res.level == 4
    assert draws == [plan.threshold_rate] + [plan.level_rate] * 4


def test_accuracy_first_fails_cleanly(demo, tmp_path):
    df, schema = demo
    with pytest.raises(TargetNotReached, match="nothing was released"):
        accuracy_first(df, "marginals:2", target_error=1e-4, max_epsilon=0.4, epsilon_1=0.1,
                       eval_workload="marginals:2", n_out=50, random_state=3, schema=schema, rounds=2)


# --------------------------------------------------------------------------
# bad input: refused with the parameter named, before any private step
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kw, name", [
    ({"candidates": []}, "candidates"),
    ({"candidates": "rounds=3"}, "candidates"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"epsilon": float("nan")}, "epsilon"),
    ({"epsilon": float("inf")}, "epsilon"),
    ({"target_failure": 0.0}, "target_failure"),
    ({"target_failure": 1.5}, "target_failure"),
    ({"target_failure": float("nan")}, "target_failure"),
    ({"n_out": 0}, "n_out"),
    ({"delta": -1e-9}, "delta"),
    ({"candidates": [{"rounds": 2, "epsilon": 3}]}, "epsilon"),
    ({"candidates": [{"time_limit": 1.0}]}, "time_limit"),
    ({"strict": True}, "sets strict=True, which tuning does not apply yet"),  # was accepted and ignored
    ({"candidates": [{"strict": True}]}, "candidate #0 sets strict=True"),
    ({"candidates": [{"bogus": 1}]}, "bogus"),
    ({"candidates": [{"query_player": "rspm"}]}, "rspm"),
    ({"eval_workload": []}, "eval_workload"),
    ({"candidates": [{"rounds": 2}, {"method": "nope"}]}, "candidate #1 cannot run"),
    ({"candidates": [{"rounds": 2, "epsilon_per_round": 0.01}]}, "candidate #0 cannot run"),
    ({"candidates": [{"categories": {"region": ["North"]}}]}, "schema option"),
    ({"candidates": [{"cuts": {"age": [30, 50]}}]}, "schema option 'cuts'"),  # was silently ignored
    ({"schema": None, "dtypes": {"has_car": "bool"}}, "no public categories"),
    ({"eval_workload": "parities:2"}, "eval_workload"),
])
def test_tune_refuses_bad_input(demo, monkeypatch, kw, name):
    from synthdp.tuning.runs import Runner

    monkeypatch.setattr(Runner, "run", lambda *a, **k: pytest.fail("a generator ran"))
    df, schema = demo
    args = dict(candidates=CANDIDATES, epsilon=1.0, eval_workload="marginals:2", n_out=50, schema=schema)
    args.update(kw)
    with pytest.raises(InputError, match=name):
        tune(df, "marginals:2", args.pop("candidates"), **args)


@pytest.mark.parametrize("kw, name", [
    ({"target_error": -0.1}, "target_error"),
    ({"target_error": float("nan")}, "target_error"),
    ({"target_error": 0}, "target_error"),
    ({"max_epsilon": float("inf")}, "max_epsilon"),
    ({"max_epsilon": -2.0}, "max_epsilon"),
    ({"epsilon_1": 5.0}, "epsilon_1"),
    ({"epsilon_1": float("nan")}, "epsilon_1"),
])
def test_accuracy_first_refuses_bad_input(demo, monkeypatch, kw, name):
    from synthdp.tuning.runs import Runner

    monkeypatch.setattr(Runner, "run", lambda *a, **k: pytest.fail("a generator ran"))
    df, schema = demo
    args = dict(target_error=0.1, max_epsilon=2.0, epsilon_1=0.1, eval_workload="marginals:2", n_out=50,
                schema=schema)
    args.update(kw)
    with pytest.raises(InputError, match=name):
        accuracy_first(df, "marginals:2", **args)


# --------------------------------------------------------------------------
# the command line: synthdp generate --tune / --target-error
# --------------------------------------------------------------------------
@pytest.fixture
def demo_csv(demo, tmp_path):
    df, schema = demo
    path = tmp_path / "demo.csv"
    df.to_csv(path, index=False)
    schema_path = tmp_path / "schema.json"
    schema.save(schema_path)
    return path, schema_path


def test_cli_tune_writes_the_chosen_table_and_report(demo_csv, tmp_path, capsys):
    import json

    from synthdp.cli import main

    data, schema = demo_csv
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(CANDIDATES))
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code = main(["generate", str(data), "-o", str(out), "--epsilon", "1", "--queries", "marginals:2", "--tune",
                 str(grid), "--target-failure", "0.9", "--n-rows", "120", "--seed", "2", "--schema", str(schema),
                 "--report", str(report)])
    assert code == 0
    assert len(pd.read_csv(out)) == 120
    rep = json.loads(report.read_text())
    assert rep["chosen_config"] == CANDIDATES[rep["chosen_index"]] and rep["theorem"] == "Theorem 5.1 (a)"
    assert "random stopping over 3 configurations" in capsys.readouterr().out


def test_cli_accuracy_first_fails_cleanly_and_writes_nothing(demo_csv, tmp_path, capsys):
    from synthdp.cli import main

    data, schema = demo_csv
    out = tmp_path / "out.csv"
    code = main(["generate", str(data), "-o", str(out), "--epsilon", "0.1", "--queries", "marginals:2",
                 "--target-error", "0.0001", "--max-epsilon", "0.4", "--n-rows", "50", "--rounds", "2", "--seed", "1",
                 "--schema", str(schema)])
    assert code == 2 and not out.exists()
    assert "nothing was released" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--tune", "missing.json", "--n-rows", "50"], "cannot read --tune"),
    (["--target-error", "0.1", "--n-rows", "50"], "--max-epsilon"),
    (["--target-error", "0.1", "--max-epsilon", "2"], "--n-rows"),
])
def test_cli_tuning_options_refused_with_the_option_named(demo_csv, tmp_path, capsys, extra, message):
    from synthdp.cli import main

    data, schema = demo_csv
    out = tmp_path / "out.csv"
    code = main(["generate", str(data), "-o", str(out), "--epsilon", "0.5", "--schema", str(schema), *extra])
    assert code == 2 and not out.exists()
    assert message in capsys.readouterr().err
