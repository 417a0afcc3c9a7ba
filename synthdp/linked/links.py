"""The link between two tables and the options of a linked run, read and checked from public inputs only
(docs/privacy.md §12, "Refusals"): every refusal here comes before any row is read privately or anything charged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import pandas as pd

from synthdp.config import TABLE_OPTIONS
from synthdp.core.errors import InputError

__all__ = ["Link", "TABLE_OPTIONS", "read_link", "split_options"]


@dataclass(frozen=True)
class Link:
    """One parent-child pair: the child table's ``foreign_key`` column refers to the parent table's ``key`` column;
    ``child_key``, when given, is the child table's own key (an identifier, never modelled either)."""

    child: str
    foreign_key: str
    parent: str
    key: str
    child_key: str | None = None

    @property
    def count_column(self) -> str:
        """The parent view's column of kept children ``m`` (docs/privacy.md §12 step 2)."""
        return f"n_{self.child}"

    def joined_name(self, column: str) -> str:
        """The name a parent column takes in the joined view."""
        return f"{self.parent}.{column}"

    def describe(self) -> str:
        """The link as the user writes it: ``orders.customer_id -> customers.customer_id``."""
        return f"{self.child}.{self.foreign_key} -> {self.parent}.{self.key}"


def _table_column(text: Any, tables: Mapping[str, pd.DataFrame], role: str) -> tuple[str, str]:
    """``"table.column"`` split at the dot after a table's name (table and column names may hold dots too) and
    checked against ``tables``, or a refusal naming what exists."""
    if not isinstance(text, str) or "." not in text:
        raise InputError(f"links: {text!r} must name a {role} as 'table.column', e.g. 'orders.customer_id'")
    splits = [(text[:i], text[i + 1:]) for i, ch in enumerate(text) if ch == "."]
    named = [(t, c) for t, c in splits if t in tables]
    table, column = named[0] if named else splits[-1]
    if table not in tables:
        raise InputError(f"links: {text!r} names table {table!r}, which is not among the tables "
                         f"{list(tables)}; use one of their names")
    if column not in tables[table].columns:
        what = "the foreign key column" if role == "foreign key" else "the parent key column"
        raise InputError(f"links: table {table!r} has no column {column!r} ({what} {text!r}); its columns are "
                         f"{[str(c) for c in tables[table].columns]}")
    return table, column


def read_link(tables: Any, links: Any, keys: Mapping[str, str] | None = None) -> Link:
    """The one link of ``links`` (``{"child.column": "parent.column"}``) between the two tables of ``tables``
    (DataFrames, or a child left in its files, :class:`~synthdp.linked.files.ChildFiles`: anything with ``columns``);
    ``keys`` may name the child table's own key column (``{"orders": "order_id"}``).

    Refused, naming the fix: tables that are not a dict of two DataFrames, no link or more than one (only one
    parent-child pair is supported), a table or column that does not exist, a table linked to itself.
    """
    if not isinstance(tables, Mapping) or not all(isinstance(getattr(t, "columns", None), pd.Index)
                                                  for t in tables.values()):
        raise InputError("linked tables are given as a dict of DataFrames (or of their files) by name, e.g. "
                         "{'customers': c, 'orders': o}")
    if not isinstance(links, Mapping) or not links:
        raise InputError("two tables need links={'child.column': 'parent.column'}, e.g. "
                         "{'orders.customer_id': 'customers.customer_id'}")
    if len(links) > 1:
        raise InputError(f"links: {len(links)} links given ({dict(links)}); only one parent-child pair is "
                         "supported: give one link 'child.column': 'parent.column' (a cycle of links or a third "
                         "table cannot be released yet)")
    (child_text, parent_text), = links.items()
    child, foreign_key = _table_column(child_text, tables, "foreign key")
    parent, key = _table_column(parent_text, tables, "parent key")
    if child == parent:
        raise InputError(f"links: {child_text!r} -> {parent_text!r} links table {child!r} to itself (a cycle); link "
                         "a child table to a different parent table")
    if set(tables) != {child, parent}:
        raise InputError(f"tables {sorted(set(tables) - {child, parent})} are in no link; give exactly the two "
                         f"linked tables {child!r} and {parent!r}")
    link = Link(child, foreign_key, parent, key, _child_key(keys, tables, child, parent, foreign_key))
    if not [c for c in tables[child].columns if c not in {foreign_key, link.child_key}]:
        raise InputError(f"table {child!r} has no column besides its keys, so its rows hold nothing to release but "
                         f"how many each {parent!r} row has: add that count to {parent!r} as a column and release "
                         "it as one table")
    return link


def _child_key(keys: Mapping[str, str] | None, tables: Mapping[str, pd.DataFrame], child: str, parent: str,
               foreign_key: str) -> str | None:
    """The child table's own key named in ``keys``, checked (the parent's key is the link's)."""
    if not keys:
        return None
    if not isinstance(keys, Mapping) or set(keys) != {child}:
        raise InputError(f"keys= names the child table's own key column, as {{{child!r}: 'column'}} (the parent "
                         f"table {parent!r}'s key is the link's); got {keys!r}")
    column = keys[child]
    if column not in tables[child].columns or column == foreign_key:
        raise InputError(f"keys: {column!r} is not a column of table {child!r} other than its foreign key; its "
                         f"columns are {[str(c) for c in tables[child].columns]}")
    return column


def split_options(options: Mapping[str, Any], link: Link) -> dict[str, dict[str, Any]]:
    """Each table's own options (:data:`TABLE_OPTIONS`, given keyed by table name), by table.

    A table option that is not a dict keyed by the two tables' names is refused with the form to use.
    """
    per_table: dict[str, dict[str, Any]] = {link.parent: {}, link.child: {}}
    for name in TABLE_OPTIONS:
        value = options.get(name)
        if value is None:
            continue
        if not isinstance(value, Mapping) or not set(value) <= set(per_table):
            raise InputError(f"{name}= for two tables is given per table, keyed by table name, e.g. {name}="
                             f"{{{link.parent!r}: ..., {link.child!r}: ...}}; got keys "
                             f"{list(value) if isinstance(value, Mapping) else type(value).__name__}")
        for table, given in value.items():
            per_table[table][name] = given
    return per_table
