"""Steps 3 and 4 of docs/privacy.md §12: the parent view and the joined view released by the single-table
pipeline, as one release (Theorem 12.3), then the pair of tables drawn from the two released models.

Both views are planned (and refused) before any private step.  The parent view runs with no unit (one row per
parent), the joined view with the parent key as its unit and ``k`` rows per unit, its parent columns given the
domains the parent view released and no marginal over them alone measured.  Both are measured in one zCDP
filter: the budget is converted once and each view's filter takes a fixed public share (:data:`PARENT_SHARE`) of
that ``rho``; their domain steps take fixed parts of their views' ``(epsilon, delta)`` shares (docs/privacy.md
§12, "One filter for both views").  Under ``max_rows_per_unit="auto"`` ``k`` is chosen first, privately
(:mod:`synthdp.linked.choice`), and the views share the budget it leaves.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import Any, Callable

import numpy as np
import pandas as pd

from synthdp.accounting.ledger import Ledger, as_delta, as_epsilon, round_down
from synthdp.accounting.spend import stating_spend
from synthdp.accounting.zcdp import rho_for_dp
from synthdp.config import SynthesisConfig
from synthdp.core.attribute import Attribute
from synthdp.core.errors import InputError
from synthdp.core.owner import said_again
from synthdp.core.schema import Schema, resolve_schema
from synthdp.engines.dask import DaskEngine
from synthdp.linked.bounding import Families, bound_families, unbounded_families, warn_owner
from synthdp.linked.choice import at_most, candidate_views, check_candidates
from synthdp.linked.files import ChildFiles, check_child_files, families_on_files, joined_on_files, linked_tables
from synthdp.linked.generation import LinkedModel
from synthdp.linked.links import TABLE_OPTIONS, Link, read_link, split_options
from synthdp.linked.views import (Views, check_joined_names, check_view, count_categories, joined_schema,
                                  joined_view, parent_view)
from synthdp.mechanisms import partition
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.units import (AUTO_EPSILON_SHARE, ChosenBound, bounding_key, candidates_text,
                                      choose_rows_per_unit)
from synthdp.plan import Plan, ViewInputs, budget, make_plan, unit_choice
from synthdp.report import Report

__all__ = ["PARENT_SHARE", "LinkedReport", "LinkedResult", "synthesize_linked"]

#: The public share of epsilon and of delta the parent view takes; the joined view, whose noise is k times larger
#: and which holds the child columns, takes the rest (docs/privacy.md §12).
PARENT_SHARE = Fraction(1, 3)


@dataclass(frozen=True)
class LinkedReport:
    """The one release of two linked tables: the unit, ``k``, the public rules, each view's release, the user's
    budget and how the views composed: ``rho``, each view's share of one zCDP filter, or None (basic composition
    of the views' shares, pure DP or a method without a filter); ``chosen``, how ``k`` was chosen privately and
    what that cost, under ``max_rows_per_unit="auto"`` (docs/privacy.md §12, "What the release says", "Choosing k
    privately").  Never a count of orphans, merged keys or rows cut."""

    link: Link
    k: int
    parent: Report
    joined: Report
    epsilon_budget: float
    delta_budget: float | None
    rho: tuple[Fraction, Fraction] | None = None
    chosen: ChosenBound | None = None

    @property
    def choice_epsilon(self) -> float:
        """What the private choice of ``k`` spent, ahead of both views (0 for a public ``k``)."""
        return 0.0 if self.chosen is None else float(self.chosen.epsilon)

    @property
    def epsilon_spent(self) -> float:
        """The choice of ``k`` and both views' spends; in one filter the whole budget, converted once (every step
        ahead of the filters spends exactly its planned part, and each filter is charged whole when it opens)."""
        if self.rho is not None:
            return self.epsilon_budget
        return self.choice_epsilon + self.parent.epsilon_spent + self.joined.epsilon_spent

    @property
    def delta_spent(self) -> float | None:
        if self.parent.delta_spent is None:
            return None
        return self.delta_budget if self.rho is not None else self.parent.delta_spent + self.joined.delta_spent

    def composition(self) -> str:
        """How the two views' releases (and the choice of ``k`` ahead of them) compose, in words."""
        if self.rho is None:
            views = ("basic composition of the parent view's and the joined view's releases, each at its share "
                     "(docs/privacy.md §12, Theorem 12.3)")
        else:
            views = (f"one zCDP filter for both views: rho = {float(sum(self.rho)):.6g}, the conversion of the "
                     f"budget{' left' if self.chosen else ''} once, of which the parent view takes "
                     f"{float(self.rho[0]):.6g} and the joined view {float(self.rho[1]):.6g} (docs/privacy.md §12, "
                     "Theorem 12.3)")
        if self.chosen is None:
            return views
        return (f"the choice of k first (pure epsilon {self.choice_epsilon:.6g}), then {views}, by basic "
                "composition (docs/privacy.md §12, \"Choosing k privately\")")

    def to_dict(self) -> dict[str, Any]:
        """The release (safe to publish): what each view cost and the public rules."""
        link = self.link
        choice = unit_choice(self.chosen)
        return {
            "tables": [link.parent, link.child], "link": link.describe(),
            "privacy_unit": f"{link.parent}.{link.key}", "max_rows_per_unit": self.k,
            **({} if choice is None else {"max_rows_per_unit_choice": {
                **choice.to_dict(), "epsilon": self.choice_epsilon,
                "candidates": candidates_text(self.chosen.candidates),
                "rows_per_unit": f"the {link.child} rows of each {link.parent}.{link.key}, before bounding"}}),
            "relation": "add-remove of one parent key with its parent row and all its child rows",
            "composition": self.composition(),
            "epsilon_budget": self.epsilon_budget, "delta_budget": self.delta_budget,
            "epsilon_spent": self.epsilon_spent, "delta_spent": self.delta_spent,
            "rho": None if self.rho is None else {"parent": str(self.rho[0]), "joined": str(self.rho[1]),
                                                  "total": str(sum(self.rho))},
            "rules": [f"one row kept, at random, of a {link.parent}.{link.key} held by several rows",
                      f"rows of {link.child} whose {link.foreign_key} is missing or matches no {link.parent} row "
                      "are dropped",
                      f"at most {self.k} rows of {link.child} kept per {link.parent} row, at random",
                      "keys written fresh: 1..N for parents, the parent's key for each child"],
            "views": {"parent": self.parent.to_dict(), "joined": self.joined.to_dict()},
        }

    def summary(self) -> str:
        """A few lines for the terminal, from the release only."""
        spent = f"epsilon={self.epsilon_spent:.6g}" + ("" if self.delta_spent is None
                                                        else f", delta={self.delta_spent:.3g}")
        how = "basic composition of the two views" if self.rho is None else "one zCDP filter for both views"
        chosen = "" if self.chosen is None else f", k chosen privately for epsilon={self.choice_epsilon:.6g}"
        return (f"two linked tables ({self.link.describe()}): spent {spent} by {how}; privacy unit: one "
                f"{self.link.parent}.{self.link.key} with all its {self.link.child} rows (at most {self.k} kept"
                f"{chosen})")


@dataclass
class LinkedResult:
    """Two synthetic tables by name, the one release's report and the two released models."""

    tables: dict[str, pd.DataFrame]
    report: LinkedReport
    model: LinkedModel


def _below(value: Fraction) -> float:
    """A float at most ``value`` (the runs read their budgets as floats, rounded down again, §2.6)."""
    return float(round_down(float(value), None))


def _shares(config: SynthesisConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parent view's and the joined view's ``epsilon`` and ``delta``: public shares (:data:`PARENT_SHARE` to
    the parent view, the rest to the joined view), each rounded down.  Each view's domain steps ahead of its
    filter take their fixed parts of its share; under pure DP (no filter) each view spends its share."""
    epsilon = as_epsilon(config.epsilon)
    delta = as_delta(config.delta) if config.delta else None
    parent = dict(epsilon=_below(epsilon * PARENT_SHARE), delta=None if delta is None else _below(delta * PARENT_SHARE))
    joined = dict(epsilon=_below(epsilon - Fraction(parent["epsilon"])),
                  delta=None if delta is None else _below(delta - Fraction(parent["delta"])))
    return parent, joined


def one_filter(config: SynthesisConfig, plans: tuple[Plan, Plan]) -> tuple[Fraction, Fraction] | None:
    """The parent view's and the joined view's ``rho`` in one zCDP filter (docs/privacy.md §12, Theorem 12.3):
    the conversion (§8.5), once, of the user's budget less what both views' domain steps spend ahead of their
    filters or reserve, split by :data:`PARENT_SHARE`.  None where the views compose by adding their shares: a
    view's method has no filter (pure DP, the game), or the joined view spends purely ahead of its filter (it would
    sit between the two filters).  Public inputs only: the configuration and the plans."""
    parts = [plan.method.converted_budget(plan.method_plan) for plan in plans]
    if None in parts:
        return None
    ahead = [(budget(plan.config)[0] - e, budget(plan.config)[1] - d) for plan, (e, d) in zip(plans, parts)]
    if ahead[1][0]:
        return None
    rho = rho_for_dp(as_epsilon(config.epsilon) - sum(e for e, _ in ahead),
                     as_delta(config.delta) - sum(d for _, d in ahead))
    return rho * PARENT_SHARE, rho - rho * PARENT_SHARE


def _with_count(options: dict[str, Any], link: Link, k: int) -> dict[str, Any]:
    """The parent table's options with its count of children ``m`` added as the public categories ``0..k``."""
    given = options.get("schema")
    count = Attribute(link.count_column, "categorical", categories=tuple(map(str, count_categories(k))),
                      dtype="int64")
    if given is not None:
        schema = given if isinstance(given, Schema) else Schema.load(given)
        return {**options, "schema": replace(schema, attributes=(*schema.attributes, count))}
    return {**options, "categories": {**(options.get("categories") or {}), link.count_column: count_categories(k)},
            "dtypes": {**(options.get("dtypes") or {}), link.count_column: "int64"}}


def released_columns(parent: Schema, link: Link) -> tuple[str, ...]:
    """The joined view's parent columns (renamed, ``m`` among them): no marginal over them alone is measured there,
    since the parent view answers those at sensitivity 1 (docs/privacy.md §12 step 2)."""
    return tuple(link.joined_name(a.name) for a in parent.attributes)


def view_schema(frame: pd.DataFrame, config: SynthesisConfig) -> Schema:
    """A view's public schema as its run builds it (keys left out); a placeholder for every domain still to
    learn or discretise: what a view is planned on before any private step (sizes of the plan only)."""
    return resolve_schema(frame, config.schema, [], **config.schema_options())


def stand_in(schema: Schema, plan: Plan) -> Schema:
    """For planning only: ``schema`` with each domain the parent view will learn given its placeholder (one label;
    the plan's most cells, docs/privacy.md §10.1, §10.3), as public: the joined view's parent columns before the
    parent view has released them."""
    placed = partition.placeholder_schema(schema) if schema.to_learn else schema
    return placed.with_placeholder_cells(plan.stage.max_cells or 1) if schema.to_discretise else placed


def checked(run: Any, planned: tuple[Fraction, Fraction] | None) -> Any:
    """``run``, after checking that it converted what its view was planned to (an internal error otherwise: both
    are functions of public inputs)."""
    plan = run.plan
    if planned is not None and plan.method.converted_budget(plan.method_plan) != planned:
        raise RuntimeError(f"a linked view's run took {plan.method.converted_budget(plan.method_plan)} into its "
                           f"filter, not the planned {planned}")
    return run


def plan_views(budget_config: SynthesisConfig, base: SynthesisConfig, per_table: dict[str, dict[str, Any]],
               link: Link, k: int, families: Families) -> Views:
    """Both views planned at ``k`` on the public schemas of ``families``' parent view and child rows (public inputs
    only: every refusal of either plan), each view at its share of ``budget_config``'s budget (docs/privacy.md
    §12, "Planning first"); ``base`` holds the options common to both tables, ``per_table`` each table's own."""
    parent_share, joined_share = _shares(budget_config)
    parent_config = replace(base, **parent_share, **_with_count(per_table[link.parent], link, k), engine="pandas",
                            scheduler=None)  # the parent view is in memory (one row per parent)
    child_config = replace(base, **per_table[link.child], n_rows=None)
    parent_schema = view_schema(parent_view(families, link), parent_config)
    child_schema = view_schema(families.children, child_config)
    joined_config = replace(base, **joined_share, privacy_unit=link.foreign_key, max_rows_per_unit=k, n_rows=None,
                            missing=None)
    released = released_columns(parent_schema, link)
    parent_plan = make_plan(parent_config, parent_schema)
    placeholder = joined_schema(stand_in(parent_schema, parent_plan), child_schema, link)
    plans = (parent_plan, make_plan(replace(joined_config, schema=placeholder), placeholder,
                                    view=ViewInputs(released_columns=released)))
    return Views(parent_config, joined_config, parent_schema, child_schema, plans, released)


def choose_k(tables: Any, config: SynthesisConfig, plan_at: Callable[[int, Families], Views], link: Link,
             keys: tuple[np.ndarray, np.ndarray], ledger: Ledger, rng: PrivateRandom) -> ChosenBound:
    """``max_rows_per_unit="auto"``: ``k`` chosen privately over the families, after every refusal of both views at
    every candidate (docs/privacy.md §12, "Choosing k privately"), charged to ``ledger`` ahead of everything."""
    families = unbounded_families(tables[link.parent], tables[link.child], link, *keys)
    parent_view(families, link), joined_view(families, link)  # refuse clashing names first
    with said_again():  # the views' runs give the owner's warnings of these plans and checks, once
        views = candidate_views(lambda k: plan_at(k, at_most(families, k)))
        check_candidates(families, link, views)
    return choose_rows_per_unit(families.m, candidates=tuple(views), rng=rng, ledger=ledger, relation=config.relation,
                                epsilon=ledger.epsilon_budget * AUTO_EPSILON_SHARE)


def synthesize_linked(tables: Any, config: SynthesisConfig, run_view: Callable[..., Any],
                      engine: DaskEngine | None = None) -> LinkedResult:
    """Release two linked tables as one release (docs/privacy.md §12): refusals first, then (``"auto"``) the private
    choice of ``k`` after every refusal of both views at every candidate, bounding, both views' plans (every
    refusal of either before any private step), the parent view's run, the joined view's run, and the pair drawn
    from the released models.

    ``run_view(frame, config, engine=..., rng=..., view=...)`` is the single-table pipeline up to its release
    (:func:`synthdp.api.run_release`), run once per view with a child stream of the linked run's generator and what
    the linked run fixed for the view (:class:`~synthdp.plan.ViewInputs`: its share of the one filter; the parent
    columns the joined view does not measure alone).  No view draws records of its own: each view's checks, owner's
    warnings and ``rows_written`` read that view of the pair drawn from both models, the tables returned.

    Under ``engine='dask'`` the child table stays in its files (:mod:`synthdp.linked.files`; ``engine``: the Dask
    engine its passes run on, else the configuration's): the same views are counted, the same release made."""
    if config.links is None:
        raise InputError("a dict of tables is released as two linked tables: give links={'child.column': "
                         "'parent.column'}, e.g. {'orders.customer_id': 'customers.customer_id'}")
    tables = linked_tables(tables, config)
    link = read_link(tables, config.links, config.keys)
    on_files = isinstance(tables[link.child], ChildFiles)
    per_table = split_options(config.to_dict(), link)
    dask = (engine or DaskEngine.from_config(config)) if on_files else None
    if on_files:  # headers only: every file holds every column of the child's public schema
        dask = check_child_files(tables[link.child], per_table[link.child].get("schema"), link, dask)
    base = replace(config, links=None, keys=None, max_rows_per_unit=None, **{name: None for name in TABLE_OPTIONS})
    rng = PrivateRandom(config.random_state)
    keys = bounding_key(rng), bounding_key(rng)
    epsilon, delta = budget(config)
    ledger = Ledger(epsilon, delta or Fraction(0))  # the choice of k's, the one spend ahead of both views
    chosen, budget_config = None, config
    finished = [ledger]  # the ledgers charged so far: a refusal or an interrupt states them all (§10.1)
    with (dask.on_one_cluster() if on_files else nullcontext()) as dask, stating_spend(finished):
        if config.max_rows_per_unit == "auto":  # the first private step; the views share what is left (§12)
            budget_config = replace(config, epsilon=_below(epsilon - epsilon * AUTO_EPSILON_SHARE))
            plan_at = partial(plan_views, budget_config, base, per_table, link)
            chosen = choose_k(tables, config, plan_at, link, keys, ledger, rng.spawn())
        k = config.max_rows_per_unit if chosen is None else chosen.k
        if on_files:  # the child's rows stay in its files: each kept parent's m from a pass over its foreign key
            parent_columns = [*(c for c in tables[link.parent].columns if c != link.key), link.count_column]
            check_joined_names(parent_columns, link, tables[link.child].columns)  # names first, before any pass
            families = families_on_files(tables[link.parent], tables[link.child], link, k, keys[0], dask)
            joined_engine = joined_on_files(families, tables[link.child], link, k, keys[1], dask)
            parents, joined = parent_view(families, link), tables[link.child].source
            children = joined
        else:
            families = bound_families(tables[link.parent], tables[link.child], link, k, *keys)
            parents, joined = parent_view(families, link), joined_view(families, link)  # refuse clashing names first
            joined_engine, children = None, families.children
        if not families.m.any():  # else each view's run would refuse an empty table, without saying why
            raise InputError(f"no row of table {link.child!r} has a {link.foreign_key} that a row of "
                             f"{link.parent}.{link.key} holds ({families.orphans} without one, or with one no parent "
                             "holds): check the link, and that both columns write each key the same way")
        views = plan_views(budget_config, base, per_table, link, k, families)
        plans = views.plans  # both views planned (and refused) before any private step
        shares = one_filter(budget_config, plans) or (None, None)
        converted = [plan.method.converted_budget(plan.method_plan) for plan in plans]
        check_view(children, views.children, plans[1], joined_engine)  # the kept child rows, where they are
        warn_owner(families, link, k)
        parent_run = checked(run_view(parents, views.parent_config, rng=rng.spawn(), view=ViewInputs(shares[0])),
                             converted[0])
        finished.append(parent_run.ledger)
        schema = joined_schema(parent_run.schema, views.children, link)
        joined_run = checked(run_view(joined, replace(views.joined_config, schema=schema), engine=joined_engine,
                                      rng=rng.spawn(), view=ViewInputs(shares[1], views.released)), converted[1])
        finished.append(joined_run.ledger)
        drawn = LinkedModel(link, k, parent_run.model, joined_run.model).draw_views(
            parent_run.size, rng.spawn().numpy_generator())  # the pair, from the two released models (step 4)
        parent_result, joined_result = parent_run.result(drawn[0]), joined_run.result(drawn[1])  # checks of the pair
    model = LinkedModel(link, k, parent_result.model, joined_result.model)
    report = LinkedReport(link, k, parent_result.report, joined_result.report, float(config.epsilon),
                          float(config.delta) if config.delta else None, None if shares[0] is None else shares,
                          chosen)
    return LinkedResult(model.tables(*drawn), report, model)
