"""Private tuning by random stopping (docs/privacy.md §5.1, after Liu and Talwar 2019).

A user hands over ``J`` public configurations of the generator.  Each
iteration draws a configuration uniformly, runs it with fresh randomness at a
per-candidate budget, scores its table privately (:mod:`synthdp.tuning.score`)
and keeps the best outcome so far in a fixed strict order; then it stops with
probability ``gamma`` (an exact Bernoulli).  Only the best outcome is released:
its configuration index and table -- never the number of iterations, nor any
other candidate.

Budget (docs/privacy.md §5.1, Theorem 5.1 and its recipe) for a total
``(epsilon, delta)``:

* pure candidates (``delta = 0``): ``eps_c = epsilon / 3``, no hard stop;
  Theorem 5.1 (a) gives ``3 eps_c = epsilon``;
* pure candidates with a hard stop (``pure_candidates=True`` and ``delta > 0``):
  ``T_max = ceil(ln((1 + e^epsilon) / delta) / gamma)``; (a) and (c);
* ``(eps_c, delta_c)`` candidates (``delta > 0``): ``delta_c = gamma delta / 4``,
  ``eps_c = (epsilon - 1.01 delta) / 3``, ``T_max = ceil(ln(4 (1 + e^epsilon) / delta) / gamma)``;
  (b) and (c) give ``(3 eps_c + 2 ln(1 / (1 - delta / 2)), delta / 4 + hard-stop term)``.

``gamma`` is ``beta / (2 J)`` for a target failure probability ``beta``
(Theorem 5.1 (d): the output is worse than the best configuration's median
score with probability at most about ``beta``); the expected number of
generator runs is ``1 / gamma``.  Each candidate's budget is split into the
generator's ``(0.9 eps_c, delta_c)`` and the score's ``eps_s = 0.1 eps_c`` (§5.2).
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Callable

import pandas as pd

from synthdp.core.errors import InputError
from synthdp.accounting.ledger import Ledger, round_up
from synthdp.accounting.ledger import to_fraction_down
from synthdp.mechanisms.noise import bernoulli
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.report import unit_line
from synthdp.tuning.runs import ReleasedTable, Runner, check_count, check_delta, check_epsilon, check_positive, public_settings
from synthdp.tuning.score import Outcome, integer_error, outranks, private_score
from synthdp.tuning.score import eval_workload as resolve_workload

log = logging.getLogger(__name__)

#: Share of each candidate's epsilon spent on its score (docs/privacy.md §5.2).
SCORE_SHARE = Fraction(1, 10)
#: The recipe's bound 2 ln(1 / (1 - delta/2)) <= 1.01 delta needs delta at most this (docs/privacy.md §5.1).
MAX_DELTA = Fraction(1, 100)


@dataclass(frozen=True)
class StoppingPlan:
    """The public parameters of one random-stopping run and the total it costs (docs/privacy.md §5.1).

    ``max_iterations`` is ``None`` for no hard stop.  ``epsilon``/``delta`` is
    the total guarantee by ``theorem``; it never exceeds the budget.
    """

    candidates: int
    gamma: Fraction
    max_iterations: int | None
    epsilon_candidate: Fraction
    delta_candidate: Fraction
    epsilon_score: Fraction
    epsilon_generator: Fraction
    epsilon: Fraction
    delta: Fraction
    theorem: str

    @property
    def pure_candidates(self) -> bool:
        return self.delta_candidate == 0


def _hard_stop_term(epsilon: Fraction, gamma: Fraction, iterations: int) -> Fraction:
    """``(1 + e^epsilon) (1 - gamma)^T_max``, rounded up (Theorem 5.1 (c))."""
    return round_up(math.exp(math.log1p(math.exp(float(epsilon))) + iterations * math.log1p(-float(gamma))))


def _iterations(numerator: float, gamma: Fraction) -> int:
    """``ceil(ln(numerator) / gamma)``, the recipe's hard stop."""
    return math.ceil(math.log(numerator) / float(gamma))


def plan_stopping(epsilon: Fraction, delta: Fraction, candidates: int, target_failure: Fraction,
                  pure_candidates: bool | None = None) -> StoppingPlan:
    """The recipe of docs/privacy.md §5.1 for a total ``(epsilon, delta)`` and ``J`` candidates.

    ``pure_candidates=None`` means pure candidates iff ``delta == 0``.  All
    inputs are public; the result is refused (InputError) when the recipe
    does not apply.
    """
    gamma = target_failure / (2 * candidates)
    if pure_candidates is None:
        pure_candidates = delta == 0
    if pure_candidates:
        eps_c, delta_c = epsilon / 3, Fraction(0)
        if delta == 0:
            plan = (None, epsilon, Fraction(0), "Theorem 5.1 (a)")
        else:
            iterations = _iterations(float((1 + math.exp(epsilon)) / delta), gamma)
            plan = (iterations, epsilon, _hard_stop_term(epsilon, gamma, iterations), "Theorem 5.1 (a) and (c)")
    else:
        if delta == 0:
            raise InputError("pure_candidates=False needs delta > 0: (eps, delta) candidates cost a delta")
        if delta > MAX_DELTA:
            raise InputError(f"delta must be at most {MAX_DELTA} for (eps, delta) candidates (the recipe's "
                             f"1.01 delta bound, docs/privacy.md §5.1), got {float(delta):g}")
        delta_c = gamma * delta / 4
        eps_c = (epsilon - Fraction(101, 100) * delta) / 3
        if eps_c <= 0:
            raise InputError(f"epsilon={float(epsilon):g} is too small for delta={float(delta):g}: the recipe "
                             "needs epsilon > 1.01 delta")
        eps_prime = 3 * eps_c + round_up(-2 * math.log1p(-float(delta) / 2))
        iterations = _iterations(4 * (1 + math.exp(epsilon)) / float(delta), gamma)
        plan = (iterations, eps_prime, delta / 4 + _hard_stop_term(eps_prime, gamma, iterations),
                "Theorem 5.1 (b) and (c)")
    iterations, eps_total, delta_total, theorem = plan
    eps_s = eps_c * SCORE_SHARE
    return StoppingPlan(candidates, gamma, iterations, eps_c, delta_c, eps_s, eps_c - eps_s, eps_total, delta_total,
                        theorem)


def random_stopping(draw: Callable[[int], Outcome], candidates: int, gamma: Fraction, max_iterations: int | None,
                    rng: PrivateRandom) -> Outcome:
    """Algorithm RS of docs/privacy.md §5.1: the best of a geometric number of candidate runs.

    ``draw(j)`` runs candidate ``j`` with fresh randomness and returns its
    released outcome; the loop decides on nothing but those outcomes (in the
    order of :func:`~synthdp.tuning.score.outranks`) and an exact
    ``Bernoulli(gamma)``.  It returns the best outcome only.
    """
    best: Outcome | None = None
    done = 0
    while max_iterations is None or done < max_iterations:
        outcome = draw(rng.randbelow(candidates))
        if best is None or outranks(outcome, best):
            best = outcome
        done += 1
        if bernoulli(gamma.numerator, gamma.denominator, rng):
            break
    return best


@dataclass
class TuningReport:
    """What a tuned release may say: the total budget and theorem, the chosen configuration, nothing else.

    No field depends on the other candidates, on the number of runs, or on
    any score: only public parameters and the released choice.
    """

    epsilon_budget: float
    delta_budget: float
    epsilon_spent: float
    delta_spent: float
    theorem: str
    relation: str
    candidates: int
    target_failure: float
    stop_probability: str
    max_iterations: int | None
    epsilon_candidate: float
    delta_candidate: float
    epsilon_generator: float
    epsilon_score: float
    eval_workload: str
    rows_written: int
    chosen_index: int
    chosen_config: dict
    chosen_settings: dict
    seeded: bool
    ledger: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The privacy unit and its bound k, when every run and the score protect one unit (docs/privacy.md §10.6).
    privacy_unit: str | None = None
    max_rows_per_unit: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """A few lines for the terminal."""
        stop = "no hard stop" if self.max_iterations is None else f"at most {self.max_iterations} runs"
        lines = [
            f"privacy: spent epsilon={self.epsilon_spent:.6g}, delta={self.delta_spent:.3g} of budget "
            f"epsilon={self.epsilon_budget:.6g}, delta={self.delta_budget:.3g} ({self.relation} neighbours), "
            f"by random stopping over {self.candidates} configurations (docs/privacy.md §5.1, {self.theorem})",
            f"tuning: stop probability {self.stop_probability} per run ({stop}); each run "
            f"({self.epsilon_candidate:.6g}, {self.delta_candidate:.3g})-DP: generator epsilon "
            f"{self.epsilon_generator:.6g}, private score epsilon {self.epsilon_score:.6g} on {self.eval_workload}",
            f"chosen configuration #{self.chosen_index}: {self.chosen_config}",
            "nothing about the other configurations or the number of runs is released",
            f"wrote {self.rows_written} rows",
        ]
        if self.privacy_unit is not None:
            lines.insert(1, unit_line(self.privacy_unit, self.max_rows_per_unit))
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)


@dataclass
class TuningResult(ReleasedTable):
    """The released table of the chosen configuration and the tuning report."""

    chosen_index: int
    report: TuningReport


def tune(df: pd.DataFrame, query_class: Any, candidates: list[dict], *, epsilon: float, delta: float | None = None,
         eval_workload: Any, target_failure: float = 0.1, n_out: int, random_state: int | None = None,
         relation: str = "add-remove", pure_candidates: bool | None = None, ledger: Ledger | None = None,
         **config: Any) -> TuningResult:
    """Release the table of the best of ``candidates`` privately, by random stopping (docs/privacy.md §5.1-5.2).

    ``candidates`` are public configurations (dicts of
    :func:`~synthdp.api.generate_synthetic` keywords such as ``rounds``,
    ``samples_per_round``, ``query_player``, ``method``); ``config`` holds
    keywords common to all of them (schema options included).  Every run
    outputs ``n_out`` rows and is scored on the public ``eval_workload``.
    The whole release is ``(epsilon, delta)``-DP by Theorem 5.1 (the report
    says which part); that total is charged to ``ledger`` (a fresh
    ``Ledger(epsilon, delta)`` if none) before anything runs.  Randomness
    comes from one :class:`PrivateRandom` (``random_state=None``: the CSPRNG;
    a seed: reproducible runs for experiments, never for release).
    """
    eps = check_epsilon(epsilon, "epsilon")
    dlt = check_delta(delta)
    beta = check_positive(target_failure, "target_failure", upper=1)
    if not isinstance(candidates, (list, tuple)) or not candidates:
        raise InputError(f"candidates must be a non-empty list of configurations (dicts), got {candidates!r}")
    if pure_candidates is not None and not isinstance(pure_candidates, bool):
        raise InputError(f"pure_candidates must be True, False or None, got {pure_candidates!r}")
    check_count(n_out, "n_out")
    plan = plan_stopping(eps, dlt, len(candidates), to_fraction_down(beta), pure_candidates)
    rng = PrivateRandom(random_state)
    runner = Runner.prepare(df, query_class, relation=relation, n_out=n_out, common=config, rng=rng)
    configs = [runner.check_candidate(c, f"candidate #{j}", plan.epsilon_generator, plan.delta_candidate)
               for j, c in enumerate(candidates)]
    workload = resolve_workload(eval_workload, runner.schema.domain)
    ledger = ledger if ledger is not None else Ledger(eps, dlt, contribution_bound=runner.contribution_bound)
    ledger.spend("random stopping", plan.epsilon, plan.delta, relation,
                 note=f"{len(candidates)} configurations, docs/privacy.md §5.1 {plan.theorem}")

    def draw(j: int) -> Outcome:
        result, table = runner.run(configs[j], plan.epsilon_generator, plan.delta_candidate, rng)
        score = private_score(integer_error(runner.real, table, workload), plan.epsilon_score, n_out, rng,
                              runner.contribution_bound)
        return Outcome(score, j, result.data, public_settings(result.report))

    best = random_stopping(draw, len(candidates), plan.gamma, plan.max_iterations, rng)
    spent = ledger.total()
    warnings = list(runner.warnings)
    if random_state is not None:
        warnings.append("seeded run (random_state given): reproducible, non-cryptographic noise; for experiments "
                        "only, not for release")
    report = TuningReport(
        epsilon_budget=float(eps), delta_budget=float(dlt), epsilon_spent=float(spent.epsilon),
        delta_spent=float(spent.delta), theorem=plan.theorem, relation=relation, candidates=len(candidates),
        target_failure=float(beta), stop_probability=str(plan.gamma), max_iterations=plan.max_iterations,
        epsilon_candidate=float(plan.epsilon_candidate), delta_candidate=float(plan.delta_candidate),
        epsilon_generator=float(plan.epsilon_generator), epsilon_score=float(plan.epsilon_score),
        eval_workload=workload.name, rows_written=len(best.table), chosen_index=best.index,
        chosen_config=dict(candidates[best.index]), chosen_settings=best.public, seeded=random_state is not None,
        ledger=[e.to_dict() for e in ledger.events], warnings=warnings, **runner.unit_fields())
    log.info("tuning: chose configuration #%d of %d (%s)", best.index, len(candidates), plan.theorem)
    return TuningResult(best.table, best.index, report)

