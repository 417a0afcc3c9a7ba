"""Exponential mechanism and report-noisy-max over an explicit workload (docs/privacy.md §4.6)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.mechanisms import selection
from synthdp.accounting.ledger import Ledger
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.selection import exponential_mechanism, report_noisy_max


def ledger() -> Ledger:
    return Ledger(Fraction(10), Fraction(0))


def em_law(scores: np.ndarray, epsilon: float, sensitivity: int) -> np.ndarray:
    """``P[j] = exp(eps U_j / (2N)) / sum`` (Theorem 4.5)."""
    logits = epsilon * (scores - scores.max()) / (2 * sensitivity)
    weights = np.exp(logits)
    return weights / weights.sum()


def rnm_laws(scores: np.ndarray, epsilon: float, sensitivity: int, bound: int):
    """Exact ``P[j in argmax(U + Z)]`` (+ truncated mass), ``P[j unique argmax]`` and ``P[j = first argmax]``."""
    lam = epsilon / (2 * sensitivity + 1)
    values = np.arange(-bound, bound + 1)
    pmf = math.tanh(lam / 2) * np.exp(-lam * np.abs(values))
    k = len(scores)
    grid = np.array(list(itertools.product(range(len(values)), repeat=k)))
    weight = np.prod(pmf[grid], axis=1)
    noisy = scores[None, :] + values[grid]
    top = noisy.max(axis=1)
    is_max = noisy == top[:, None]
    unique = is_max & (is_max.sum(axis=1) == 1)[:, None]
    first = np.zeros_like(is_max)
    first[np.arange(len(grid)), is_max.argmax(axis=1)] = True
    tail = 1 - pmf.sum() ** k
    return (weight @ is_max + tail, weight @ unique, weight @ first)


def law_pvalue(draws: list[int], law: np.ndarray) -> float:
    """Chi-square p-value of selected indices against an exact law (cells expecting <= 5 are asserted rare)."""
    observed = np.bincount(draws, minlength=len(law))
    keep = law * len(draws) > 5
    assert observed[~keep].sum() <= 10
    return stats.chisquare(observed[keep], law[keep] * observed[keep].sum() / law[keep].sum()).pvalue


# ----------------------------------------------------------------- exponential mechanism
@pytest.mark.parametrize("words", [None, 1, 3])
def test_exponential_mechanism_samples_the_exact_law(words, monkeypatch):
    """The compiled rejection sampler with the default word buffer, and with buffers of 1 and 3 words,
    which run out in the middle of proposals and coins: the resumed run must keep the exact law."""
    if words is not None:
        monkeypatch.setattr(selection, "_WORDS", words)
    scores = np.array([6, -6, 0, 0, 3, -3], dtype=np.int64)  # a complement-closed workload: U and -U
    rng = PrivateRandom(10)
    draws = [exponential_mechanism(scores, epsilon=Fraction(1), sensitivity=1, rng=rng, ledger=ledger(),
                                   relation="replace-one") for _ in range(8000)]
    assert law_pvalue(draws, em_law(scores, 1.0, 1)) > 1e-3


def test_exponential_mechanism_large_workload_law_by_score_value():
    """A workload larger than one batch (2**16 proposals): the chosen score value follows count * exp(eps U/2N)."""
    values = np.array([0, -40, -80, -400])
    counts = np.array([3, 40_000, 40_000, 1_000])
    scores = np.repeat(values, counts).astype(np.int64)
    rng = PrivateRandom(14)
    picks = [exponential_mechanism(scores, epsilon=Fraction(1, 10), sensitivity=1, rng=rng, ledger=ledger(),
                                   relation="replace-one") for _ in range(250)]
    law = counts * np.exp(0.1 * values / 2)
    assert law_pvalue(np.searchsorted(np.cumsum(counts), picks, side="right").tolist(), law / law.sum()) > 1e-3


def test_exponential_mechanism_overflowing_coins_finish_exactly():
    """scale = 2**61: every fractional coin leaves the kernel's int64 range at k = 2 and is finished in
    Python integers from the same k."""
    scores = np.array([2**59, 0, -(2**59), 2**58], dtype=np.int64)
    eps = Fraction(1, 2**60)  # scale = 2 * 1 * 2**60
    rng = PrivateRandom(12)
    draws = [exponential_mechanism(scores, epsilon=eps, sensitivity=1, rng=rng, ledger=ledger(),
                                   relation="replace-one") for _ in range(6000)]
    law = np.exp(float(eps) * (scores - scores.max()).astype(float) / 2)
    assert law_pvalue(draws, law / law.sum()) > 1e-3


def test_exponential_mechanism_equal_scores_with_a_huge_numerator():
    """All scores equal: gamma is 0 for every index, whatever epsilon's numerator (here above int64)."""
    eps = Fraction(2**63 + 1, 2**60)
    rng = PrivateRandom(13)
    draws = [exponential_mechanism(np.array([7, 7, 7], dtype=np.int64), epsilon=eps, sensitivity=1, rng=rng,
                                   ledger=Ledger(Fraction(10**6), Fraction(0)), relation="replace-one")
             for _ in range(3000)]
    assert law_pvalue(draws, np.full(3, 1 / 3)) > 1e-3


def test_exponential_mechanism_exact_scalar_fallback_law():
    """p (U* - min U) >= 2**62: the sequential sampler in Python integers, same exact law."""
    top = 2**62
    scores = np.array([top, top - 1, top - 2, -top], dtype=np.int64)
    rng = PrivateRandom(15)
    draws = [exponential_mechanism(scores, epsilon=Fraction(1), sensitivity=1, rng=rng, ledger=ledger(),
                                   relation="replace-one") for _ in range(6000)]
    assert law_pvalue(draws, em_law(scores, 1.0, 1)) > 1e-3
    tiny = Fraction(1, 2**62)  # 2 N q >= 2**62: also the scalar path
    assert exponential_mechanism(scores[:3], epsilon=tiny, sensitivity=1, rng=rng, ledger=ledger(),
                                 relation="replace-one") in (0, 1, 2)


def test_exponential_mechanism_privacy_ratio_by_formula():
    """Theorem 4.5: neighbours move scores by at most N; the law's ratio stays within e^eps."""
    N, eps = 2, 1.0
    base = np.array([4, -4, 1, -1])
    worst = 0.0
    for shift in itertools.product(range(-N, N + 1), repeat=2):
        moved = base + np.array([shift[0], -shift[0], shift[1], -shift[1]])
        worst = max(worst, float(np.max(np.abs(np.log(em_law(base, eps, N) / em_law(moved, eps, N))))))
    assert worst <= eps + 1e-12


def test_exponential_mechanism_huge_score_gaps_use_exact_arithmetic():
    scores = np.array([10**12, -10**12, 0, 0], dtype=np.int64)
    rng = PrivateRandom(1)
    picks = {exponential_mechanism(scores, epsilon=Fraction(1, 10), sensitivity=5, rng=rng, ledger=ledger(),
                                   relation="add-remove") for _ in range(50)}
    assert picks == {0}


# ----------------------------------------------------------------- report-noisy-max
@pytest.mark.parametrize("offset", [0, 2**63 - 2])
def test_report_noisy_max_samples_the_exact_law(offset):
    """First-index tie-breaking; offset = 2**63 - 2 puts the scores at the top of int64, where
    ``U + Z`` is summed in Python integers."""
    scores = np.array([1, 0, -1], dtype=np.int64)
    _, _, law = rnm_laws(scores, 2.0, 1, 45)
    rng = PrivateRandom(12)
    draws = [report_noisy_max(scores + offset, epsilon=Fraction(2), sensitivity=1, rng=rng, ledger=ledger(),
                              relation="replace-one") for _ in range(6000)]
    assert law_pvalue(draws, law) > 1e-3


def test_selection_uint64_scores_and_scalar_noise_path():
    """uint64 scores beyond int64 stay exact; eps = 1/2**62 sends RNM to the scalar DLap sampler."""
    scores = np.array([2**64 - 1, 2**64 - 10**6, 0], dtype=np.uint64)
    for mechanism in (exponential_mechanism, report_noisy_max):
        assert mechanism(scores, epsilon=Fraction(1), sensitivity=1, rng=PrivateRandom(2), ledger=ledger(),
                         relation="replace-one") == 0
    assert report_noisy_max(np.array([5, -5]), epsilon=Fraction(1, 2**62), sensitivity=1, rng=PrivateRandom(3),
                            ledger=ledger(), relation="replace-one") in (0, 1)


@pytest.mark.parametrize("mechanism", [exponential_mechanism, report_noisy_max])
def test_selection_seeded_runs_are_reproducible(mechanism):
    scores = np.random.default_rng(0).integers(-10**6, 10**6, 100_000)
    def run(seed):
        rng = PrivateRandom(seed)
        return [mechanism(scores, epsilon=Fraction(1, 100), sensitivity=50, rng=rng, ledger=ledger(),
                          relation="replace-one") for _ in range(3)]
    assert run(3) == run(3)
    assert run(3) != run(4)


@pytest.mark.parametrize("sensitivity", [1, 2])
def test_report_noisy_max_privacy_any_tie_breaking(sensitivity):
    """Theorem 4.6 exactly: ln(P[j in argmax on U] / P[j unique argmax on U']) <= eps, ||U - U'|| <= N."""
    eps, bound = 2.0, 60 * sensitivity
    laws = {}
    for u in range(-3, 4):
        laws[u] = rnm_laws(np.array([u, -u]), eps, sensitivity, bound)
    worst = max(float(np.max(np.log(laws[u][0] / laws[v][1])))
                for u in laws for v in laws if abs(u - v) <= sensitivity)
    assert worst <= eps + 1e-9
    assert worst > 0.5 * eps


# ----------------------------------------------------------------- ledger and validation
@pytest.mark.parametrize("mechanism", [exponential_mechanism, report_noisy_max])
def test_spend_is_recorded_and_refusal_draws_nothing(mechanism):
    scores = np.array([3, -3], dtype=np.int64)
    book = Ledger(Fraction(1), Fraction(0))
    mechanism(scores, epsilon=Fraction(1, 2), sensitivity=1, rng=PrivateRandom(1), ledger=book,
              relation="add-remove", label="round 1")
    assert book.events[0].mechanism in ("exponential", "report-noisy-max")
    assert book.events[0].note == "round 1" and book.events[0].relation == "add-remove"
    rng = PrivateRandom(5)
    with pytest.raises(PrivacyError):
        mechanism(scores, epsilon=Fraction(3, 4), sensitivity=1, rng=rng, ledger=book, relation="add-remove")
    assert rng.randbelow(10**9) == PrivateRandom(5).randbelow(10**9)


@pytest.mark.parametrize("mechanism", [exponential_mechanism, report_noisy_max])
def test_selection_validation(mechanism):
    rng = PrivateRandom(1)
    for scores, sensitivity in ((np.array([1.5, 2.0]), 1), (np.array([], dtype=np.int64), 1),
                                (np.array([1, 2]), 0)):
        with pytest.raises(InputError):
            mechanism(scores, epsilon=Fraction(1), sensitivity=sensitivity, rng=rng, ledger=ledger(),
                      relation="replace-one")
