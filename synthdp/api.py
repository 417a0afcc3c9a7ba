"""Public entry points: :func:`generate_synthetic` and the scikit-learn style :class:`Synthesizer`.

A run reads like the algorithm (docs/privacy.md §4):

1. **plan** -- :func:`synthdp.plan.make_plan` fixes every choice from the
   configuration and the public schema; it never sees the data, so no choice
   costs privacy, and it refuses a budget the planned spends would exceed;
2. **build** -- encode the data (and run the few checks that need the public
   ``n`` under replace-one);
3. **run** -- the method the plan chose (``plan.method.run``, from
   :mod:`synthdp.methods.registry`), spending through the ledger;
4. **report** -- the release (what the ledger paid for, and public
   parameters) and the diagnostics (times and counts: never published).
"""

from __future__ import annotations

import logging
import os
import textwrap
import time
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from synthdp.accounting.ledger import Ledger
from synthdp.config import SynthesisConfig, options_doc
from synthdp.core.derived import parse_derived
from synthdp.core.encoding import Encoder, check_derived_output
from synthdp.core.errors import InputError, SynthDPError
from synthdp.core.options import refusing_unknown_keywords, user_stacklevel
from synthdp.core.parameters import check, check_delta_ceiling
from synthdp.core.progress import Phases
from synthdp.core.owner import OwnerWarning, owner_warning
from synthdp.core.schema import PrivacyWarning, Schema
from synthdp.core.tallies import Tallies
from synthdp.engines import Rows, get_engine
from synthdp.engines.pandas import PandasEngine
from synthdp.files import sources
from synthdp.files.parquet import write_table
from synthdp.files.sources import ReadOptions
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.units import (AUTO_EPSILON_SHARE, Bounding, ChosenBound, bounding_key,
                                      choose_rows_per_unit, rows_per_unit)
from synthdp.methods.base import MethodOutput
from synthdp.methods.registry import get_method
from synthdp.methods.game.defaults import PLAN_DEFAULTS
from synthdp.model import FittedModel, ReleasedRecords, decode_records
from synthdp.domains import check_every_bound, domain_tallies, learn_domain
from synthdp.plan import Plan, budget, candidate_plans, check_delta_against_public_n, make_plan
from synthdp.queries.base import QueryClass
from synthdp.owner_check import (FarFromReal, FarFromRealError, RealComparison, compare_with_real, real_missing_shares,
                                 warn_far_from_real, warn_missing_shares)
from synthdp.release_check import ReleaseWarning, check_release
from synthdp.report import Report, make_report

if TYPE_CHECKING:
    from synthdp.methods.measure.settings import MeasureOptions

log = logging.getLogger(__name__)


@dataclass
class SyntheticResult:
    """A private synthetic table and the report of how it was made."""

    data: pd.DataFrame
    report: Report
    #: The public schema the table was encoded with, and the run's plan (both public).
    schema: Any = None
    plan: Plan | None = None
    #: The released model the table was drawn from: more rows, for free (docs/privacy.md §10.9).
    model: FittedModel | None = None
    #: The release against the real rows (:func:`~synthdp.owner_check.compare_with_real`): for the data owner
    #: only, never saved with the table or the model; None when the rows were not in memory (engine 'dask').
    comparison: RealComparison | None = field(default=None, repr=False)

    @property
    def far_from_real(self) -> tuple[FarFromReal, ...]:
        """The columns and pairs of columns far from the real table (:attr:`comparison`'s findings; none when
        it was not made).  For the data owner only."""
        return () if self.comparison is None else self.comparison.findings

    def __getstate__(self) -> dict:
        """What a pickle (``pickle``, ``joblib``, ``copy``) of the result holds: all but :attr:`comparison`, which
        is read off the real rows for the owner only and, like :meth:`save`, a pickle leaves out (it comes back
        None); a fitted :class:`Synthesizer`'s ``result_`` is pickled the same way."""
        return {**self.__dict__, "comparison": None}

    def save(self, path: str | Path) -> None:
        """Write the table to ``path`` atomically, as CSV or Parquet by its name's ending (the CLI's ``-o`` rule);
        a CSV writes datetime columns in their public formats."""
        write_table(self.data, path, schema=self.schema)

    def to_csv(self, path: str | Path) -> None:
        """Write the table to ``path`` (a ``.csv`` name) atomically (temporary file, then rename); datetime columns
        in their public formats."""
        write_table(self.data, path, fmt="csv", schema=self.schema)


def resolve_schema(df: pd.DataFrame, schema, collected: list[str], **options):
    """The given schema (object or file), or one built from ``df`` with the public ``options``.

    Warnings raised while building (e.g. categories read off the private
    data) are re-emitted and collected for the report, except the owner's
    (:class:`~synthdp.core.owner.OwnerWarning`, read off the private frame:
    docs/privacy.md §10.8), which are only re-emitted.
    """
    if schema is not None:
        return schema if isinstance(schema, Schema) else Schema.load(schema)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = Schema.from_dataframe(df, **options)
    for w in caught:
        if not issubclass(w.category, OwnerWarning):
            collected.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return built


@refusing_unknown_keywords
def generate_synthetic(df: pd.DataFrame | str | os.PathLike, query_class: str | QueryClass = "marginals:3", *,
                       epsilon: float, delta: float | None = None, relation: str = "add-remove",
                       privacy_unit: str | None = None, max_rows_per_unit: int | str | None = None,
                       random_state: int | None = None, method: str = "auto",
                       measure_options: MeasureOptions | None = None, point_masses: bool = True,
                       rounds: int | None = None, epsilon_per_round: float | None = None,
                       burn_in: float | None = None, query_player: str = "auto", oracle: str = "auto",
                       samples_per_round: int | None = None, time_limit: float | None = None, resolution: int = 100,
                       ftpl_theta: float = 0.3, ftpl_noise: str = "one-sided", respond_to: str = "auto",
                       prsma_max_calls: int = 100_000, work_limit: float | None = None,
                       data_work_limit: float | None = None, insist: bool = False,
                       schema: Schema | str | os.PathLike | None = None, categorical: Sequence[str] | None = None,
                       bounds: Mapping[str, tuple[float, float]] | None = None, bins: Mapping[str, int] | None = None,
                       cuts: Mapping[str, Sequence[float]] | None = None, discretise: str = "privtree",
                       datetimes: Mapping[str, str | None] | Sequence[str] | None = None,
                       learn_bounds: Mapping[str, str] | Sequence[str] | None = None,
                       decimals: Mapping[str, int] | None = None, dtypes: Mapping[str, str] | None = None,
                       categories: Mapping[str, Sequence[Any]] | None = None, nullable: Sequence[str] | None = None,
                       missing: Sequence[str] | None = None, other: str | None = None,
                       unsafe_public_categories: bool = False,
                       clip: bool = False, max_categories: int = 100, derived: Mapping[str, str] | None = None,
                       engine: str = "pandas", scheduler: str | None = None, n_rows: int | None = None,
                       numeric: str = "uniform", progress: bool = True, strict: bool = False,
                       ) -> SyntheticResult:
    """Release a differentially private synthetic version of ``df``: one release, one spend of the budget.

    ``df`` is a DataFrame or the location of the table (a CSV or Parquet
    file, a directory of them or a glob).  The options are those of
    :class:`~synthdp.config.SynthesisConfig`, listed below; an unknown name
    is refused with the nearest valid ones.  Two methods, chosen by
    ``method`` (``"auto"``: from public inputs only, reported with its reason
    in ``report.plan``):

    * ``"measure"``, select-measure-estimate (docs/privacy.md §8): each round
      privately selects a marginal (or, for a class that is not a marginal
      class, a query found by RSPM), measures it with discrete Gaussian noise
      and refits a graphical model; the records are drawn from the model.
    * ``"game"``, the synthetic-data game (docs/privacy.md §4): ``rounds``
      rounds in which a private query player picks the query of
      ``query_class`` the current samples answer worst and a
      follow-the-perturbed-leader data player answers with
      ``samples_per_round`` records.  Any class; pure DP (``delta=None``) too.

    The ledger never spends more than ``(epsilon, delta)``; the report shows
    what was spent.  **Each call is a new release with a new cost**: calling
    again on the same data spends the budget again and the releases compose.
    For more rows, sample the released model (``result.model.sample(n)`` or
    ``Synthesizer(...).fit(df).sample(n)``), which is free (docs/privacy.md
    §10.9).  Domains the options leave open are learned privately, charged
    to the budget (docs/privacy.md §9, §10.3-10.5); the input's size is never
    used (it is private under add/remove).
    """
    options = {name: value for name, value in locals().items() if name != "df"}  # the parameters, as given
    config = SynthesisConfig(**options)
    result = synthesize(df, config)
    check_strict(result, config)
    return result


generate_synthetic.__doc__ += "\n" + textwrap.indent(options_doc(PLAN_DEFAULTS), "    ")



@contextmanager
def stating_spend(ledger: Ledger):
    """Re-raise an error that comes after the ledger was charged with what was spent (docs/privacy.md §10.1).

    Most refusals come before any private step (the plan is checked on public
    inputs and placeholder domains first; PrivTree's cells are capped so that they
    fit, :func:`synthdp.plan.cell_cap`; every column's values are checked while the
    table is tallied, §10.7, §10.8).  A few can only come after one: a
    model too large for the categories partition selection learned, a
    solver failure in Mode E.  Nothing is released then, but the data were
    used: the owner is told what the ledger was charged, so that a new run is
    counted as a second spend.

    An interrupt (SIGINT, SIGTERM, Ctrl-C) leaves with what the ledger was
    charged so far, as the text :func:`spend_text` writes (``"nothing"``
    before the first private step), in its ``charged`` attribute, for the
    command line to say.
    """
    try:
        yield
    except KeyboardInterrupt as interrupt:
        spent, pure = ledger.total(), ledger.delta_budget == 0
        interrupt.charged = (spend_text(float(spent.epsilon), None if pure else float(spent.delta)) if ledger.events
                             else "nothing")
        raise
    except SynthDPError as error:
        if not ledger.events:
            raise
        raise error.with_note(f"This refusal came after private steps that ran on the data and were charged "
                              f"{ledger.total()}; nothing was released, but a new run on the same data spends "
                              "again (docs/privacy.md §10.1).") from error


def spend_text(epsilon: float, delta: float | None) -> str:
    """A spend as the messages give it: ``epsilon=0.5, delta=1e-09`` (``delta`` None: pure DP, none shown)."""
    return f"epsilon={epsilon:.6g}" + ("" if delta is None else f", delta={delta:.3g}")


def check_method(config: SynthesisConfig) -> None:
    """Refuse a method the registry does not hold (the one list of methods), before anything is read."""
    if config.method != "auto":
        get_method(config.method)


def _warn_release(findings, collected: list[str]) -> None:
    """Each finding of the release's self-check (§10.8) as a warning, and into the report's warnings."""
    for finding in findings:
        collected.append(finding.text)
        warnings.warn(finding.text, ReleaseWarning, stacklevel=user_stacklevel())


def synthesize(df, config: SynthesisConfig, engine=None) -> SyntheticResult:
    """Plan, build, run, report: :func:`generate_synthetic` with its parameters in one object, but for
    ``config.strict``, which its callers apply to the result (:func:`check_strict`; the command line writes the
    release first).

    ``df`` is a DataFrame or the location of the table (see :func:`generate_synthetic`);
    ``engine`` overrides the counting engine ``config.engine`` names (e.g. with CSV reading options).
    """
    start = time.perf_counter()
    if not isinstance(df, (pd.DataFrame, str, os.PathLike, list, tuple)):
        raise InputError(f"df must be a pandas DataFrame or the path of a CSV/Parquet file, a directory or a "
                         f"glob; got {type(df).__name__}")
    check_method(config)
    engine = engine or counting_engine(config)
    collected: list[str] = []
    delta_note = check_delta_ceiling(config.delta, config.relation, config.n_rows)  # public inputs only
    if delta_note:
        collected.append(delta_note)
        warnings.warn(delta_note, PrivacyWarning, stacklevel=user_stacklevel())
    epsilon, delta = budget(config)
    auto = config.privacy_unit is not None and config.max_rows_per_unit == "auto"
    ledger = Ledger(epsilon, delta or Fraction(0), contribution_bound=1 if auto else config.contribution_bound)
    rng = PrivateRandom(config.random_state)
    phases = Phases(enabled=config.progress)  # one line as each step starts and ends (never released)
    with stating_spend(ledger):  # a refusal after the first charge says what was spent (§10.1)
        chosen = None
        with nullcontext() if isinstance(df, pd.DataFrame) else phases("reading the table"):
            df = engine.read(df)  # in memory, the rows; on a cluster, the files its passes read part by part
        if auto:  # the first private step: k, chosen on the raw rows after every refusal (docs/privacy.md §10.6)
            chosen = choose_bound(df, config, engine, ledger, rng)
            config = replace(config, max_rows_per_unit=chosen.k)
            ledger.bound_contributions(chosen.k)
        rows = engine.prepare(df, contribution_bounding(config, rng))  # at most k rows per unit (§10.6), text stripped
        rows, schema = public_schema(rows, config, collected)
        if rows.n is not None:  # rows held in memory: replace-one's public n, checked before learning
            check_delta_against_public_n(config, rows.n)
        plan = make_plan(config, schema, chosen_bound=chosen)  # public inputs only: every choice and budget, once
        tallies = domain_tallies(rows, schema, engine, config)  # what the domain steps read (§10.7)
        learning = any(Tallies.columns(schema))
        with phases("learning the domains the schema leaves open (privately)") if learning else nullcontext():
            domain = learn_domain(tallies, schema, plan, ledger, rng)  # private: docs/privacy.md §9, §10
        if learning:
            plan = plan.with_domain(domain)  # the method on the learned domain, with the budgets planned
        schema = domain.schema
        with phases("counting the encoded rows"):
            real = build(rows, schema, plan, engine)  # count: on a cluster, units are bounded as it counts
        output = plan.method.run(plan.method_plan, real, ledger, rng, domain.zcdp)  # private, through the ledger
        with phases("decoding and checking the records"):
            data = finish(output, schema, config)                 # post-processing: resample, decode
            codes = Encoder(schema).encode(data)
            findings = check_release(data, schema, codes, learned_bounds=domain.bounded.columns)  # §10.8
        _warn_release(findings, collected)
        comparison = tell_owner(rows, real, data, codes, schema, findings,
                                real_missing_shares(tallies() if learning else None), config.numeric)
        if rows.stripped:
            output.notes.append(f"stripped surrounding spaces from text values of columns {list(rows.stripped)}")
        report = make_report(plan, output, len(data), collected, time.perf_counter() - start)
        model = FittedModel(output.model or ReleasedRecords(schema.domain, output.codes), schema, config.numeric,
                            report.to_dict())
        return SyntheticResult(data, report, schema, plan, model, comparison)


def check_strict(result: SyntheticResult, config: SynthesisConfig) -> None:
    """``strict=True``: raise :class:`~synthdp.owner_check.FarFromRealError`, carrying ``result``, when the
    release has columns far from the real table, or when the comparison failed (:func:`tell_owner`; strict needs
    the rows in memory, so a missing comparison is a failure), after the release is made: docs/privacy.md §10.8."""
    if config.strict and (result.comparison is None or result.far_from_real):
        raise FarFromRealError(result, result.far_from_real)


def tell_owner(rows: Rows, real, data: pd.DataFrame, codes, schema: Schema, findings, raw: Mapping[str, float],
               numeric: str) -> RealComparison | None:
    """After the release, the data owner's warnings read off the real rows (docs/privacy.md §10.8; no step of the
    run depends on them): the missing shares against the counted rows ``real`` (:func:`warn_missing_shares`),
    then each column and strongly related pair against the rows in memory (:func:`compare_with_real`; None when
    the engine reads them where it counts).

    The release is made and charged by then: an error of these checks is told to the owner as a warning and the
    comparison is None, so that it never throws the release away (a warning the caller made an error is raised).
    """
    try:
        warn_missing_shares(real, codes, schema, findings, raw)
        if rows.frame is None:
            return None
        comparison = compare_with_real(rows.frame, data, schema, codes, numeric)
    except Warning:
        raise
    except Exception as error:  # any failure of the owner's check: the release is kept
        owner_warning(f"the release was made, but comparing it with the real rows failed ({type(error).__name__}: "
                      f"{error}); no column was checked against the real table (nor by strict=True)")
        return None
    warn_far_from_real(comparison)
    return comparison


def counting_engine(config: SynthesisConfig):
    """The engine ``config.engine`` names, reading missing tokens and the privacy unit's column as text."""
    options = {"scheduler": config.scheduler} if config.engine == "dask" else {}
    return get_engine(config.engine, options=ReadOptions(missing=tuple(config.missing or ()),
                                                         text=unit_columns(config)), **options)


def public_schema(rows: Rows, config: SynthesisConfig, collected: list[str]) -> tuple[Rows, Schema]:
    """``(rows, schema)``: the public schema of the run, and the rows without its derived columns.

    Rows the engine reads where it counts (on a cluster, part by part: no frame here) need a public schema.
    Refuses a privacy unit column inside the schema (docs/privacy.md §10.6).  Derived columns (``config.derived``,
    added to a given schema's) are dropped from the rows: no private step reads them (docs/privacy.md §10.10).
    """
    if rows.frame is None and config.schema is None:
        raise InputError("engine='dask' needs a public schema (schema= a Schema or a schema file; CLI "
                         "--schema): the categories of a column are never read off the data on workers")
    schema = resolve_schema(rows.frame, config.schema, collected, **config.schema_options())
    if config.missing and config.schema is not None:
        schema = replace(schema, missing_values=tuple(dict.fromkeys((*schema.missing_values, *config.missing))))
    if config.derived and config.schema is not None:
        schema = replace(schema, derived=(*schema.derived, *parse_derived(config.derived)))
    check_derived_output(schema, config.numeric)
    if schema.derived and rows.frame is not None:  # derived columns never reach the model (docs/privacy.md §10.10)
        derived = {d.name for d in schema.derived}
        rows = replace(rows, source=rows.frame.drop(columns=[c for c in rows.frame.columns if str(c) in derived]))
    if config.privacy_unit is not None and config.privacy_unit in schema.names:
        raise InputError(f"the privacy unit column {config.privacy_unit!r} must not be in the schema: it is never "
                         "encoded, modelled or released (docs/privacy.md §10.6); remove it from the schema")
    return rows, schema


def unit_columns(config: SynthesisConfig) -> tuple[str, ...]:
    """The columns a CSV reader keeps as text even when it infers types: the privacy unit's (``007`` and ``7`` are
    two units); the readers of a run read every field as text anyway (docs/privacy.md §10.1)."""
    return () if config.privacy_unit is None else (config.privacy_unit,)


def raw_schema(df: pd.DataFrame, config: SynthesisConfig, engine) -> tuple[Rows, Schema]:
    """Before ``k`` is chosen privately: the raw rows without the privacy unit's column, and the run's public
    schema built on them.  The schema's warnings are given once, by the run itself."""
    if config.privacy_unit not in df.columns:
        raise InputError(f"privacy unit column {config.privacy_unit!r} is not in the data, whose columns are "
                         f"{list(df.columns)}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return public_schema(engine.prepare(df.drop(columns=[config.privacy_unit])), config, [])


def choose_bound(df: pd.DataFrame, config: SynthesisConfig, engine, ledger: Ledger, rng: PrivateRandom
                 ) -> ChosenBound:
    """``max_rows_per_unit="auto"``: ``k`` chosen privately with a public share of epsilon, the run's first charge,
    after every refusal that can come before it (docs/privacy.md §10.6, "Refusals before the choice of k"; §10.8).

    In order: the plan of every candidate ``k`` (public inputs only: the ``k`` whose plan passes are the range
    the choice ranges over), every value of the raw rows checked as the tally pass checks the kept rows later, and
    the domain stage's size checks at every candidate (for the owner).
    """
    rows, schema = raw_schema(df, config, engine)
    plans = candidate_plans(config, schema)
    tallies = engine.tally(rows.source, schema)
    held = rows_per_unit(df, config.privacy_unit)
    check_every_bound(tallies, held, schema, plans)
    return choose_rows_per_unit(held, candidates=tuple(plans), epsilon=budget(config)[0] * AUTO_EPSILON_SHARE,
                                rng=rng, ledger=ledger, relation=config.relation)


def contribution_bounding(config: SynthesisConfig, rng: PrivateRandom):
    """The bounding of docs/privacy.md §10.6 (column, ``k``, key from a child of ``rng``), or None without a unit."""

    if config.privacy_unit is None:
        return None
    return Bounding(config.privacy_unit, config.max_rows_per_unit, bounding_key(rng))


def build(rows: Rows, schema, plan: Plan, engine=None):
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


def finish(output: MethodOutput, schema, config: SynthesisConfig) -> pd.DataFrame:
    """Post-processing of the released codes: an optional resample to ``n_rows``, then decoding."""

    codes = output.codes
    if config.n_rows is not None and len(codes) != config.n_rows:
        codes = codes[output.post_rng.integers(0, len(codes), config.n_rows)]
    return decode_records(output.model, schema, codes, numeric=config.numeric, generator=output.post_rng)


class NotFittedError(InputError, AttributeError):
    """:meth:`Synthesizer.sample` (or a fitted attribute) was used before :meth:`Synthesizer.fit`."""


class Synthesizer:
    """scikit-learn style front end: ``Synthesizer(epsilon=1).fit(df).sample(1000)``.

    The keyword parameters are those of :func:`generate_synthetic` (one
    :class:`~synthdp.config.SynthesisConfig`, where each is documented),
    stored as given and checked by :meth:`fit` (or :meth:`config`) before
    anything is read, as scikit-learn does.  ``fit`` runs the
    generation once (spending the budget) and sets the fitted attributes
    ``result_``, ``report_``, ``schema_``, ``plan_`` and ``model_`` (the released model,
    :class:`~synthdp.model.FittedModel`); ``sample`` draws fresh rows from the released model,
    and :meth:`save` / :meth:`load` keep it in a file: post-processing, no privacy cost
    (docs/privacy.md §10.9).
    """

    @refusing_unknown_keywords
    def __init__(self, query_class: str | QueryClass = "marginals:3", *,
                 epsilon: float, delta: float | None = None, relation: str = "add-remove",
                 privacy_unit: str | None = None, max_rows_per_unit: int | str | None = None,
                 random_state: int | None = None, method: str = "auto", measure_options: MeasureOptions | None = None,
                 point_masses: bool = True, rounds: int | None = None, epsilon_per_round: float | None = None,
                 burn_in: float | None = None, query_player: str = "auto", oracle: str = "auto",
                 samples_per_round: int | None = None, time_limit: float | None = None, resolution: int = 100,
                 ftpl_theta: float = 0.3, ftpl_noise: str = "one-sided", respond_to: str = "auto",
                 prsma_max_calls: int = 100_000, work_limit: float | None = None,
                 data_work_limit: float | None = None, insist: bool = False,
                 schema: Schema | str | os.PathLike | None = None, categorical: Sequence[str] | None = None,
                 bounds: Mapping[str, tuple[float, float]] | None = None, bins: Mapping[str, int] | None = None,
                 cuts: Mapping[str, Sequence[float]] | None = None, discretise: str = "privtree",
                 datetimes: Mapping[str, str | None] | Sequence[str] | None = None,
                 learn_bounds: Mapping[str, str] | Sequence[str] | None = None,
                 decimals: Mapping[str, int] | None = None, dtypes: Mapping[str, str] | None = None,
                 categories: Mapping[str, Sequence[Any]] | None = None,
                 nullable: Sequence[str] | None = None, missing: Sequence[str] | None = None,
                 other: str | None = None, unsafe_public_categories: bool = False, clip: bool = False,
                 max_categories: int = 100,
                 derived: Mapping[str, str] | None = None, engine: str = "pandas", scheduler: str | None = None,
                 n_rows: int | None = None, numeric: str = "uniform", progress: bool = True,
                 strict: bool = False,
                 ) -> None:
        for name, value in locals().items():  # scikit-learn: one attribute per parameter, as given; checked in fit
            if name != "self":
                setattr(self, name, value)

    def config(self) -> SynthesisConfig:
        """The parameters as a checked :class:`~synthdp.config.SynthesisConfig` (raises on a bad value)."""
        return SynthesisConfig(**self.get_params())

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters by name (scikit-learn semantics; ``deep`` has nothing to recurse into)."""
        return {name: getattr(self, name) for name in SynthesisConfig.names()}

    def set_params(self, **params: Any) -> "Synthesizer":
        """Set parameters by name, as given (checked by :meth:`fit`); an unknown name raises and changes nothing."""
        SynthesisConfig.check_names(params)
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = SynthesisConfig.defaults()
        changed = [f"{k}={v!r}" for k, v in self.get_params().items() if k == "epsilon" or v is not defaults[k]
                   and v != defaults[k]]
        return f"Synthesizer({', '.join(changed)})"

    def fit(self, df: pd.DataFrame, y: None = None) -> "Synthesizer":
        """Generate the private synthetic table from ``df`` (spends the budget once).

        Every call is a new release with its own cost: fitting again on the
        same data spends the budget again, and the releases compose (two fits
        at ``epsilon`` cost ``2 epsilon``).  For more rows call :meth:`sample`,
        which is free.  A second fit warns.  With ``strict=True``, columns far from the real table raise
        :class:`~synthdp.owner_check.FarFromRealError` once the fitted attributes are set (the release is made).
        """
        if hasattr(self, "result_"):
            warnings.warn("Synthesizer.fit was called again: this is a new release that spends the budget again "
                          "(on the same data the two releases together cost twice the budget); for more rows of "
                          "the first release use sample(n)", UserWarning, stacklevel=2)
        config = self.config()
        self.result_ = synthesize(df, config)
        self.report_ = self.result_.report
        self.schema_ = self.result_.schema
        self.plan_ = self.result_.plan
        self.model_ = self.result_.model
        check_strict(self.result_, config)  # fitted already: the release is made, whatever strict says
        return self

    def sample(self, n: int | None = None, random_state: int | None = None, *,
               conditions: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """``n`` fresh rows drawn from the released model (the released table itself when ``n`` is None).

        Under select-measure-estimate the rows are drawn from the graphical model fitted to the noisy
        measurements (or its reweighted sample); under the game, whose release is its set of synthetic
        records, the model is those records and the rows are drawn from them with replacement
        (docs/privacy.md §10.9).  Post-processing: any ``n``, any number of times, no privacy cost.
        ``random_state`` seeds the draw: the same seed gives the same rows, also after :meth:`save` and
        :meth:`load`.  ``conditions`` (column -> value, e.g. ``{"region": "N"}``; None: the missing value) draws
        from the model's conditional distribution given them, every row taking the given values
        (:meth:`FittedModel.sample`; post-processing too).
        """
        model = self._fitted_model()
        if n is None:
            if not hasattr(self, "result_"):
                raise InputError("a loaded model keeps no table: give the number of rows, sample(n)")
            check("random_state", random_state)
            if conditions:
                raise InputError("conditions draw fresh rows: give the number of rows, sample(n, conditions=...)")
            return self.result_.data.copy()
        return model.sample(n, conditions=conditions, random_state=random_state)

    def save(self, path: str | os.PathLike) -> None:
        """Write the released model and the release report to ``path`` (a zip of JSON and numpy arrays, no pickle).

        The file holds only released or public quantities: no real row, no true count, no diagnostics or timing
        (docs/privacy.md §10.9).  Read it back with :meth:`load`.
        """
        self._fitted_model().save(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Synthesizer":
        """A Synthesizer with the model saved at ``path`` (``model_``, ``schema_``), ready to :meth:`sample`.

        Its parameters are the release's budget and relation; fitting it again is a new release.
        """
        model = FittedModel.load(path)
        release = model.release
        loaded = cls(epsilon=release["epsilon_budget"], delta=release.get("delta_budget"),
                     relation=release["relation"])
        loaded.model_, loaded.schema_ = model, model.schema
        return loaded

    def _fitted_model(self) -> FittedModel:
        if not hasattr(self, "model_"):
            raise NotFittedError("this Synthesizer is not fitted yet: call fit(df) (or Synthesizer.load(path)) "
                                 "before sample() or save()")
        return self.model_


Synthesizer.__doc__ += "\n" + textwrap.indent(options_doc(PLAN_DEFAULTS), "    ")
