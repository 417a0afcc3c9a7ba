"""The user's parameters: one table of rules, and the neighbouring relation.

The options are declared once, in :class:`synthdp.config.SynthesisConfig`
(what each means, its group, its default); each has exactly one rule here, in
:data:`RULES` (name -> test -> message, and the choices of a choice option),
checked before any data are read.  The table sits in the core layer so that
the layers below the driver can use it: the game checks the few parameters it
receives directly with the same rules.  Converting epsilon and delta to exact rationals is the job of
:func:`synthdp.accounting.ledger.as_epsilon` / ``as_delta``, the one place
where that happens (docs/privacy.md §2.6).

The table sits in the core layer so that every layer above it can use it.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Callable, Mapping

from synthdp.core.errors import InputError


class Relation(StrEnum):
    """The neighbouring relation of differential privacy (docs/privacy.md §1.3).

    A ``str`` enum, so ``Relation.ADD_REMOVE == "add-remove"`` and the values
    print and serialise as their text.  Under add/remove the number of records
    ``n`` is private; under replace-one it is public.
    """

    ADD_REMOVE = "add-remove"
    REPLACE_ONE = "replace-one"


#: Largest number of game rounds accepted: each round solves ``N`` data-player problems and one private
#: selection, so more than this would run for days (and the per-round budget would be tiny).
MAX_ROUNDS = 100_000
#: Largest resample asked of ``n_rows``: the table is held in memory (about 8 bytes per cell).
MAX_ROWS = 100_000_000
#: Largest epsilon accepted (docs/privacy.md §1.9): above it ``e^epsilon`` (about 10^43) promises nothing, the
#: noise no longer hides a record, and the transfer theorem's figures overflow.
MAX_EPSILON = 100
#: Largest delta accepted under add/remove, where ``n`` is private and the usual rule ``delta <= 1/n`` cannot be
#: checked: a mechanism may publish a record outright with probability delta, so more than one in a thousand
#: is not a privacy guarantee for any table (replace-one refuses ``delta > 1/n`` with its public ``n``).
MAX_DELTA_ADD_REMOVE = 1e-3
#: Largest ``max_rows_per_unit``: every noise scale grows by it (docs/privacy.md §10.6), so far beyond this the
#: release would be noise.
MAX_ROWS_PER_UNIT = 10_000
#: Largest seed accepted (numpy's SeedSequence takes any non-negative integer; 128 bits is plenty).
MAX_SEED = 2**128 - 1


def is_real(value: Any) -> bool:
    """A real number (Python or numpy int, float, Fraction), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and not _is_numpy_bool(value)


def _is_numpy_bool(value: Any) -> bool:
    return type(value).__name__ == "bool_" and type(value).__module__ == "numpy"


def is_integer(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and not _is_numpy_bool(value)


def _finite(value: Any) -> bool:
    return is_real(value) and math.isfinite(float(value))


def positive_number(value: Any) -> bool:
    return _finite(value) and value > 0


def _optional(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or test(value)


def _integer_in(lo: int, hi: int | None = None) -> Callable[[Any], bool]:
    return lambda value: is_integer(value) and lo <= value and (hi is None or value <= hi)


def _choice(*values: str) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and value in values


def choice(values: tuple[str, ...], message: str) -> "Rule":
    """The rule of an option that takes one of ``values`` (``{choices}`` in ``message`` lists them)."""
    return Rule(_choice(*values), message.replace("{choices}", str(list(values))), choices=tuple(values))


def _strings(value: Any) -> bool:
    return not isinstance(value, str) and all(isinstance(v, str) for v in value)


def _names(value: Any) -> bool:
    """A collection of column names (a list, tuple or set), not one string."""
    return not isinstance(value, (str, bytes, Mapping)) and all(v is not None for v in value)


def _per_column(value: Any) -> bool:
    """A mapping ``{column: setting}`` (the settings are checked where the schema is built)."""
    return isinstance(value, Mapping)


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


@dataclass(frozen=True)
class Rule:
    """One parameter's test and the message shown when it fails (``{name}`` and ``{value!r}`` filled in)."""

    test: Callable[[Any], bool]
    message: str
    #: The accepted values of a choice option (the CLI offers them), else None.
    choices: tuple[str, ...] | None = None
    #: Rules checked first, each with its own message (a value of the wrong kind is told so before a range).
    first: tuple["Rule", ...] = ()

    def check(self, name: str, value: Any) -> Any:
        """``value`` if it passes, else :class:`InputError` naming ``name``."""
        for rule in self.first:
            rule.check(name, value)
        try:
            ok = bool(self.test(value))
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InputError(self.message.format(name=name, value=value))
        return value


#: Query players of the game; ``auto`` chooses among them (:mod:`synthdp.plan`).
QUERY_PLAYERS = ("auto", "rspm", "prsma", "prsma-exact", "exponential", "noisy-max")
#: What the game's query player answers (docs/privacy.md §4.1 and the §4.5 variant).
RESPONSES = ("round", "union")
#: The data player's perturbations (:class:`synthdp.methods.game.algorithm.FTPLDataPlayer`).
FTPL_NOISES = ("two-sided", "one-sided")
#: Counting engines (:mod:`synthdp.engines`): in memory, or part by part on a Dask cluster.
ENGINES = ("pandas", "dask")
#: How numeric columns come back: a value drawn inside the released cell, or the cell's label.
NUMERIC_OUTPUTS = ("label", "uniform")
#: How the cells of a bounded numeric column without public bins or cuts are made (docs/privacy.md §10.3).
DISCRETISATIONS = ("privtree", "equal-width")
_BOOLEAN = "{name} must be True or False, got {value!r}"

#: One rule per option of :class:`synthdp.config.SynthesisConfig`, in its groups' order (a test keeps them equal).
RULES: dict[str, Rule] = {
    # privacy
    "epsilon": Rule(lambda v: v <= MAX_EPSILON,
                    f"{{name}} must be at most {MAX_EPSILON}, got {{value!r}}: above {MAX_EPSILON}, e^epsilon "
                    "promises nothing and the noise no longer hides anyone (typical budgets are 0.1 to 10)",
                    first=(Rule(positive_number, "{name} must be a positive finite number (the privacy budget; "
                                                 "typical budgets are 0.1 to 10), got {value!r}"),)),
    "delta": Rule(_optional(lambda v: _finite(v) and 0 <= v < 1),
                  "{name} must be in [0, 1), with None or 0 for pure DP; got {value!r}"),
    "relation": choice(tuple(r.value for r in Relation),
                       "{name} must be one of {choices} (neighbouring relation), got {value!r}"),
    "privacy_unit": Rule(_optional(lambda v: isinstance(v, str) and v.strip() != ""),
                         "{name} (CLI: --privacy-unit) must be the name of the column that identifies a person (the "
                         "privacy unit), or None for one row per person; got {value!r}"),
    "max_rows_per_unit": Rule(_optional(lambda v: v == "auto" or _integer_in(1, MAX_ROWS_PER_UNIT)(v)),
                              f"{{name}} (CLI: --max-rows-per-unit) must be an integer in 1..{MAX_ROWS_PER_UNIT:,}: "
                              "the public bound k on the rows kept per privacy unit (every noise scale grows by k), "
                              "or 'auto' to choose it privately; got {value!r}"),
    "links": Rule(_optional(lambda v: isinstance(v, Mapping) and all(isinstance(x, str) for kv in v.items()
                                                                       for x in kv)),
                  "{name} must map 'child.column' to 'parent.column', e.g. {{'orders.customer_id': "
                  "'customers.customer_id'}}, or be None for one table; got {value!r}"),
    "keys": Rule(_optional(lambda v: isinstance(v, Mapping) and all(isinstance(x, str) for kv in v.items()
                                                                      for x in kv)),
                 "{name} must map a table's name to its own key column, e.g. {{'orders': 'order_id'}}, or be None; "
                 "got {value!r}"),
    "random_state": Rule(_optional(_integer_in(0, MAX_SEED)),
                         "{name} (CLI: --seed) must be a non-negative integer seed (for experiments), or None for a "
                         "release; got {value!r}"),
    # method
    "query_class": Rule(lambda v: isinstance(v, str) and v.strip() != "" or callable(getattr(v, "separator", None)),
                        "{name} (CLI: --queries) must be a query class such as 'marginals:3' or 'conjunctions', or "
                        "a QueryClass object; got {value!r}"),
    "method": Rule(lambda v: isinstance(v, str) and v.strip() != "",
                   "{name} must be the name of a method ('auto', 'measure', 'game', ...: the registry's, checked "
                   "against it when the run starts), got {value!r}"),
    "measure_options": Rule(_optional(lambda v: type(v).__name__ == "MeasureOptions"),
                            "{name} must be select-measure-estimate's settings, synthdp.MeasureOptions(...), or None; "
                            "got {value!r}"),
    # game
    "rounds": Rule(_optional(_integer_in(1, MAX_ROUNDS)),
                   f"{{name}} must be a positive integer of at most {MAX_ROUNDS:,} (each round solves N data-player "
                   "problems and one private selection: more would run for days), or None; got {value!r}"),
    "epsilon_per_round": Rule(_optional(positive_number),
                              "{name} must be a finite number > 0 or None, got {value!r}"),
    "burn_in": Rule(_optional(lambda v: _finite(v) and 0 <= v < 1),
                    "{name} must be a fraction in [0, 1) or None, got {value!r}"),
    "query_player": choice(QUERY_PLAYERS, "unknown query player {value!r}; choose one of {choices}"),
    "oracle": Rule(lambda v: isinstance(v, str), "{name} must be an oracle name (e.g. 'auto', 'exact', 'cpsat'), "
                   "got {value!r}"),
    "samples_per_round": Rule(_optional(_integer_in(1)), "{name} must be a positive integer or None, got {value!r}"),
    "time_limit": Rule(_optional(positive_number),
                       "{name} must be a number of seconds > 0 or None, got {value!r}"),
    "resolution": Rule(_integer_in(1), "{name} must be a positive integer, got {value!r}"),
    "ftpl_theta": Rule(positive_number, "{name} must be a finite number > 0, got {value!r}"),
    "ftpl_noise": choice(FTPL_NOISES, "{name} (the data player's FTPL noise) must be one of {choices}, got {value!r}"),
    "respond_to": choice(("auto", *RESPONSES), "{name} must be one of {choices}, got {value!r}"),
    "prsma_max_calls": Rule(_integer_in(1), "{name} must be a positive integer, got {value!r}"),
    "work_limit": Rule(_optional(positive_number), "{name} must be > 0 or None, got {value!r}"),
    "data_work_limit": Rule(_optional(positive_number), "{name} must be > 0 or None, got {value!r}"),
    "insist": Rule(_boolean, _BOOLEAN),
    # columns and schema
    "schema": Rule(lambda v: v is None or isinstance(v, (str, os.PathLike)) or hasattr(v, "domain"),
                   "{name} must be a Schema, the path of a schema file, or None; got {value!r}"),
    "categorical": Rule(_optional(_names), "{name} must be a list of column names or None, got {value!r}"),
    "bounds": Rule(_optional(_per_column), "{name} must be a mapping {{column: (lo, hi)}} or None, got {value!r}"),
    "bins": Rule(_optional(_per_column), "{name} must be a mapping {{column: number of bins}} or None, got {value!r}"),
    "cuts": Rule(_optional(_per_column), "{name} must be a mapping {{column: [cut points]}} or None, got {value!r}"),
    "discretise": choice(DISCRETISATIONS, "{name} must be 'privtree' (cells learned privately, docs/privacy.md "
                         "§10.3) or 'equal-width', got {value!r}"),
    "datetimes": Rule(_optional(lambda v: _per_column(v) or _names(v)),
                      "{name} must be a list of column names, a mapping {{column: strptime format}}, or None; "
                      "got {value!r}"),
    "learn_bounds": Rule(_optional(lambda v: _per_column(v) or _names(v)),
                         "{name} must be a list of column names, a mapping {{column: 'int64' or 'float64'}}, or None; "
                         "got {value!r}"),
    "decimals": Rule(_optional(_per_column), "{name} must be a mapping {{column: decimals}} or None, got {value!r}"),
    "dtypes": Rule(_optional(lambda v: _per_column(v) and all(isinstance(e, str) for e in v.values())),
                   "{name} must be a mapping {{column: dtype name}} (e.g. {{'age': 'int64'}}) or None, got {value!r}"),
    "categories": Rule(_optional(_per_column),
                       "{name} must be a mapping {{column: [category, ...]}} or None, got {value!r}"),
    "nullable": Rule(_optional(_names), "{name} must be a list of column names or None, got {value!r}"),
    "missing": Rule(_optional(_strings), "{name} must be a list of strings (tokens meaning 'missing', e.g. ['?']) "
                    "or None, got {value!r}"),
    "other": Rule(_optional(lambda v: isinstance(v, str) and v.strip() != ""),
                  "{name} (CLI: --other) must be a label (e.g. 'other') or None, got {value!r}"),
    "unsafe_public_categories": Rule(_boolean, _BOOLEAN),
    "clip": Rule(_boolean, _BOOLEAN),
    "point_masses": Rule(_boolean, _BOOLEAN),
    "cells_from_total": Rule(_boolean, _BOOLEAN),
    "max_categories": Rule(_integer_in(1), "{name} must be a positive integer, got {value!r}"),
    "derived": Rule(_optional(lambda v: _per_column(v) and all(isinstance(e, str) for e in v.values())),
                    "{name} must be a mapping {{column: 'date.year' or 'a - b'}} or None, got {value!r}"),
    # engine
    "engine": choice(ENGINES, "unknown engine {value!r}; choose one of {choices}"),
    "scheduler": Rule(_optional(lambda v: isinstance(v, str) and v.strip() != ""),
                      "{name} must be the address of a Dask scheduler (e.g. 'tcp://host:8786') or None, got {value!r}"),
    # output
    "n_rows": Rule(_optional(_integer_in(1, MAX_ROWS)),
                   f"{{name}} must be a positive integer of at most {MAX_ROWS:,} (the table is built in memory; draw "
                   "larger samples in batches with Synthesizer.sample), or None; got {value!r}"),
    "numeric": choice(NUMERIC_OUTPUTS, "{name} must be 'label' or 'uniform', got {value!r}"),
    "progress": Rule(_boolean, _BOOLEAN),
    "strict": Rule(_boolean, _BOOLEAN),
}

#: Rules of values the plan resolves from an option, which lower layers receive: the game's ``response`` is
#: ``respond_to`` without ``"auto"``.
RESOLVED_RULES: dict[str, Rule] = {
    "response": choice(RESPONSES, "{name} must be one of {choices}, got {value!r}"),
}


def check_delta_ceiling(delta: Any, relation: Any, n_rows: int | None = None) -> str | None:
    """Refuse a ``delta`` above the add/remove ceiling; warn above ``1/n_rows`` (docs/privacy.md §1.9).

    Only public quantities enter: the fixed :data:`MAX_DELTA_ADD_REMOVE` and the
    user's ``n_rows`` (under add/remove the true ``n`` is private; replace-one
    checks ``delta <= 1/n`` with its public ``n`` once the table is counted).
    """
    if delta is None or relation != Relation.ADD_REMOVE:
        return None
    if delta > MAX_DELTA_ADD_REMOVE:
        raise InputError(f"delta={delta!r} is above {MAX_DELTA_ADD_REMOVE:g}, the most synthdp accepts under "
                         "add-remove neighbours (n is private there, so delta <= 1/n cannot be checked); take a public "
                         "upper bound N on the number of rows and use delta <= 1/N^2 (e.g. 1e-9)")
    if n_rows is not None and delta > 1 / n_rows:
        return (f"delta={delta!r} is above 1/n_rows = {1 / n_rows:.3g}: a mechanism may then publish a record "
                "outright; choose delta well below 1/n (1/n^2 is customary)")
    return None


def check(name: str, value: Any) -> Any:
    """``value`` if it passes the rule of ``name`` (:data:`RULES`, :data:`RESOLVED_RULES`), else :class:`InputError`."""
    return (RULES.get(name) or RESOLVED_RULES[name]).check(name, value)


def check_all(values: Mapping[str, Any]) -> None:
    """Check every entry of ``values`` that has a rule (others are left to their own checks)."""
    for name, value in values.items():
        if name in RULES:
            check(name, value)
