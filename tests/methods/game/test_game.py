"""The game's pieces: the round objective's sign, the players, FTPL, the a-priori bound."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from synthdp.oracles import get_oracle
from synthdp.oracles.base import Limits
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions
from synthdp.accounting.ledger import Ledger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.methods.game.algorithm import (FTPLDataPlayer, OracleStats, a_priori_bound, discrete_laplace_float, penalty_noise,
                          play_game)
from synthdp.methods.game.players import RSPMPlayer, WorkloadPlayer, game_instance
from synthdp.mechanisms.randomness import PrivateRandom

DOMAIN = Domain(("a", "b", "c"), (3, 2, 2))


def _data(seed: int, n: int) -> AggregatedData:
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, n) for s in DOMAIN.sizes], axis=1)
    codes[: n // 2, 1] = codes[: n // 2, 2]  # correlate b and c
    return AggregatedData.from_codes(DOMAIN, codes)


def _signed_errors(qc, real, synth):
    queries = qc.enumerate()
    err = qc.answers(queries, real) / real.n - qc.answers(queries, synth) / synth.n
    return queries, err


@pytest.mark.parametrize("seed", range(5))
def test_game_objective_prefers_the_most_underestimated_query(seed):
    """min L(q) = -nN (q(D) - q(P)) is the query the synthetic data undercount most."""
    qc = ComplementClosed(Conjunctions.marginals(DOMAIN, 2, exact=False))
    real, synth = _data(seed, 40), _data(seed + 100, 7)
    inst = game_instance(qc, real, synth)
    queries, err = _signed_errors(qc, real, synth)
    values = np.array([inst.objective(q) for q in queries])
    np.testing.assert_array_equal(values, -np.rint(err * real.n * synth.n).astype(np.int64))


@pytest.mark.parametrize("player_kind", ["rspm", "exponential", "noisy-max"])
def test_players_with_huge_epsilon_pick_a_worst_query(player_kind):
    qc = ComplementClosed(Conjunctions.marginals(DOMAIN, 2))
    real, synth = _data(1, 60), _data(2, 9)
    queries, err = _signed_errors(qc, real, synth)
    eps = Fraction(700)
    ledger = Ledger(eps, Fraction(1, 10**6))
    rng = PrivateRandom(0)
    if player_kind == "rspm":
        player = RSPMPlayer(qc, get_oracle("brute"), eps, rng, ledger, "add-remove")
    else:
        player = WorkloadPlayer(qc, eps, rng, ledger, "add-remove", mechanism=player_kind)
    chosen = player.select(real, synth, 1).query
    assert err[queries.index(chosen)] == pytest.approx(err.max())
    assert len(ledger.events) == 1 and ledger.events[0].epsilon == eps


def test_ftpl_without_history_and_with_tiny_noise_follows_the_leader():
    qc = ComplementClosed(Conjunctions.marginals(DOMAIN, 2))
    stats = OracleStats()
    player = FTPLDataPlayer(qc, get_oracle("exact"), resolution=100, scale=1e-6, rng=np.random.default_rng(0),
                            limits=Limits(), stats=stats)
    target = qc.enumerate()[5]
    rows = player.play(Counter({target: 3}), 4)
    assert rows.shape == (4, 3) and stats.calls == 4
    assert qc.evaluate([target], qc.features(rows)).all(), "every sample must satisfy the only rewarded query"


def test_ftpl_noise_scale():
    x = discrete_laplace_float(np.random.default_rng(0), 10.0, 200_000)
    # E|X| = 1/sinh(1/scale) for DLap(1/scale).
    assert np.abs(x).mean() == pytest.approx(1 / np.sinh(0.1), rel=0.02)


def test_penalty_noise_is_a_non_positive_geometric():
    x = penalty_noise(np.random.default_rng(0), 10.0, 200_000)
    assert x.max() <= 0 and x.dtype.kind == "i"
    # -x is geometric on {0, 1, ...} with ratio r = exp(-1/scale): mean r / (1 - r).
    r = np.exp(-0.1)
    assert (-x).mean() == pytest.approx(r / (1 - r), rel=0.02)


@pytest.mark.parametrize("noise", ["two-sided", "one-sided"])
def test_unconstrained_attributes_are_uniform_under_either_noise(noise):
    """Without queries every value of an attribute, the last one included, is equally likely."""
    qc = ComplementClosed(Conjunctions.marginals(Domain.from_sizes({"a": 5, "b": 2}), 1))
    player = FTPLDataPlayer(qc, get_oracle("exact"), resolution=100, scale=1.0, rng=np.random.default_rng(1),
                            limits=Limits(), stats=OracleStats(), noise=noise)
    rows = player.play(Counter(), 2000)
    freq = np.bincount(rows[:, 0], minlength=5) / len(rows)
    assert np.abs(freq - 0.2).max() < 0.04, freq


def test_unknown_ftpl_noise_is_refused():
    qc = ComplementClosed(Conjunctions.marginals(DOMAIN, 1))
    with pytest.raises(ValueError, match="FTPL noise"):
        FTPLDataPlayer(qc, get_oracle("exact"), resolution=100, scale=1.0, rng=np.random.default_rng(0),
                       limits=Limits(), stats=OracleStats(), noise="gaussian")


def test_game_runs_and_returns_t_times_n_records():
    qc = ComplementClosed(Conjunctions.marginals(DOMAIN, 2))
    real = _data(3, 80)
    ledger = Ledger(Fraction(1), Fraction(0))
    rng = PrivateRandom(0)
    player = WorkloadPlayer(qc, Fraction(1, 5), rng, ledger, "add-remove")
    data_player = FTPLDataPlayer(qc, get_oracle("exact"), resolution=100, scale=2.0, rng=rng.numpy_generator(),
                                 limits=Limits(), stats=OracleStats())
    res = play_game(real, rounds=5, samples_per_round=6, query_player=player, data_player=data_player, progress=False)
    assert res.codes.shape == (30, 3) and len(res.rounds) == 5
    assert ledger.total().epsilon <= 1


def test_a_priori_bound_matches_theorem_4_4_shape():
    b = a_priori_bound(m=30, d=30, log_q=10.0, epsilon0=Fraction(1, 10), rounds=100, samples=50, resolution=100,
                       scale=float(np.sqrt(2 * 100 * 1.01)))
    # Upper form of Theorem 4.4 with b = b*: m^2 (2 + 1/N) / eps0 bounds A, and d sqrt(2(1+1/V)/T) the regret.
    assert b["A"] <= 30 * 30 * (2 + 1 / 50) / 0.1
    assert b["regret"] <= 30 * np.sqrt(2 * 1.01 / 100) + 1e-9
    assert b["sampling"] == pytest.approx(np.sqrt(10 / 100))
