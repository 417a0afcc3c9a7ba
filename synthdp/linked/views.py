"""Step 2 of docs/privacy.md §12: the parent view (one row per parent, with its kept children ``m``) and the
joined view (one row per kept child, with its parent's attributes and ``m``), and the joined view's schema, whose
parent columns take the domains the parent view's release learned (post-processing: never learned twice); both
views as planned at one ``k`` (:class:`Views`, made by :func:`synthdp.linked.fitting.plan_views`) and the checks of
a view's rows that come before any private step.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, Iterable

import pandas as pd

from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.domains import check_thresholds
from synthdp.engines.pandas import PandasEngine
from synthdp.linked.bounding import Families
from synthdp.linked.links import Link
from synthdp.plan import Plan

__all__ = ["Views", "appended_columns", "check_joined_names", "check_view", "count_categories", "joined_schema",
           "joined_view", "parent_view", "view_tallies"]


@dataclass(frozen=True)
class Views:
    """Both views at one ``k``, planned before any private step: each view's configuration and public schema (the
    child columns' schema alone for the joined view), the two plans, and the parent columns the joined view does
    not measure alone."""

    parent_config: SynthesisConfig
    joined_config: SynthesisConfig
    parent_schema: Schema
    children: Schema
    plans: tuple[Plan, Plan]
    released: tuple[str, ...]


def count_categories(k: int) -> list[int]:
    """The public domain of ``m``: ``0..k`` (docs/privacy.md §12 step 2)."""
    return list(range(k + 1))


def parent_view(families: Families, link: Link) -> pd.DataFrame:
    """Each kept parent's attributes and its number of kept children, column :attr:`Link.count_column`."""
    if link.count_column in families.parents.columns:
        raise InputError(f"table {link.parent!r} has a column {link.count_column!r}, the name its count of "
                         f"{link.child} takes in the parent model; rename that column")
    return families.parents.assign(**{link.count_column: families.m})


def check_joined_names(parent_columns: Iterable[Any], link: Link, child_columns: Iterable[Any]) -> None:
    """Refuse a child column (``child_columns``) named as a column of the parent view (``parent_columns``: the
    parent's columns without its key, and the count column) is named in the joined view (:meth:`Link.joined_name`):
    names only, checked before any pass reads the rows."""
    clash = sorted({link.joined_name(c) for c in parent_columns} & set(map(str, child_columns)))
    if clash:
        raise InputError(f"table {link.child!r} has column(s) {clash}, the names its parent's columns take in the "
                         "joined view; rename them")


def appended_columns(families: Families, link: Link, child_columns: Iterable[Any]) -> pd.DataFrame:
    """The parent view with its columns named as the joined view names them (:meth:`Link.joined_name`), one row
    per kept parent; refused when a child column (``child_columns``) already has one of those names."""
    appended = parent_view(families, link)
    check_joined_names(appended.columns, link, child_columns)
    appended.columns = [link.joined_name(c) for c in appended.columns]
    return appended


def joined_view(families: Families, link: Link) -> pd.DataFrame:
    """Each kept child row with its parent's attributes (as :meth:`Link.joined_name`) and ``m`` appended, and the
    parent's key text as column ``link.foreign_key``: the joined run's privacy unit (at most ``k`` rows each)."""
    appended = appended_columns(families, link, families.children.columns)
    appended = appended.iloc[families.parent_of].reset_index(drop=True)
    unit = pd.Series(families.keys[families.parent_of], name=link.foreign_key, dtype=object)
    return pd.concat([families.children, appended, unit], axis=1)


def joined_schema(parent: Schema, child: Schema, link: Link) -> Schema:
    """The joined view's schema: the child's columns as its public schema leaves them (to learn or public), then
    every column of the parent view's *released* schema, renamed, as public (docs/privacy.md §12 step 3)."""
    appended = tuple(replace(a, name=link.joined_name(a.name)) for a in parent.attributes)
    tokens = tuple(dict.fromkeys((*child.missing_values, *parent.missing_values)))
    return Schema(child.attributes + appended, missing_values=tokens, derived=child.derived)


def view_tallies(rows: Any, schema: Schema, engine: Any = None) -> Tallies:
    """The tallies of a view's rows under its public ``schema``, every value checked as the view's run checks it
    (a value its public type or bounds refuse is refused, naming it): in memory, or by ``engine`` where it reads
    them (the joined view's engine on Dask, :mod:`synthdp.linked.files`).  Its warnings are given by the run,
    once."""
    engine = engine or PandasEngine()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = engine.prepare(rows)
        return engine.tally(prepared.source, schema, prepared.bounding)


def check_view(rows: Any, schema: Schema, plan: Plan, engine: Any = None) -> None:
    """A view's refusals that read its rows' values (a value its public type or bounds refuse, a threshold that
    would keep nothing of a column), taken before any view draws noise (docs/privacy.md §12, "Refusals").  Not a
    private step: the view's run repeats these checks on the same rows, and its warnings are given there, once."""
    tallies = view_tallies(rows, schema, engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_thresholds(tallies, schema, plan)
