"""Steps 3 and 4 of docs/privacy.md §12: the parent view and the joined view released by the single-table
pipeline, as one release (Theorem 12.3), then the pair of tables drawn from the two released models.

The parent view runs with no unit (one row per parent) at :data:`PARENT_SHARE` of the budget; the joined view with
the parent key as its unit and ``k`` rows per unit at the rest, its parent columns given the domains the parent
view released.  The two runs compose by basic composition (docs/privacy.md §12, "How the budget is split").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable

import pandas as pd

from synthdp.accounting.ledger import as_delta, as_epsilon, round_down
from synthdp.config import SynthesisConfig
from synthdp.core.attribute import Attribute
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema, resolve_schema
from synthdp.linked.bounding import Families, bound_families, warn_owner
from synthdp.linked.generation import LinkedModel
from synthdp.linked.links import TABLE_OPTIONS, Link, read_link, split_options
from synthdp.linked.views import count_categories, joined_schema, joined_view, parent_view
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.units import bounding_key
from synthdp.report import Report

__all__ = ["PARENT_SHARE", "LinkedReport", "LinkedResult", "synthesize_linked"]

#: The public share of epsilon and of delta the parent view takes; the joined view, whose noise is k times larger
#: and which holds the child columns, takes the rest (docs/privacy.md §12).
PARENT_SHARE = Fraction(1, 3)


@dataclass(frozen=True)
class LinkedReport:
    """The one release of two linked tables: the unit, ``k``, the public rules, each view's release and the total
    spent by basic composition (docs/privacy.md §12, "What the release says").  Never a count of orphans, merged
    keys or rows cut."""

    link: Link
    k: int
    parent: Report
    joined: Report

    @property
    def epsilon_spent(self) -> float:
        return self.parent.epsilon_spent + self.joined.epsilon_spent

    @property
    def delta_spent(self) -> float | None:
        if self.parent.delta_spent is None:
            return None
        return self.parent.delta_spent + self.joined.delta_spent

    def to_dict(self) -> dict[str, Any]:
        """The release (safe to publish): what each view cost and the public rules."""
        link = self.link
        return {
            "tables": [link.parent, link.child], "link": link.describe(),
            "privacy_unit": f"{link.parent}.{link.key}", "max_rows_per_unit": self.k,
            "relation": "add-remove of one parent key with its parent row and all its child rows",
            "composition": "basic composition of the parent view's and the joined view's releases "
                           "(docs/privacy.md §12, Theorem 12.3)",
            "epsilon_budget": self.parent.epsilon_budget + self.joined.epsilon_budget,
            "delta_budget": None if self.parent.delta_budget is None
            else self.parent.delta_budget + self.joined.delta_budget,
            "epsilon_spent": self.epsilon_spent, "delta_spent": self.delta_spent,
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
        return (f"two linked tables ({self.link.describe()}): spent {spent} by basic composition of the parent "
                f"view and the joined view; privacy unit: one {self.link.parent}.{self.link.key} with all its "
                f"{self.link.child} rows (at most {self.k} kept)")


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
    """The parent view's and the joined view's ``epsilon`` and ``delta``: public shares, each rounded down, whose
    sum is at most the budget."""
    epsilon = as_epsilon(config.epsilon)
    delta = as_delta(config.delta) if config.delta else None
    parent = dict(epsilon=_below(epsilon * PARENT_SHARE), delta=None if delta is None else _below(delta * PARENT_SHARE))
    joined = dict(epsilon=_below(epsilon - Fraction(parent["epsilon"])),
                  delta=None if delta is None else _below(delta - Fraction(parent["delta"])))
    return parent, joined


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


def child_schema(families: Families, config: SynthesisConfig) -> Schema:
    """The child table's public schema (its keys left out), as one table's run would build it."""
    return resolve_schema(families.children, config.schema, [], **config.schema_options())


def synthesize_linked(tables: Any, config: SynthesisConfig, run_view: Callable[..., Any]) -> LinkedResult:
    """Release two linked tables as one release (docs/privacy.md §12): refusals first, then bounding, the parent
    view's run, the joined view's run, and the pair drawn from the released models.

    ``run_view(frame, config, rng=...)`` is the single-table pipeline (:func:`synthdp.api.synthesize`), run once
    per view with a child stream of the linked run's generator."""
    if config.links is None:
        raise InputError("a dict of tables is released as two linked tables: give links={'child.column': "
                         "'parent.column'}, e.g. {'orders.customer_id': 'customers.customer_id'}")
    link = read_link(tables, config.links, config.keys)
    per_table = split_options(config.to_dict(), link)
    base = replace(config, links=None, keys=None, max_rows_per_unit=None, **{name: None for name in TABLE_OPTIONS})
    k = config.max_rows_per_unit
    parent_share, joined_share = _shares(config)
    parent_config = replace(base, **parent_share, **_with_count(per_table[link.parent], link, k))
    child_config = replace(base, **per_table[link.child], n_rows=None)
    rng = PrivateRandom(config.random_state)
    families = bound_families(tables[link.parent], tables[link.child], link, k, bounding_key(rng), bounding_key(rng))
    parents, joined = parent_view(families, link), joined_view(families, link)  # refuse clashing names first
    children = child_schema(families, child_config)
    warn_owner(families, link, k)
    parent_run = run_view(parents, parent_config, rng=rng.spawn())
    schema = joined_schema(parent_run.schema, children, link)
    joined_config = replace(base, **joined_share, schema=schema, privacy_unit=link.foreign_key, max_rows_per_unit=k,
                            n_rows=None, missing=None)
    joined_run = run_view(joined, joined_config, rng=rng.spawn())
    model = LinkedModel(link, k, parent_run.model, joined_run.model)
    report = LinkedReport(link, k, parent_run.report, joined_run.report)
    return LinkedResult(model.draw(len(parent_run.data), rng.spawn().numpy_generator()), report, model)
