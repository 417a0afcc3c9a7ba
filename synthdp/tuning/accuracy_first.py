"""Accuracy-first releases: double the budget until a privately tested target is met (docs/privacy.md §5.3).

After Ligett, Neel, Roth, Waggoner and Wu (2017).  The data owner fixes a
target error ``alpha = a / b`` on a public evaluation workload and a hard cap
``max_epsilon``.  Level ``k = 1, 2, ...`` runs the generator afresh at
``eps_k = eps_1 2^(k-1)``; a discrete AboveThreshold test with budget
``eps_A = max_epsilon / 10`` decides, from the statistic

    g_k = a n N - b Err(D, y_k)      (>= 0 iff the max cell error of y_k is <= alpha),

whether to release ``y_k`` and stop.  ``g_k`` uses the true ``n`` internally;
its sensitivity is ``Delta_g = b N`` under replace-one and ``(a + b) N`` under
add/remove (``a n N`` moves by ``a N`` when ``n`` does).  Nothing released
shows ``n``, ``g_k`` or any error.

Guarantees (docs/privacy.md Theorem 5.3), with ``eps_bar_k = sum_{j<=k} eps_j``
and ``delta_bar_k`` likewise (basic composition of the levels run):

* ex post: the outcome of level ``k`` has privacy loss at most ``eps_A + eps_bar_k``
  (with ``delta_bar_k``);
* worst case: the release is ``(eps_A + eps_bar_kmax, delta_bar_kmax)``-DP.

The ledger is charged the worst case, the only differential-privacy
guarantee; the report adds the ex-post cost of the level where it stopped.
When no level meets the target, :class:`TargetNotReached` is raised and
nothing is released.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from synthdp.core.errors import InputError, SynthDPError
from synthdp.accounting.ledger import ADD_REMOVE, Ledger, check_relation
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.report import unit_line
from synthdp.tuning.runs import ReleasedTable, Runner, check_count, check_delta, check_epsilon, check_positive, public_settings
from synthdp.tuning.score import integer_error
from synthdp.tuning.score import eval_workload as resolve_workload

log = logging.getLogger(__name__)

#: Share of the cap spent on the test (docs/privacy.md §5.3, recommended use).
TEST_SHARE = Fraction(1, 10)

EXPLANATION = ("The ex-post figure bounds the privacy loss of the table actually released, which stopped at an "
               "early level; but whether it stopped early itself depends on the data, so the figure to publish "
               "as the differential-privacy guarantee is the worst-case one, which covers every level it could "
               "have reached.")


class TargetNotReached(SynthDPError, RuntimeError):
    """No level up to the cap met the target error: nothing is released (docs/privacy.md §5.3, step 3)."""


@dataclass(frozen=True)
class AccuracyFirstPlan:
    """The public parameters of Algorithm AF (docs/privacy.md §5.3); every budget an exact Fraction."""

    a: int
    b: int
    n_out: int
    relation: str
    epsilon_test: Fraction
    levels: tuple[Fraction, ...]
    level_deltas: tuple[Fraction, ...]
    #: Rows one unit may add or remove (docs/privacy.md §10.6); 1 for one row.
    contribution_bound: int = 1

    @property
    def max_level(self) -> int:
        return len(self.levels)

    @property
    def sensitivity(self) -> int:
        """``Delta_g``: ``b N`` (replace-one) or ``(a + b) N`` (add/remove), ``k`` times that for units (§10.6)."""
        return statistic_sensitivity(self.a, self.b, self.n_out, self.relation) * self.contribution_bound

    @property
    def threshold_rate(self) -> Fraction:
        """Rate of ``zeta_0 ~ DLap(eps_A / (2 Delta_g))``."""
        return self.epsilon_test / (2 * self.sensitivity)

    @property
    def level_rate(self) -> Fraction:
        """Rate of ``zeta_k ~ DLap(eps_A / (4 Delta_g))``."""
        return self.epsilon_test / (4 * self.sensitivity)

    def cumulative(self, k: int) -> tuple[Fraction, Fraction]:
        """``(eps_bar_k, delta_bar_k)``: basic composition of levels ``1..k``."""
        return sum(self.levels[:k], Fraction(0)), sum(self.level_deltas[:k], Fraction(0))

    def ex_post(self, k: int) -> tuple[Fraction, Fraction]:
        """``(eps_A + eps_bar_k, delta_bar_k)``: the ex-post cost of stopping at level ``k``."""
        eps, dlt = self.cumulative(k)
        return self.epsilon_test + eps, dlt

    @property
    def worst_case(self) -> tuple[Fraction, Fraction]:
        """``(eps_A + eps_bar_kmax, delta_bar_kmax)``: the worst-case guarantee (Theorem 5.3)."""
        return self.ex_post(self.max_level)


def statistic_sensitivity(a: int, b: int, n_out: int, relation: str) -> int:
    """Sensitivity of ``g = a n N - b Err``: ``b N`` (replace-one), ``(a + b) N`` (add/remove) (§5.3)."""
    return ((a + b) if check_relation(relation) == ADD_REMOVE else b) * n_out


def accuracy_statistic(error: int, n: int, plan: AccuracyFirstPlan) -> int:
    """``g = a n N - b Err``: non-negative iff the table's max cell error is at most ``alpha`` (§5.3)."""
    return plan.a * n * plan.n_out - plan.b * error


def plan_accuracy_first(target_error: Fraction, max_epsilon: Fraction, epsilon_1: Fraction, delta: Fraction,
                        n_out: int, relation: str, contribution_bound: int = 1) -> AccuracyFirstPlan:
    """Levels and test budget from the public inputs (docs/privacy.md §5.3, recommended use).

    ``eps_A = max_epsilon / 10``; ``k_max`` is the largest ``k`` with
    ``eps_1 (2^k - 1) <= 0.9 max_epsilon`` (``floor(log2(1 + 0.9 max_epsilon / eps_1))``,
    computed exactly); a ``delta`` is shared equally by the levels.
    """
    room = (1 - TEST_SHARE) * max_epsilon
    if epsilon_1 > room:
        raise InputError(f"epsilon_1={float(epsilon_1):g} exceeds 0.9 max_epsilon={float(room):g}: not even one "
                         "level fits under the cap; lower epsilon_1 or raise max_epsilon")
    k_max = 1
    while epsilon_1 * (2 ** (k_max + 1) - 1) <= room:
        k_max += 1
    levels = tuple(epsilon_1 * 2 ** (k - 1) for k in range(1, k_max + 1))
    return AccuracyFirstPlan(target_error.numerator, target_error.denominator, n_out, relation,
                             TEST_SHARE * max_epsilon, levels, (delta / k_max,) * k_max, contribution_bound)


@dataclass
class AccuracyFirstReport:
    """The ex-post cost of the level where it stopped, the worst case, and one sentence on the difference."""

    target_error: str
    max_epsilon: float
    relation: str
    eval_workload: str
    level: int
    max_level: int
    epsilon_level: float
    epsilon_test: float
    epsilon_ex_post: float
    delta_ex_post: float
    epsilon_worst_case: float
    delta_worst_case: float
    explanation: str
    rows_written: int
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
        lines = [
            f"accuracy-first (docs/privacy.md §5.3): target max error {self.target_error} on {self.eval_workload} "
            f"passed the private test at level {self.level} of {self.max_level} (generator epsilon "
            f"{self.epsilon_level:.6g}, test epsilon {self.epsilon_test:.6g}, {self.relation} neighbours)",
            f"ex-post privacy cost of this release: epsilon={self.epsilon_ex_post:.6g}, delta={self.delta_ex_post:.3g}",
            f"worst-case guarantee (differential privacy): epsilon={self.epsilon_worst_case:.6g}, "
            f"delta={self.delta_worst_case:.3g}",
            self.explanation,
            f"wrote {self.rows_written} rows",
        ]
        if self.privacy_unit is not None:
            lines.insert(1, unit_line(self.privacy_unit, self.max_rows_per_unit))
        lines.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(lines)


@dataclass
class AccuracyFirstResult(ReleasedTable):
    """The released table (of the level where the test passed) and its report."""

    level: int
    report: AccuracyFirstReport


def accuracy_first(df: pd.DataFrame, query_class: Any, *, target_error: float | Fraction, max_epsilon: float,
                   epsilon_1: float, delta: float | None = None, eval_workload: Any, n_out: int,
                   random_state: int | None = None, relation: str = "add-remove", ledger: Ledger | None = None,
                   **config: Any) -> AccuracyFirstResult:
    """Release the first table whose max cell error privately tests at most ``target_error`` (§5.3).

    ``target_error`` is read as an exact rational ``a / b`` (``0.05`` is
    ``1/20``).  Levels run :func:`~synthdp.api.generate_synthetic` with the
    keywords ``config`` at ``eps_1, 2 eps_1, 4 eps_1, ...`` while the worst
    case stays within ``max_epsilon``; ``delta`` (optional) is shared by the
    levels.  The worst case is charged to ``ledger`` (a fresh
    ``Ledger(max_epsilon, delta)`` if none) before anything runs.  Raises
    :class:`TargetNotReached` (nothing released) if no level passes.
    """
    alpha = check_positive(target_error, "target_error", upper=1)
    eps_max = check_epsilon(max_epsilon, "max_epsilon")
    eps_1 = check_epsilon(epsilon_1, "epsilon_1")
    dlt = check_delta(delta)
    check_count(n_out, "n_out")
    check_relation(relation)
    rng = PrivateRandom(random_state)
    runner = Runner.prepare(df, query_class, relation=relation, n_out=n_out, common=config, rng=rng)
    plan = plan_accuracy_first(alpha, eps_max, eps_1, dlt, n_out, relation, runner.contribution_bound)
    settings = runner.check_candidate({}, "the configuration", plan.levels[-1], plan.level_deltas[-1])
    workload = resolve_workload(eval_workload, runner.schema.domain)
    worst_eps, worst_delta = plan.worst_case
    ledger = ledger if ledger is not None else Ledger(eps_max, dlt, contribution_bound=runner.contribution_bound)
    ledger.spend("accuracy-first", worst_eps, worst_delta, relation,
                 note=f"worst case over {plan.max_level} levels, docs/privacy.md Theorem 5.3")

    rate0, rate = plan.threshold_rate, plan.level_rate
    zeta_0 = discrete_laplace(rate0.numerator, rate0.denominator, rng)
    for k in range(1, plan.max_level + 1):
        result, table = runner.run(settings, plan.levels[k - 1], plan.level_deltas[k - 1], rng)
        g = accuracy_statistic(integer_error(runner.real, table, workload), runner.real.n, plan)
        if g + discrete_laplace(rate.numerator, rate.denominator, rng) >= zeta_0:
            break
    else:
        raise TargetNotReached(
            f"no level up to max_epsilon={float(eps_max):g} passed the private test for target error "
            f"{alpha}; nothing was released (the worst-case cost epsilon={float(worst_eps):.6g}, "
            f"delta={float(worst_delta):.3g} was spent). Raise max_epsilon or relax target_error.")
    ex_eps, ex_delta = plan.ex_post(k)
    warnings = list(runner.warnings)
    if random_state is not None:
        warnings.append("seeded run (random_state given): reproducible, non-cryptographic noise; for experiments "
                        "only, not for release")
    report = AccuracyFirstReport(
        target_error=str(alpha), max_epsilon=float(eps_max), relation=relation, eval_workload=workload.name,
        level=k, max_level=plan.max_level, epsilon_level=float(plan.levels[k - 1]),
        epsilon_test=float(plan.epsilon_test), epsilon_ex_post=float(ex_eps), delta_ex_post=float(ex_delta),
        epsilon_worst_case=float(worst_eps), delta_worst_case=float(worst_delta), explanation=EXPLANATION,
        rows_written=len(result.data),
        chosen_settings=public_settings(result.report),
        seeded=random_state is not None, ledger=[e.to_dict() for e in ledger.events], warnings=warnings,
        **runner.unit_fields())
    log.info("accuracy-first: stopped at level %d of %d", k, plan.max_level)
    return AccuracyFirstResult(result.data, k, report)
