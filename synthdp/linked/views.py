"""Step 2 of docs/privacy.md §12: the parent view (one row per parent, with its kept children ``m``) and the
joined view (one row per kept child, with its parent's attributes and ``m``), and the joined view's schema, whose
parent columns take the domains the parent view's release learned (post-processing: never learned twice).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.linked.bounding import Families
from synthdp.linked.links import Link

__all__ = ["count_categories", "joined_schema", "joined_view", "parent_view"]


def count_categories(k: int) -> list[int]:
    """The public domain of ``m``: ``0..k`` (docs/privacy.md §12 step 2)."""
    return list(range(k + 1))


def parent_view(families: Families, link: Link) -> pd.DataFrame:
    """Each kept parent's attributes and its number of kept children, column :attr:`Link.count_column`."""
    if link.count_column in families.parents.columns:
        raise InputError(f"table {link.parent!r} has a column {link.count_column!r}, the name its count of "
                         f"{link.child} takes in the parent model; rename that column")
    return families.parents.assign(**{link.count_column: families.m})


def joined_view(families: Families, link: Link) -> pd.DataFrame:
    """Each kept child row with its parent's attributes (as :meth:`Link.joined_name`) and ``m`` appended, and the
    parent's key text as column ``link.foreign_key``: the joined run's privacy unit (at most ``k`` rows each)."""
    appended = parent_view(families, link).iloc[families.parent_of].reset_index(drop=True)
    appended.columns = [link.joined_name(c) for c in appended.columns]
    clash = sorted(set(appended.columns) & set(map(str, families.children.columns)))
    if clash:
        raise InputError(f"table {link.child!r} has column(s) {clash}, the names its parent's columns take in the "
                         "joined view; rename them")
    unit = pd.Series(families.keys[families.parent_of], name=link.foreign_key, dtype=object)
    return pd.concat([families.children, appended, unit], axis=1)


def joined_schema(parent: Schema, child: Schema, link: Link) -> Schema:
    """The joined view's schema: the child's columns as its public schema leaves them (to learn or public), then
    every column of the parent view's *released* schema, renamed, as public (docs/privacy.md §12 step 3)."""
    appended = tuple(replace(a, name=link.joined_name(a.name)) for a in parent.attributes)
    tokens = tuple(dict.fromkeys((*child.missing_values, *parent.missing_values)))
    return Schema(child.attributes + appended, missing_values=tokens, derived=child.derived)
