"""``max_rows_per_unit="auto"`` for two linked tables (docs/privacy.md §12, "Choosing k privately"): ``k`` chosen
by §10.6's mechanism with the family as the unit, the linked run's first private step.

The candidates are the ``k`` at which both views' plans pass (public inputs only); every value and size check
of both views at every candidate comes before the choice, so that nothing is refused after its charge; then the
linked run (:func:`~synthdp.linked.fitting.synthesize_linked`) runs the single table's mechanism,
:func:`~synthdp.mechanisms.units.choose_rows_per_unit`, on the families' row counts (Proposition 12.4).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

import numpy as np

from synthdp.core.errors import InputError
from synthdp.domains import bounds_threshold, categories_threshold, check_every_bound
from synthdp.linked.bounding import Families
from synthdp.linked.links import Link
from synthdp.linked.views import Views, check_view, parent_view, view_tallies
from synthdp.mechanisms.units import AUTO_CANDIDATES

__all__ = ["at_most", "candidate_views", "check_candidates"]


def candidate_views(plan_at: Callable[[int], Views]) -> dict[int, Views]:
    """Both views planned at every ``k`` of :data:`~synthdp.mechanisms.units.AUTO_CANDIDATES` (``plan_at(k)``,
    public inputs only), by ``k``, for the ``k`` at which both plans pass: the range the choice ranges over.
    Refuses with the smallest ``k``'s refusal when none passes."""
    views, refusals = {}, []
    for k in AUTO_CANDIDATES:
        try:
            views[k] = plan_at(k)
        except InputError as refusal:
            refusals.append(refusal)
    if not views:
        raise refusals[0]
    return views


def at_most(families: Families, k: int) -> Families:
    """``families`` with each count capped at ``k``: the parent view's ``m`` once bounding keeps at most ``k``
    children of each family, whatever its key (the parent rows kept do not depend on ``k``)."""
    return replace(families, m=np.minimum(families.m, k))


def check_candidates(families: Families, link: Link, views: Mapping[int, Views]) -> None:
    """Before the choice: both views' value and size refusals at every candidate ``k`` (docs/privacy.md §12,
    "Choosing k privately"), on the unbounded ``families``.

    The parent view is checked once per distinct pair of thresholds its plans hold (its rows do not depend on
    ``k``); the joined view's child columns on every matched child row (a superset of what any ``k`` keeps, so a
    value refused at some ``k`` is refused here) and its sizes at every candidate by §10.6's check on the families'
    counts.  Reads private values and counts, for the owner only: a refusal here comes before anything is charged.
    """
    seen = set()
    for k, view in views.items():
        plan = view.plans[0]
        thresholds = (categories_threshold(plan.stage), bounds_threshold(plan) if view.parent_schema.to_bound else None)
        if thresholds not in seen:
            seen.add(thresholds)
            check_view(parent_view(at_most(families, k), link), view.parent_schema, plan)
    children = next(iter(views.values())).children
    check_every_bound(view_tallies(families.children, children), families.m, children,
                      {k: view.plans[1] for k, view in views.items()})

