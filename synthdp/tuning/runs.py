"""Running the generator as a building block of tuning (docs/privacy.md §5.1, §5.3).

Private tuning and accuracy-first call the public entry point
:func:`synthdp.api.generate_synthetic` many times on the same data, each time
at a budget fixed in advance.  This module holds what both need: checking
public inputs before any private step, one public schema shared by every run
(so every table is scored in the same encoding), exact budgets handed to the
generator without rounding up, and per-run seeds drawn from the caller's
:class:`~synthdp.mechanisms.randomness.PrivateRandom`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from numbers import Real
from typing import Any

import pandas as pd

from synthdp.api import generate_synthetic
from synthdp.engines.pandas import PandasEngine
from synthdp.config import SynthesisConfig, options_in
from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, UnknownOptionError
from synthdp.core.options import unknown_option
from synthdp.core.schema import resolve_schema
from synthdp.files.parquet import write_table
from synthdp.accounting.ledger import as_delta, as_epsilon, check_relation
from synthdp.mechanisms.units import Bounding, bounding_key
from synthdp.accounting.ledger import to_fraction_down
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.plan import make_plan

#: Keywords a configuration may not set: the tuner fixes them for every run.
#: The privacy unit's keywords: common to every run of a tuner (docs/privacy.md §10.6).
UNIT_KEYS = ("privacy_unit", "max_rows_per_unit")
FIXED_KEYS = ("epsilon", "delta", "n_rows", "random_state", "relation", "progress", "df", "query_class")
#: Keywords that would make a run's privacy conditional on solver behaviour (Mode N): refused.
UNSAFE_KEYS = ("time_limit",)
#: Schema-building options (the config's ``schema`` group): common to all runs (one public encoding), never per
#: candidate (a run given the common schema would ignore them).
SCHEMA_KEYS = options_in("schema")
#: Report fields of a run that depend on its configuration only (safe to repeat about the released run).
PUBLIC_RUN_FIELDS = ("method", "query_player", "query_player_reason", "rounds", "samples_per_round", "respond_to",
                     "burn_in_rounds", "ftpl_noise", "epsilon_per_round", "mode", "oracle", "data_oracle")
#: Seeds handed to seeded runs are uniform below this bound.
SEED_BOUND = 2**63


def check_positive(value: Any, name: str, *, upper: float | None = None) -> Fraction:
    """A finite number ``> 0`` (and ``< upper``) as an exact Fraction, else an InputError naming ``name``.

    A float is read as the decimal it prints as (``0.05`` is ``1/20``).
    """
    if isinstance(value, bool) or not isinstance(value, (Real, Fraction)) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    if upper is not None and value >= upper:
        raise InputError(f"{name} must be below {upper:g}, got {value!r}")
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def check_epsilon(value: Any, name: str) -> Fraction:
    """A privacy budget ``> 0`` by the project's one rule (:func:`~synthdp.accounting.ledger.as_epsilon`)."""
    return as_epsilon(value, name)


def check_delta(value: Any, name: str = "delta") -> Fraction:
    """``None`` (pure DP: 0) or a delta by the project's one rule (:func:`~synthdp.accounting.ledger.as_delta`)."""
    return Fraction(0) if value is None else as_delta(value, name)


def check_count(value: Any, name: str) -> int:
    """A positive integer, else a named InputError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_config(config: Any, name: str, common: bool = False) -> dict:
    """A configuration: a dict of :func:`generate_synthetic` keywords the tuner does not fix itself.

    The privacy unit (:data:`UNIT_KEYS`) may only be ``common``: every run and the score share it.
    """
    if not isinstance(config, dict):
        raise InputError(f"{name} must be a dict of generate_synthetic keyword arguments, got {config!r}")
    for key in config:
        if key in FIXED_KEYS:
            raise InputError(f"{name} sets {key!r}, which the tuner fixes for every run; remove it")
        if key in UNSAFE_KEYS:
            raise InputError(f"{name} sets {key!r}: wall-clock limits make privacy conditional on the solver "
                             "(Mode N, docs/privacy.md §3.7); use work limits or none")
        if key == "strict" and config[key]:
            raise InputError(f"{name} sets strict=True, which tuning does not apply yet (its runs are not compared "
                             "with the real table): use strict with a plain generate_synthetic run of the chosen "
                             "settings")
        if key in UNIT_KEYS and not common:
            raise InputError(f"{name} sets {key!r}: the privacy unit must be common to every run (the score "
                             "reads its bound k, docs/privacy.md §10.6); pass it with the common keywords")
        if key not in SynthesisConfig.names():
            raise UnknownOptionError(f"{name}: {unknown_option(key, SynthesisConfig.names())} (the parameters of "
                                     "generate_synthetic)")
    return dict(config)


def float_down(x: Fraction) -> float:
    """A float ``<= x`` (the nearest float, or the next one down): budgets handed on never round up."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, 0.0)


def public_settings(report: Any) -> dict:
    """The configuration-only fields of a run's report (:data:`PUBLIC_RUN_FIELDS` it has)."""
    return {f: getattr(report, f) for f in PUBLIC_RUN_FIELDS if hasattr(report, f)}


def child_seed(rng: PrivateRandom) -> int | None:
    """The seed of one generator run: ``None`` (the run's own CSPRNG) unless ``rng`` is seeded."""
    return None if rng.cryptographic else rng.randbelow(SEED_BOUND)


@dataclass
class ReleasedTable:
    """A released synthetic table (the subclasses add their report)."""

    data: pd.DataFrame

    def to_csv(self, path) -> None:
        """Write the table (a ``.csv`` name) atomically (temporary file, then rename)."""
        write_table(self.data, path, fmt="csv")


@dataclass
class Runner:
    """Runs of the generator on one table under one public schema; scores tables in that schema's encoding."""

    df: pd.DataFrame
    query_class: Any
    schema: Any
    real: AggregatedData
    relation: str
    n_out: int
    common: dict
    warnings: list[str]
    #: Rows one unit may add or remove (``max_rows_per_unit`` with a privacy unit, else 1; §10.6).
    contribution_bound: int = 1

    @classmethod
    def prepare(cls, df: pd.DataFrame, query_class: Any, *, relation: str, n_out: int, common: dict,
                rng: PrivateRandom) -> "Runner":
        """Check the public inputs and fix the public schema once, as :func:`generate_synthetic` would.

        Every column needs public categories: a domain learned privately
        (docs/privacy.md §9) would be learned anew, and differently, by each run.
        With a privacy unit the table the scores read is bounded once, first,
        with a key from ``rng`` (docs/privacy.md §10.6); each run bounds the raw
        table itself with its own key, so each run and each score is private
        for one unit (Theorem 10.61), with sensitivities for ``k`` rows.
        """
        check_relation(relation)
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
        common = check_config(common, "the common configuration", common=True)
        base = SynthesisConfig(epsilon=1.0, query_class=query_class, relation=relation,
                               **common)  # schema options and the unit, checked
        collected: list[str] = []
        raw = df
        k = base.contribution_bound  # a public k (refuses 'auto': every run and the score must share one k)
        bounding = None if base.privacy_unit is None else Bounding(base.privacy_unit, k, bounding_key(rng))
        df = PandasEngine().prepare(df, bounding).frame  # at most k rows per unit, first; text values stripped
        schema = resolve_schema(df, base.schema, collected, **base.schema_options())
        if base.missing and base.schema is not None:
            schema = replace(schema, missing_values=tuple(dict.fromkeys((*schema.missing_values, *base.missing))))
        if schema.to_learn:
            raise InputError(f"columns {list(schema.to_learn)} have no public categories; tuning needs a fully "
                             "public domain (pass categories= or a schema): learning it privately once per run "
                             "would give every run a different domain")
        common = {k: v for k, v in common.items() if k not in SCHEMA_KEYS}
        real = Encoder(schema).to_aggregated(df)
        return cls(raw, query_class, schema, real, relation, n_out, common, collected, k)

    def unit_fields(self) -> dict:
        """The privacy unit and its bound for a tuner's report (public inputs; docs/privacy.md §10.6)."""
        unit = self.common.get("privacy_unit")
        return dict(privacy_unit=unit, max_rows_per_unit=self.contribution_bound if unit is not None else None)

    def config(self, config: dict, epsilon: Fraction, delta: Fraction, seed: int | None) -> dict:
        """The keywords of one run: ``(epsilon, delta)`` handed on rounded down, ``n_out`` rows, the schema."""
        return dict(config, epsilon=float_down(to_fraction_down(epsilon)), delta=delta if delta > 0 else None,
                    n_rows=self.n_out, schema=self.schema, random_state=seed, relation=self.relation,
                    progress=False)

    def check_candidate(self, config: Any, name: str, epsilon: Fraction, delta: Fraction) -> dict:
        """A configuration refused, before anything runs, if it cannot run at its budget (docs/privacy.md §5)."""
        config = check_config(config, name)
        for key in SCHEMA_KEYS:
            if key in config:
                raise InputError(f"{name} sets the schema option {key!r}; schema options must be common to "
                                 "all candidates (one public encoding)")
        merged = {**self.common, **config}
        try:
            make_plan(SynthesisConfig(query_class=self.query_class, **self.config(merged, epsilon, delta, None)),
                      self.schema)
        except InputError as exc:
            raise InputError(f"{name} cannot run at its budget: {exc}") from None
        return merged

    def run(self, config: dict, epsilon: Fraction, delta: Fraction, rng: PrivateRandom):
        """One generator run at ``(epsilon, delta)`` (``delta = 0``: pure) with ``n_out`` rows; its table encoded."""
        result = generate_synthetic(self.df, self.query_class, **self.config(config, epsilon, delta, child_seed(rng)))
        return result, Encoder(self.schema).to_aggregated(result.data)
