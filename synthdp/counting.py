"""The counting step of a run: the rows counted by its engine, then the checks that need their number ``n``."""

from __future__ import annotations

from synthdp.core.data import AggregatedData
from synthdp.engines import CountingEngine, Rows
from synthdp.engines.pandas import PandasEngine
from synthdp.plan import Plan, check_delta_against_public_n

__all__ = ["build"]


def build(rows: Rows, schema, plan: Plan, engine: CountingEngine | None = None) -> AggregatedData:
    """The rows counted by ``engine`` (default: in memory), after the checks that need ``n`` (public under
    replace-one only).

    Under add/remove ``n`` is private (docs/privacy.md §1.3, §4.1: it is never
    released), so neither an abort nor a message may depend on it: ``delta <=
    1/n`` and PRSMA's ``K <= n`` are checked under replace-one only.  They are
    checks, not choices: no parameter of the run depends on ``n``.
    """
    real = (engine or PandasEngine()).count(rows.source, schema, bounding=rows.bounding)
    check_delta_against_public_n(plan.config, real.n)
    plan.method.check_public_n(plan.method_plan, real.n)
    return real
