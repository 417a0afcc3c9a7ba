"""Discrete RSPM (docs/privacy.md §2; the tests of §7.2-§7.4).

The privacy test computes, for a tiny complement-closed class with ``m = 3``,
the exact probabilities ``P[eta in A_q(D)]`` (``q`` is *a* minimiser) and
``P[eta in U_q(D')]`` (``q`` is the *unique* minimiser) for every pair of
neighbours, and asserts ``ln(P[A_q(D)] / P[U_q(D')]) <= epsilon + 1e-9``.  That
covers every tie-breaking rule at once, adversarial ones included (proof of
Theorem 2.3).  One noise coordinate is summed exactly through the discrete
Laplace CDF; the other two are enumerated on ``[-B, B]`` and the truncated
mass is added to the numerator, so the computed ratio is an upper bound.
"""

from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from adversarial_oracle import AdversarialOracle, CertificateStub, lexicographically_largest
from synthdp.oracles.base import Limits, QueryInstance
from synthdp.oracles.brute import BruteForceOracle
from synthdp.queries import ComplementClosed, Conjunctions
from synthdp.accounting.ledger import Ledger
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import (clip_probability, default_noise_cap,
                          difference_sensitivity, rspm, rspm_noise_rate, solver_integer_limit)

DOMAIN = Domain(("a",), (3,))
CLASS = ComplementClosed(Conjunctions.marginals(DOMAIN, 1))  # 6 queries; separator: 2 bit points + anchor
QUERIES = CLASS.enumerate()
SIG = CLASS.signature(QUERIES).astype(np.int64)
RECORDS = np.array([[0], [1], [2]])
#: A fixed data-independent synthetic multiset of size W (game objective, Lemma 2.0(b)).
SYNTHETIC = {1: np.array([0, 1, 0]), 2: np.array([1, 1, 0])}
PUBLIC_N = 2


def big_ledger() -> Ledger:
    """A fresh ledger with room for a few releases (Monte Carlo repetitions each get their own)."""
    return Ledger(Fraction(20), Fraction(1, 10**3))


# ----------------------------------------------------------------- exact probabilities
def dlap_cdf(k: np.ndarray, lam: float) -> np.ndarray:
    """``P[eta <= k]`` for DLap(lambda) at integer (or infinite) ``k`` (docs/privacy.md §1.6, F2)."""
    t = math.exp(-lam)
    k = np.asarray(k, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(k >= 0, 1 - t ** (k + 1) / (1 + t), t ** (-k) / (1 + t))


@functools.lru_cache(maxsize=8)
def noise_grid(lam: float, bound: int, dims: int) -> tuple[np.ndarray, np.ndarray, float]:
    """All noise vectors in ``[-B, B]^dims``, their DLap(lambda) probabilities, and the mass left out."""
    values = np.arange(-bound, bound + 1)
    pmf = math.tanh(lam / 2) * np.exp(-lam * np.abs(values))
    mesh = np.meshgrid(*([values] * dims), indexing="ij")
    grid = np.stack([axis.ravel() for axis in mesh], axis=1) if dims else np.zeros((1, 0), dtype=np.int64)
    weights = np.ones(len(grid))
    for axis in range(dims):
        weights = weights * pmf[grid[:, axis] + bound]
    return grid.astype(np.int64), weights, 1 - pmf.sum() ** dims


def constrained_probability(sig: np.ndarray, objective: np.ndarray, lam: float, bound: int, q: int,
                            strict: np.ndarray) -> tuple[float, float]:
    """``P[F(q) <= F(q') - strict[q'] for all q' != q]`` with ``F = objective + sig @ eta``, and the
    truncated mass (an upper bound on the error, which only lowers the returned value).

    ``strict = 0`` everywhere: ``q`` is a minimiser; ``1`` everywhere: the unique one.
    """
    k, m = sig.shape
    grid, weights, truncated = noise_grid(lam, bound, m - 1)
    lo = np.full(len(grid), -np.inf)
    hi = np.full(len(grid), np.inf)
    ok = np.ones(len(grid), dtype=bool)
    for other in range(k):
        if other == q:
            continue
        a = sig[q, 0] - sig[other, 0]
        d = objective[q] - objective[other] + grid @ (sig[q, 1:] - sig[other, 1:])  # F(q)-F(q') = d + a eta_0
        s = strict[other]
        if a == 1:
            hi = np.minimum(hi, -s - d)
        elif a == -1:
            lo = np.maximum(lo, s + d)
        else:
            ok &= d <= -s
    mass = np.clip(dlap_cdf(hi, lam) - dlap_cdf(lo - 1, lam), 0, None)
    return float(np.sum(weights * ok * mass)), truncated


def argmin_laws(sig, objective, lam, bound):
    """Per query: (P[a minimiser] + truncation, P[the unique minimiser])."""
    k = len(objective)
    upper, unique = np.zeros(k), np.zeros(k)
    for q in range(k):
        p, tail = constrained_probability(sig, objective, lam, bound, q, np.zeros(k, dtype=np.int64))
        upper[q] = p + tail
        unique[q], _ = constrained_probability(sig, objective, lam, bound, q, np.ones(k, dtype=np.int64))
    return upper, unique


def tie_rule_law(sig, objective, lam, bound, order):
    """Exact output law when ties go to the query ranked highest by ``order`` (a list of ranks)."""
    k = len(objective)
    return np.array([constrained_probability(sig, objective, lam, bound, q,
                                             (np.asarray(order) > order[q]).astype(np.int64))[0]
                     for q in range(k)])


def weights_for(counts: np.ndarray, objective: str, W: int) -> np.ndarray:
    """Record weights of the objectives of Lemma 2.0 on the records 0, 1, 2."""
    if objective == "data":
        return W * counts
    n = PUBLIC_N if objective == "game_public_n" else int(counts.sum())
    return -W * counts + n * SYNTHETIC[W]


def objective_vector(counts, objective, W) -> np.ndarray:
    return CLASS.answer(QUERIES, RECORDS, weights_for(np.asarray(counts), objective, W)).astype(np.int64)


def neighbour_pairs(relation: str):
    """Ordered neighbour pairs of count vectors on three records (size 2; or sizes 1-2 and +1)."""
    if relation == "replace-one":
        for counts in itertools.product(range(3), repeat=3):
            if sum(counts) != 2:
                continue
            for x, y in itertools.permutations(range(3), 2):
                if counts[x] > 0:
                    other = list(counts)
                    other[x] -= 1
                    other[y] += 1
                    yield np.array(counts), np.array(other)
    else:
        for counts in itertools.product(range(3), repeat=3):
            if 1 <= sum(counts) <= 2:
                for x in range(3):
                    bigger = np.array(counts)
                    bigger[x] += 1
                    yield np.array(counts), bigger
                    yield bigger, np.array(counts)


def worst_log_ratio(objective: str, relation: str, W: int, epsilon: Fraction, shift: int) -> float:
    """max over neighbours and queries of ln(P[A_q(D)] / P[U_q(D')]) with lambda = eps / (m * shift)."""
    m = SIG.shape[1]
    lam = float(epsilon) / (m * shift)
    bound = math.ceil(30 / lam)
    cache: dict[tuple, tuple] = {}

    def laws(counts):
        key = tuple(counts)
        if key not in cache:
            cache[key] = argmin_laws(SIG, objective_vector(counts, objective, W), lam, bound)
        return cache[key]

    worst = -math.inf
    for d, d_prime in neighbour_pairs(relation):
        upper, _ = laws(d)
        _, unique = laws(d_prime)
        worst = max(worst, float(np.max(np.log(upper / unique))))
    return worst


# ----------------------------------------------------------------- sensitivities and parameters
def test_difference_sensitivity_lemma_2_0():
    assert difference_sensitivity(8, "replace-one", "data") == 16
    assert difference_sensitivity(8, "add-remove", "data") == 8
    assert difference_sensitivity(8, "replace-one", "game") == 16
    assert difference_sensitivity(8, "add-remove", "game") == 16  # the caution of docs/privacy.md §2.1
    assert difference_sensitivity(8, "replace-one", "game_public_n") == 16
    assert difference_sensitivity(8, "add-remove", "game_public_n") == 8
    for bad in ((0, "replace-one", "data"), (1, "swap", "data"), (1, "replace-one", "other")):
        with pytest.raises(InputError):
            difference_sensitivity(*bad)


def test_noise_rate_cap_and_clip():
    lam = rspm_noise_rate(Fraction(1, 2), 5, 16)
    assert lam == Fraction(1, 2) / (5 * 17)
    cap = default_noise_cap(Fraction(1, 2), lam, 5)
    assert cap >= (math.log(10) + 70) / float(lam)  # the rule of Corollary 2.4
    assert cap - 1 < (math.log(10) + 70) / float(lam) + 5 * 17  # plus m c
    assert clip_probability(lam, 5, cap) <= math.exp(-70.5)
    for eps in (Fraction(1, 100), Fraction(5), Fraction(700)):  # (1 + e^eps) delta_clip <= 2 e^-70 for any eps
        lam = rspm_noise_rate(eps, 5, 16)
        assert float(lam) * (default_noise_cap(eps, lam, 5) + 1) >= math.log(10) + 70 + float(eps)
    from synthdp.oracles import get_oracle
    from synthdp.oracles.base import Oracle

    assert solver_integer_limit(BruteForceOracle()) == 2**62
    assert solver_integer_limit(get_oracle("exact")) == 2**53  # float64 tables
    assert Oracle.integer_limit == 2**50  # the floating-point MIP default


# ----------------------------------------------------------------- exact privacy (docs/privacy.md §7.2)
# Every objective and relation, W in {1, 2}, eps in {2, 3}; the costlier half (small lambda) is marked slow.
EXACT_CASES = [("data", "replace-one", 1, Fraction(3)), ("data", "add-remove", 1, Fraction(3)),
               ("game", "replace-one", 1, Fraction(3)), ("game", "add-remove", 1, Fraction(3)),
               ("game_public_n", "replace-one", 2, Fraction(3)), ("game_public_n", "add-remove", 1, Fraction(2))]
SLOW_CASES = [("data", "replace-one", 2, Fraction(2)), ("data", "add-remove", 2, Fraction(2)),
              ("game", "replace-one", 2, Fraction(2)), ("game", "add-remove", 2, Fraction(2)),
              ("game_public_n", "add-remove", 2, Fraction(3))]


@pytest.mark.parametrize("objective,relation,W,epsilon", EXACT_CASES)
def test_rspm_exact_privacy_any_tie_breaking(objective, relation, W, epsilon):
    """Theorem 2.3 by exact computation: ln(P[A_q(D)] / P[U_q(D')]) <= eps for all neighbours."""
    delta = difference_sensitivity(W, relation, objective)
    assert worst_log_ratio(objective, relation, W, epsilon, delta + 1) <= float(epsilon) + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("objective,relation,W,epsilon", SLOW_CASES)
def test_rspm_exact_privacy_remaining_grid(objective, relation, W, epsilon):
    delta = difference_sensitivity(W, relation, objective)
    assert worst_log_ratio(objective, relation, W, epsilon, delta + 1) <= float(epsilon) + 1e-9


def test_exact_check_catches_too_little_noise():
    """The same computation fails for c = Delta on this class (data term, add/remove, W = 1, eps = 3)."""
    assert worst_log_ratio("data", "add-remove", 1, Fraction(3), 1) > 3 + 0.5


def two_query_worst_ratio(neighbours: list[tuple[np.ndarray, np.ndarray]], lam: float) -> float:
    """m = 1, Q = {q0, q1 = 1 - q0} with signatures 0 and 1: max ln(P[A_q(D)] / P[U_q(D')])."""
    sig = np.array([[0], [1]])
    worst = -math.inf
    for objective, objective_prime in neighbours:
        upper, _ = argmin_laws(sig, objective, lam, 0)
        _, unique = argmin_laws(sig, objective_prime, lam, 0)
        worst = max(worst, float(np.max(np.log(upper / unique))))
    return worst


@pytest.mark.parametrize("W", [1, 2])
@pytest.mark.parametrize("epsilon", [2.0, 3.0])
def test_remark_2_5_shift_delta_fails_and_delta_plus_one_holds(W, epsilon):
    """Remark 2.5: L_D = W sum n_x q(x); a replace-one step moves a record from {q1 = 0} to {q1 = 1}.

    With c = Delta + 1 the worst ratio is exactly e^eps (tight); with c = Delta it is
    e^{eps (Delta + 1) / Delta}.
    """
    n, delta = 4, 2 * W
    neighbours = [(np.array([W * (n - ones), W * ones]), np.array([W * (n - ones - 1), W * (ones + 1)]))
                  for ones in range(n)]
    neighbours += [(b, a) for a, b in neighbours]
    assert two_query_worst_ratio(neighbours, epsilon / (delta + 1)) == pytest.approx(epsilon, abs=1e-9)
    assert two_query_worst_ratio(neighbours, epsilon / delta) == pytest.approx(epsilon * (delta + 1) / delta,
                                                                              abs=1e-9)


@pytest.mark.parametrize("W", [1, 2, 4])
def test_game_objective_needs_2W_under_add_remove(W):
    """docs/privacy.md §2.1's caution, Lemma 2.0(b): the game objective -W sum n_x q(x) + n(D) sum N_x q(x), with
    all of P on {q1 = 1}, gives L(q1) - L(q0) = 2 W n_0: adding a record to {q1 = 0} moves it by 2W.
    c = W + 1 (the data-term constant) leaks more than eps; c = 2W + 1 does not."""
    epsilon = 2.0

    def objective(n0: int, n1: int) -> np.ndarray:  # [L(q0), L(q1)]
        n = n0 + n1
        return np.array([-W * n0, -W * n1 + n * W])

    neighbours = [(objective(n0, n1), objective(n0 + 1, n1)) for n0 in range(3) for n1 in range(3)]
    neighbours += [(b, a) for a, b in neighbours]
    assert two_query_worst_ratio(neighbours, epsilon / (2 * W + 1)) <= epsilon + 1e-9
    assert two_query_worst_ratio(neighbours, epsilon / (W + 1)) > epsilon * (2 * W + 1) / (W + 1) - 1e-9


# ----------------------------------------------------------------- the implementation draws that law
def test_rspm_output_law_matches_exact_computation_with_adversarial_ties():
    """Monte Carlo of rspm() with an adversarial tie-breaker against the exact law of that rule."""
    counts, W, epsilon = np.array([1, 1, 0]), 1, Fraction(2)
    instance = QueryInstance.build(CLASS, RECORDS, weights_for(counts, "game", W))
    sensitivity = difference_sensitivity(W, "add-remove", "game")
    lam = rspm_noise_rate(epsilon, SIG.shape[1], sensitivity)
    ranks = np.argsort(np.argsort([repr(q) for q in QUERIES]))  # lexicographically largest wins ties
    law = tie_rule_law(SIG, objective_vector(counts, "game", W), float(lam), math.ceil(32 / float(lam)), ranks)
    assert law.sum() == pytest.approx(1, abs=1e-9)
    rng, oracle = PrivateRandom(2024), AdversarialOracle(choose=lexicographically_largest)
    draws = [rspm(instance, epsilon=epsilon, sensitivity=sensitivity, oracle=oracle, rng=rng, ledger=big_ledger(),
                  relation="add-remove").query for _ in range(3000)]
    observed = np.array([sum(d == q for d in draws) for q in QUERIES])
    keep = law * len(draws) > 5
    pvalue = stats.chisquare(observed[keep], law[keep] * observed[keep].sum() / law[keep].sum()).pvalue
    assert pvalue > 1e-3
    assert observed[~keep].sum() <= 15


def test_accuracy_theorem_2_7_holds_pathwise():
    """L(q_hat) - min L <= sum |eta_i| for every draw (Theorem 2.7)."""
    weights = np.array([5, -3, 2])
    instance = QueryInstance.build(CLASS, RECORDS, weights)
    values = CLASS.answer(QUERIES, RECORDS, weights)
    rng = PrivateRandom(4)
    for _ in range(200):
        result = rspm(instance, epsilon=Fraction(1), sensitivity=4, oracle=BruteForceOracle(), rng=rng,
                      ledger=big_ledger())
        chosen = int(CLASS.answer([result.query], RECORDS, weights)[0])
        assert chosen - values.min() <= result.noise_l1
        assert result.lam == Fraction(1, 3 * 5) and result.c == 5 and result.m == 3


# ----------------------------------------------------------------- modes, certificates, ledger (7.4)
BASE = Conjunctions.marginals(DOMAIN, 1)
BASE_INSTANCE = QueryInstance.build(BASE, RECORDS, np.array([4, 1, 2]))
CLOSED_INSTANCE = QueryInstance.build(CLASS, RECORDS, np.array([4, 1, 2]))


@pytest.mark.parametrize("defect,instance", [("suboptimal", CLOSED_INSTANCE), ("bound_above", CLOSED_INSTANCE),
                                             ("unproven", CLOSED_INSTANCE), ("outside_class", BASE_INSTANCE),
                                             ("suboptimal", BASE_INSTANCE)])
def test_mode_e_never_emits_an_uncertified_answer(defect, instance):
    """docs/privacy.md §7.4: Mode E raises PrivacyError (release abandoned, R4); Mode N returns None, conditional."""
    rng, ledger = PrivateRandom(1), big_ledger()
    with pytest.raises(PrivacyError, match="abandoned"):
        rspm(instance, epsilon=Fraction(1), sensitivity=2, oracle=CertificateStub(defect), rng=rng, ledger=ledger)
    assert len(ledger.events) == 1  # the spend stands: a FAIL is itself data-dependent
    result = rspm(instance, epsilon=Fraction(1), sensitivity=2, oracle=CertificateStub(defect), rng=rng,
                  ledger=ledger, mode="N", limits=Limits(time_limit=1.0))
    assert result.query is None and result.conditional and result.oracle.failed
    assert "conditional" in ledger.events[-1].note


def test_mode_e_refuses_limits_and_perturbed_input():
    rng, ledger = PrivateRandom(1), big_ledger()
    with pytest.raises(InputError, match="Mode E"):
        rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
             ledger=ledger, limits=Limits(time_limit=5))
    noisy = QueryInstance.build(CLASS, RECORDS, np.array([4, 1, 2]), separator_weights=[0, 1, 0])
    with pytest.raises(InputError, match="must be zero"):
        rspm(noisy, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng, ledger=ledger)
    with pytest.raises(InputError):
        rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
             ledger=ledger, mode="P")
    assert not ledger.events


def test_ledger_refusal_draws_nothing():
    rng = PrivateRandom(77)
    ledger = Ledger(Fraction(1, 2), Fraction(1, 10**9))
    with pytest.raises(PrivacyError, match="budget exceeded"):
        rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
             ledger=ledger)
    assert rng.randbelow(10**12) == PrivateRandom(77).randbelow(10**12)
    result = rspm(CLOSED_INSTANCE, epsilon=Fraction(1, 2), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
                  ledger=ledger)
    assert result.query is not None and ledger.events[0].clip == result.clip_probability
    assert result.delta <= 2 * math.exp(-70)


def test_noise_cap_clips_to_a_fixed_output():
    """Step 4 / Corollary 2.4: noise beyond the cap yields the fixed output None and costs its delta."""
    rng = PrivateRandom(3)
    outcomes = [rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
                     ledger=Ledger(Fraction(1), Fraction(1, 2)), noise_cap=35) for _ in range(100)]
    clipped = [r for r in outcomes if r.clipped]
    assert clipped and all(r.query is None and r.oracle is None for r in clipped)
    assert all(r.noise_max > 35 for r in clipped) and all(r.noise_max <= 35 for r in outcomes if not r.clipped)
    kappa = clip_probability(Fraction(1, 9), 3, 35)
    assert 0.01 < kappa < 0.1 and outcomes[0].delta >= (1 + math.e) * kappa


def test_integer_range_is_checked():
    """docs/privacy.md §2.7 R1: a cap that cannot fit is refused up front; an out-of-range instance is a FAIL."""
    rng, ledger = PrivateRandom(5), big_ledger()
    with pytest.raises(InputError, match="integer range"):
        rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng,
             ledger=ledger, noise_cap=2**61)
    huge = QueryInstance.build(CLASS, RECORDS, np.array([2**61, 2**61, 0]))
    with pytest.raises(PrivacyError, match="integer range"):
        rspm(huge, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng, ledger=ledger)
    result = rspm(huge, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(), rng=rng, ledger=ledger,
                  mode="N")
    assert result.query is None and result.oracle.backend_status == "integer range"
