"""Conditions on a draw from the released model: rows that take given values in some columns (docs/privacy.md §10.9).

``conditions`` map a column to a value: a category of a categorical column, a
number inside a numeric column's public bounds, or None for the missing value
of a nullable column.  Each value is read through the public schema into the
code (category or cell) it lies in; the estimate is then restricted to those
codes (:meth:`GraphicalModel.given` clamps them in the junction tree, a
reweighted sample or the released records keep the records that match), so
that its draw is the model's exact conditional distribution given the cells,
and a numeric column's cell is filled with the given value itself.  Every
value is checked before anything is drawn.  Only the released model and the
public schema are read: post-processing, no privacy cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from synthdp.core.attribute import Attribute, category_label, value_kind
from synthdp.core.derived import add_derived
from synthdp.core.encoding import bound_text
from synthdp.core.errors import InputError
from synthdp.core.options import nearest
from synthdp.core.schema import Schema


@dataclass(frozen=True)
class Condition:
    """One condition read through the schema: the column's index, the code its value lies in, and the value
    (a number for a numeric column, None for the missing value)."""

    column: int
    code: int
    value: Any


def read_conditions(schema: Schema, conditions: Mapping[str, Any] | None) -> list[Condition]:
    """``conditions`` (column -> value) read through ``schema``; an unknown column, a value outside the column's
    categories or bounds, or None where the column has no missing value is an :class:`InputError` naming it."""
    if conditions is None:
        return []
    if not isinstance(conditions, Mapping):
        raise InputError(f"conditions must map columns to values, e.g. {{'region': 'N'}}, got "
                         f"{type(conditions).__name__}")
    return [_condition(schema, str(name), value) for name, value in conditions.items()]


def _condition(schema: Schema, name: str, value: Any) -> Condition:
    """The condition ``name = value`` as the column's index, the code of its cell and the value rows take;
    refused, naming the column and what to give, when the model cannot hold it."""
    if name not in schema.names:
        derived = {d.name: d for d in schema.derived}
        if name in derived:
            raise InputError(f"conditions: {name!r} is a derived column, computed from {list(derived[name].sources)}; "
                             "condition on those columns instead")
        near = nearest(name, schema.names)
        hint = f"did you mean {' or '.join(map(repr, near))}?" if near else f"the model's columns: {list(schema.names)}"
        raise InputError(f"conditions: unknown column {name!r}; {hint}")
    attr = schema[name]
    column = schema.names.index(name)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        if attr.missing_code is None:
            raise InputError(f"conditions: {name}=None asks for the missing value, but column {name!r} has none (it "
                             "is not nullable); condition on one of its values")
        return Condition(column, attr.missing_code, None)
    if attr.kind == "categorical":
        return Condition(column, _category_code(attr, value), value)
    number = _number(attr, value)
    return Condition(column, int(np.searchsorted(attr.edges[1:-1], number, side="right")), number)


def _category_code(attr: Attribute, value: Any) -> int:
    """The code of category ``value`` of ``attr``; a value outside its categories is refused with the nearest."""
    label = category_label(value)
    if label not in attr.code_of:
        near = nearest(label, attr.categories)
        shown = list(attr.categories[:10]) + (["..."] if len(attr.categories) > 10 else [])
        hint = f"did you mean {' or '.join(map(repr, near))}?" if near else f"its categories: {shown}"
        raise InputError(f"conditions: {attr.name}={value!r} is not a category of column {attr.name!r}; {hint}")
    return attr.code_of[label]


def _number(attr: Attribute, value: Any) -> float | int:
    """``value`` as a number of numeric column ``attr`` (text is read as a number), inside its public bounds."""
    if attr.is_datetime:
        raise InputError(f"conditions: column {attr.name!r} holds dates, and conditions on dates are not supported "
                         "yet; condition on other columns")
    number = _as_float(value)
    if not math.isfinite(number):
        raise InputError(f"conditions: {attr.name}={value!r} is not a number, and column {attr.name!r} is numeric; "
                         "give a number inside its bounds")
    lo, hi = attr.bounds
    if not lo <= number <= hi:
        raise InputError(f"conditions: {attr.name}={value!r} is outside the public bounds [{bound_text(attr, lo)}, "
                         f"{bound_text(attr, hi)}] of column {attr.name!r}; condition on a value inside them")
    if value_kind(attr.dtype) == "int":
        if not number.is_integer():
            raise InputError(f"conditions: {attr.name}={value!r} is not a whole number, and column {attr.name!r} "
                             "holds integers; give a whole number")
        return int(number)
    return number if attr.decimals is None else round(number, attr.decimals)  # as the column is written


def _as_float(value: Any) -> float:
    """``value`` as a float (text read as a number), NaN when it is none (a bool is no number here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, float, np.integer, np.floating)):
        return math.nan
    try:
        return float(value)
    except ValueError:
        return math.nan


def describe(conditions: list[Condition], schema: Schema) -> str:
    """The conditions as a message writes them: ``region='N' and age=99``."""
    return " and ".join(f"{schema.names[c.column]}={c.value!r}" for c in conditions)


def evidence(conditions: list[Condition]) -> dict[int, int]:
    """The codes the conditions fix, by column index."""
    return {c.column: c.code for c in conditions}


def no_mass(conditions: list[Condition], schema: Schema) -> InputError:
    """The refusal of conditions whose cells the released model gives no probability."""
    return InputError(f"the released model puts no mass on {describe(conditions, schema)}: relax a condition")


def with_values(rows: pd.DataFrame, schema: Schema, conditions: list[Condition]) -> pd.DataFrame:
    """``rows`` with each numeric condition's value in place of the value drawn inside its cell, and the derived
    columns computed again from them (docs/privacy.md §10.10); categories and missing values need nothing, their
    code is the value."""
    numbers = [c for c in conditions if c.value is not None and schema.attributes[c.column].kind == "numeric"]
    if not numbers:
        return rows
    out = rows.drop(columns=[d.name for d in schema.derived])
    for c in numbers:
        name = schema.names[c.column]
        out[name] = pd.Series(c.value, index=out.index).astype(out[name].dtype)
    return add_derived(out, schema.derived)
