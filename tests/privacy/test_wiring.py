"""The noise each player draws matches what the ledger charges, for the relation in force.

Each test runs a real player or mechanism on a tiny problem, intercepts the
wire between it and its sampler (the objective or scores handed over, the
noise rate asked for), and compares with a brute-force sensitivity computed
over *every* neighbour of the data under the relation. These catch a wrong
wire that the statistical tests are too weak to see:

* the RSPM query player with ``c = W + 1`` under add/remove (the game
  objective uses the true ``n``, so ``Delta = 2W`` under both relations,
  docs/privacy.md §2.1 and §4.1);
* the workload players (exponential mechanism, report-noisy-max) with a
  halved score sensitivity;
* PRSMA with its count noise removed or its scale halved (docs/privacy.md §3.2
  step 4: ``Z ~ DLap(eps/2)``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import synthdp.mechanisms.prsma as prsma_module
import synthdp.mechanisms.rspm as rspm_module
import synthdp.mechanisms.selection as selection_module
import synthdp.methods.game.players as players_module
from adversarial_oracle import AdversarialOracle, fails_on_record
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.prsma import prsma, prsma_general, prsma_parameters
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.game.players import RSPMPlayer, WorkloadPlayer
from synthdp.oracles import get_oracle
from synthdp.oracles.base import QueryInstance
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions

DOMAIN = Domain(("a", "b"), (3, 2))
QC = ComplementClosed(Conjunctions.marginals(DOMAIN, 1))
REAL = np.array([[0, 0], [1, 1], [1, 0], [0, 1], [2, 1]])
UNIVERSE = [np.array([a, b]) for a in range(3) for b in range(2)]
#: The plays: N = 3 copies of one record, so a query and its complement see the synthetic mass on one side.
SYNTH = AggregatedData.from_codes(DOMAIN, np.array([[0, 0]] * 3))
EPS0 = Fraction(1, 3)


def _neighbours(records: np.ndarray, relation: str) -> list[np.ndarray]:
    """Every neighbour of ``records`` in the record universe under ``relation`` (docs/privacy.md §1.3)."""
    out = []
    if relation == ADD_REMOVE:
        out += [np.vstack([records, x]) for x in UNIVERSE]
        out += [np.delete(records, i, axis=0) for i in range(len(records))]
    else:
        for i in range(len(records)):
            for x in UNIVERSE:
                changed = records.copy()
                changed[i] = x
                out.append(changed)
    return out


def _data(records: np.ndarray) -> AggregatedData:
    return AggregatedData.from_codes(DOMAIN, records)


# ----------------------------------------------------------------------------------------- RSPM query player
class _RSPMWire:
    """Records the objective the player hands to RSPM and the noise rates RSPM draws at; runs the real ones."""

    def __init__(self, monkeypatch):
        self.instances: list[QueryInstance] = []
        self.rates: list[Fraction] = []
        real_rspm, real_vector = rspm_module.rspm, rspm_module.discrete_laplace_vector

        def rspm(instance, **kwargs):
            self.instances.append(instance)
            return real_rspm(instance, **kwargs)

        def vector(m, s, t, rng):
            self.rates.append(Fraction(s, t))
            return real_vector(m, s, t, rng)

        monkeypatch.setattr(players_module, "rspm", rspm)  # the name the player calls
        monkeypatch.setattr(rspm_module, "discrete_laplace_vector", vector)


def _objective(instance: QueryInstance, queries) -> np.ndarray:
    return np.array([instance.objective(q) for q in queries], dtype=np.int64)


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_rspm_player_noise_rate_covers_the_game_objectives_true_sensitivity(monkeypatch, relation):
    """lambda <= eps0 / (m (Delta + 1)) with Delta the brute-force difference sensitivity of the objective
    the player actually builds, over all neighbours; here Delta = 2N under both relations."""
    wire = _RSPMWire(monkeypatch)
    ledger = Ledger(Fraction(100), Fraction(1, 10**6))
    player = RSPMPlayer(QC, get_oracle("brute"), EPS0, PrivateRandom(0), ledger, relation)
    player.select(_data(REAL), SYNTH, 1)
    for neighbour in _neighbours(REAL, relation):
        player.select(_data(neighbour), SYNTH, 1)
    queries = QC.enumerate()
    base = _objective(wire.instances[0], queries)
    delta = max(int(np.ptp(_objective(inst, queries) - base)) for inst in wire.instances[1:])
    assert delta == 2 * SYNTH.n  # the example attains the bound, so a smaller constant cannot pass
    m = QC.separator().m
    assert set(wire.rates) == {EPS0 / (m * (delta + 1))}
    assert all(e.epsilon == EPS0 and e.relation == relation and e.mechanism == "rspm" for e in ledger.events)


# ----------------------------------------------------------------------------------------- workload players
@pytest.mark.parametrize("mechanism", ["exponential", "noisy-max"])
@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_workload_player_sensitivity_covers_its_scores(monkeypatch, mechanism, relation):
    """The sensitivity handed to the selection mechanism is at least the brute-force sensitivity of the scores
    the player computes (N here, attained), and the rate is the per-round budget the ledger is charged."""
    calls = []
    name = "exponential_mechanism" if mechanism == "exponential" else "report_noisy_max"
    real_pick = getattr(selection_module, name)

    def pick(scores, **kwargs):
        calls.append((np.asarray(scores).copy(), kwargs["epsilon"], kwargs["sensitivity"]))
        return real_pick(scores, **kwargs)

    monkeypatch.setattr(players_module, name, pick)  # the name the player calls
    ledger = Ledger(Fraction(100), Fraction(0))
    player = WorkloadPlayer(QC, EPS0, PrivateRandom(0), ledger, relation, mechanism=mechanism, name=mechanism)
    player.select(_data(REAL), SYNTH, 1)
    for neighbour in _neighbours(REAL, relation):
        player.select(_data(neighbour), SYNTH, 1)
    base = calls[0][0]
    brute = max(int(np.abs(scores - base).max()) for scores, _, _ in calls[1:])
    assert brute == SYNTH.n
    assert all(sensitivity >= brute and epsilon == EPS0 for _, epsilon, sensitivity in calls)
    assert all(e.epsilon == EPS0 and e.relation == relation for e in ledger.events)


# ----------------------------------------------------------------------------------------- PRSMA count noise
def _count_noise_run(monkeypatch, z: int | None, seed: int = 0):
    """One PRSMA run (the audit's tiny setting) with the count-noise draws recorded (and forced to ``z``)."""
    draws = []

    def sampler(s, t, rng):
        value = discrete_laplace(s, t, rng) if z is None else z
        draws.append((Fraction(s, t), value))
        return value

    monkeypatch.setattr(prsma_module, "discrete_laplace", sampler)
    domain = Domain(("a",), (3,))
    base = Conjunctions.marginals(domain, 1)
    params = prsma_general(eps_count=Fraction(1, 2), K=10, L=5, t0=4, gamma=0.5, R=9, psi=0.1,
                           eps0=Fraction(1, 42), n=10, m=base.separator().m, W=1, log_q=float(np.log(base.size())))
    records = np.array([[2], *([[i % 2] for i in range(9)])])
    oracle = AdversarialOracle(fail=fails_on_record([2]), seed=seed)
    result = prsma(records, lambda piece: QueryInstance.build(base, piece.codes, piece.counts), domain=domain,
                   params=params, oracle=oracle, rng=PrivateRandom(seed), ledger=Ledger(params.epsilon, params.delta))
    return params, result, draws


def test_prsma_count_noise_is_one_draw_of_dlap_eps_count_added_to_the_failure_count(monkeypatch):
    params, result, draws = _count_noise_run(monkeypatch, None)
    assert [rate for rate, _ in draws] == [params.eps_count]
    assert result.f == 1 and result.noisy_count == result.f + draws[0][1]


@pytest.mark.parametrize("z", [-3, -2, -1, 0, 1, 2])
def test_prsma_outputs_bottom_iff_the_noisy_count_reaches_tau(monkeypatch, z):
    params, result, draws = _count_noise_run(monkeypatch, z)
    assert params.tau == 1 and result.f == 1 and len(draws) == 1
    assert result.bottom == (result.f + z >= params.tau)


def test_prsma_recipe_count_noise_is_half_the_budget():
    """docs/privacy.md §3.2: eps_L = eps/2, Z ~ DLap(eps/2), for the charged (eps, delta)."""
    for epsilon, delta in [(Fraction(1), Fraction(1, 10**6)), (Fraction(3, 10), Fraction(1, 10**9))]:
        params = prsma_parameters(epsilon, delta, 10**6, 5, 1)
        assert params.eps_count == epsilon / 2 and (params.epsilon, params.delta) == (epsilon, delta)
