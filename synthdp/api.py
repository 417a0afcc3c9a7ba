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

import inspect
import os
import textwrap
import time
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from synthdp.accounting.ledger import Ledger
from synthdp.accounting.spend import stating_spend
from synthdp.config import SynthesisConfig, options_doc
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, NotFittedError
from synthdp.core.options import refusing_unknown_keywords, user_stacklevel
from synthdp.core.parameters import check, check_delta_ceiling
from synthdp.core.progress import Phases
from synthdp.core.schema import PrivacyWarning, Schema
from synthdp.core.tallies import Tallies
from synthdp.counting import build
from synthdp.domains import domain_tallies, learn_domain
from synthdp.engines import counting_engine
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.game.defaults import PLAN_DEFAULTS
from synthdp.model import FittedModel, ReleasedRecords, finish
from synthdp.owner_check import check_strict, real_missing_shares, tell_owner
from synthdp.plan import Plan, ViewInputs, budget, check_delta_against_public_n, check_method, make_plan
from synthdp.linked.fitting import LinkedResult, synthesize_linked
from synthdp.linked.generation import LinkedModel, is_linked_file
from synthdp.privacy_unit import choose_bound, contribution_bounding
from synthdp.queries.base import QueryClass
from synthdp.release_check import check_release, warn_release
from synthdp.report import make_report
from synthdp.result import SyntheticResult
from synthdp.run_schema import public_schema

if TYPE_CHECKING:
    from synthdp.core.data import AggregatedData
    from synthdp.engines import Rows
    from synthdp.methods.base import MethodOutput
    from synthdp.methods.measure.settings import MeasureOptions


@refusing_unknown_keywords
def generate_synthetic(df: pd.DataFrame | str | os.PathLike, query_class: str | QueryClass = "marginals:3", *,
                       epsilon: float, delta: float | None = None, relation: str = "add-remove",
                       privacy_unit: str | None = None, max_rows_per_unit: int | str | None = None,
                       links: Mapping[str, str] | None = None, keys: Mapping[str, str] | None = None,
                       random_state: int | None = None, method: str = "auto",
                       measure_options: MeasureOptions | None = None, point_masses: bool = True,
                       cells_from_total: bool = False, rounds: int | None = None,
                       epsilon_per_round: float | None = None, burn_in: float | None = None,
                       query_player: str = "auto", oracle: str = "auto",
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
                       ) -> SyntheticResult | LinkedResult:
    """Release a differentially private synthetic version of ``df``: one release, one spend of the budget.

    ``df`` is a DataFrame or the location of the table (a CSV or Parquet file, a directory of them or a glob).  The
    options are those of :class:`~synthdp.config.SynthesisConfig`, listed below; an unknown name is refused with the
    nearest valid ones.  Two methods, chosen by ``method`` (``"auto"``: from public inputs only, reported with its
    reason in ``report.plan``):

    * ``"measure"``, select-measure-estimate (docs/privacy.md §8): each round privately selects a marginal (or, for
      a class that is not a marginal class, a query found by RSPM), measures it with discrete Gaussian noise and
      refits a graphical model; the records are drawn from the model.
    * ``"game"``, the synthetic-data game (docs/privacy.md §4): ``rounds`` rounds in which a private query player
      picks the query of ``query_class`` the current samples answer worst and a follow-the-perturbed-leader data
      player answers with ``samples_per_round`` records.  Any class; pure DP (``delta=None``) too.

    The ledger never spends more than ``(epsilon, delta)``; the report shows what was spent.  **Each call is a new
    release with a new cost**: calling again on the same data spends the budget again and the releases compose.  For
    more rows, sample the released model (``result.model.sample(n)`` or ``Synthesizer(...).fit(df).sample(n)``),
    which is free (docs/privacy.md §10.9).  Domains the options leave open are learned privately, charged to the
    budget (docs/privacy.md §9, §10.3-10.5); the input's size is never used (it is private under add/remove).
    """
    config = SynthesisConfig(
        query_class=query_class, epsilon=epsilon, delta=delta, relation=relation, privacy_unit=privacy_unit,
        max_rows_per_unit=max_rows_per_unit, links=links, keys=keys, random_state=random_state, method=method,
        measure_options=measure_options, point_masses=point_masses, cells_from_total=cells_from_total,
        rounds=rounds, epsilon_per_round=epsilon_per_round, burn_in=burn_in,
        query_player=query_player, oracle=oracle, samples_per_round=samples_per_round, time_limit=time_limit,
        resolution=resolution, ftpl_theta=ftpl_theta, ftpl_noise=ftpl_noise, respond_to=respond_to,
        prsma_max_calls=prsma_max_calls, work_limit=work_limit, data_work_limit=data_work_limit, insist=insist,
        schema=schema, categorical=categorical, bounds=bounds, bins=bins, cuts=cuts, discretise=discretise,
        datetimes=datetimes, learn_bounds=learn_bounds, decimals=decimals, dtypes=dtypes, categories=categories,
        nullable=nullable, missing=missing, other=other, unsafe_public_categories=unsafe_public_categories, clip=clip,
        max_categories=max_categories, derived=derived, engine=engine, scheduler=scheduler, n_rows=n_rows,
        numeric=numeric, progress=progress, strict=strict)
    return release(df, config)


def release(df, config: SynthesisConfig, engine=None) -> SyntheticResult | LinkedResult:
    """One table's release, ``strict`` applied; or two linked tables' (a dict of tables, docs/privacy.md §12).
    ``engine`` overrides ``config.engine``'s (e.g. CSV options; for two tables, the child's Dask engine)."""
    if config.links is not None or isinstance(df, Mapping):
        return synthesize_linked(df, config, run_release, engine)
    result = synthesize(df, config, engine)
    check_strict(result, config.strict)
    return result


generate_synthetic.__doc__ += "\n" + textwrap.indent(options_doc(PLAN_DEFAULTS), "    ")


def synthesize(df, config: SynthesisConfig, engine=None, rng: PrivateRandom | None = None, view=ViewInputs()
               ) -> SyntheticResult:
    """Plan, build, run, report: :func:`generate_synthetic` with its parameters in one object, but for
    ``config.strict``, which its callers apply (:func:`~synthdp.owner_check.check_strict`; the CLI writes first).

    ``df``: a DataFrame or the table's location (:func:`generate_synthetic`); ``engine`` overrides ``config.engine``
    (e.g. CSV options); ``rng``: the run's generator (else seeded by ``config.random_state``); ``view``: what a
    linked run fixed for this view (:class:`~synthdp.plan.ViewInputs`, docs/privacy.md §12)."""
    return run_release(df, config, engine, rng, view).result()


@dataclass
class RunRelease:
    """A run's release before its records are drawn, and what the checks of the records read: the single-table
    pipeline up to the method's output.  :meth:`result` checks the records the release writes (§10.8) and makes
    the report; a linked run (docs/privacy.md §12) hands it the view of the tables it drew from both models, so that
    the owner's warnings and ``rows_written`` are those of the tables written, never of a draw thrown away."""

    config: SynthesisConfig
    plan: Plan
    schema: Schema
    output: MethodOutput
    rows: Rows
    real: AggregatedData
    raw_missing: dict[str, float]
    learned_bounds: tuple[str, ...]
    collected: list[str]
    ledger: Ledger
    start: float

    @property
    def model(self) -> FittedModel:
        """The released model, to draw from; its ``release`` is the report's, once :meth:`result` made it."""
        output = self.output
        return FittedModel(output.model or ReleasedRecords(self.schema.domain, output.codes), self.schema,
                           self.config.numeric, {})

    @property
    def size(self) -> int:
        """How many records the run's own draw has: ``n_rows``, else the released records' count (§8.6)."""
        return self.config.n_rows if self.config.n_rows is not None else len(self.output.codes)

    def result(self, data: pd.DataFrame | None = None) -> SyntheticResult:
        """The release with ``data`` as its records (None: the run's own draw, resampled to ``n_rows`` and decoded):
        the release's self-check on them (§10.8, into the report's warnings), the owner's comparison of them with
        the real rows, the report (``rows_written`` is ``len(data)``) and the model carrying it.  Post-processing
        of the release, and owner-only warnings."""
        schema, config = self.schema, self.config
        phases = Phases(enabled=config.progress)
        with stating_spend(self.ledger):
            with phases("decoding and checking the records" if data is None else "checking the records"):
                data = finish(self.output, schema, config) if data is None else data  # post-processing
                codes = Encoder(schema).encode(data)
                findings = check_release(data, schema, codes, learned_bounds=self.learned_bounds)  # §10.8
            warn_release(findings, self.collected)
            comparison = tell_owner(self.rows, self.real, data, codes, schema, findings, self.raw_missing,
                                    config.numeric)
            if self.rows.stripped:
                self.output.notes.append(f"stripped surrounding spaces from text values of columns "
                                         f"{list(self.rows.stripped)}")
            report = make_report(self.plan, self.output, len(data), self.collected, time.perf_counter() - self.start)
            return SyntheticResult(data, report, schema, self.plan, replace(self.model, release=report.to_dict()),
                                   comparison)


def run_release(df, config: SynthesisConfig, engine=None, rng: PrivateRandom | None = None, view=ViewInputs()
                ) -> RunRelease:
    """:func:`synthesize` up to the release: plan, build, run (every private step), the records not yet drawn."""
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
    rng = rng or PrivateRandom(config.random_state)
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
        rows, schema = public_schema(rows, config, collected, engine)
        if rows.n is not None:  # rows held in memory: replace-one's public n, checked before learning
            check_delta_against_public_n(config, rows.n)
        plan = make_plan(config, schema, chosen_bound=chosen, view=view)  # public inputs only: every choice, once
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
        return RunRelease(config, plan, schema, output, rows, real,
                          real_missing_shares(tallies() if learning else None), tuple(domain.bounded.columns),
                          collected, ledger, start)


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
                 links: Mapping[str, str] | None = None, keys: Mapping[str, str] | None = None,
                 random_state: int | None = None, method: str = "auto", measure_options: MeasureOptions | None = None,
                 point_masses: bool = True, cells_from_total: bool = False, rounds: int | None = None,
                 epsilon_per_round: float | None = None,
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
        # scikit-learn: one attribute per parameter, as given, in the signature's order; checked by fit
        self.query_class, self.epsilon, self.delta, self.relation = query_class, epsilon, delta, relation
        self.privacy_unit, self.max_rows_per_unit, self.random_state = privacy_unit, max_rows_per_unit, random_state
        self.links, self.keys = links, keys
        self.method, self.measure_options, self.point_masses = method, measure_options, point_masses
        self.cells_from_total = cells_from_total
        self.rounds, self.epsilon_per_round, self.burn_in = rounds, epsilon_per_round, burn_in
        self.query_player, self.oracle, self.samples_per_round = query_player, oracle, samples_per_round
        self.time_limit, self.resolution, self.ftpl_theta = time_limit, resolution, ftpl_theta
        self.ftpl_noise, self.respond_to, self.prsma_max_calls = ftpl_noise, respond_to, prsma_max_calls
        self.work_limit, self.data_work_limit, self.insist = work_limit, data_work_limit, insist
        self.schema, self.categorical, self.bounds, self.bins = schema, categorical, bounds, bins
        self.cuts, self.discretise, self.datetimes, self.learn_bounds = cuts, discretise, datetimes, learn_bounds
        self.decimals, self.dtypes, self.categories, self.nullable = decimals, dtypes, categories, nullable
        self.missing, self.other, self.unsafe_public_categories = missing, other, unsafe_public_categories
        self.clip, self.max_categories, self.derived, self.engine = clip, max_categories, derived, engine
        self.scheduler, self.n_rows, self.numeric, self.progress = scheduler, n_rows, numeric, progress
        self.strict = strict

    def config(self) -> SynthesisConfig:
        """The parameters as a checked :class:`~synthdp.config.SynthesisConfig` (raises on a bad value)."""
        return SynthesisConfig(**self.get_params())

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters by name, read off its signature (scikit-learn semantics; ``deep`` has
        nothing to recurse into)."""
        return {name: getattr(self, name) for name in inspect.signature(type(self)).parameters}

    def set_params(self, **params: Any) -> "Synthesizer":
        """Set parameters by name, as given (checked by :meth:`fit`); an unknown name raises and changes nothing."""
        SynthesisConfig.check_names(params)
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults, params = SynthesisConfig.defaults(), self.get_params()
        changed = [f"{k}={params[k]!r}" for k in SynthesisConfig.names()  # group by group, as the options are listed
                   if k == "epsilon" or params[k] is not defaults[k] and params[k] != defaults[k]]
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
        if config.links is not None or isinstance(df, Mapping):  # two linked tables (docs/privacy.md §12)
            self.result_ = synthesize_linked(df, config, run_release)
            self.report_, self.model_ = self.result_.report, self.result_.model
            return self
        self.result_ = synthesize(df, config)
        self.report_ = self.result_.report
        self.schema_ = self.result_.schema
        self.plan_ = self.result_.plan
        self.model_ = self.result_.model
        check_strict(self.result_, config.strict)  # fitted already: the release is made, whatever strict says
        return self

    def sample(self, n: int | None = None, random_state: int | None = None, *,
               conditions: Mapping[str, Any] | None = None) -> pd.DataFrame | dict[str, pd.DataFrame]:
        """``n`` fresh rows drawn from the released model (the released table itself when ``n`` is None).

        Under select-measure-estimate the rows are drawn from the graphical model fitted to the noisy
        measurements (or its reweighted sample); under the game, whose release is its set of synthetic
        records, the model is those records and the rows are drawn from them with replacement
        (docs/privacy.md §10.9).  Post-processing: any ``n``, any number of times, no privacy cost.
        ``random_state`` seeds the draw: the same seed gives the same rows, also after :meth:`save` and
        :meth:`load`.  ``conditions`` (column -> value, e.g. ``{"region": "N"}``; None: the missing value) draws
        from the model's conditional distribution given them, every row taking the given values
        (:meth:`FittedModel.sample`; post-processing too).  Fitted on two linked tables, ``n`` parents with their
        children, as a dict of two tables (docs/privacy.md §12); ``conditions`` then name the parent table's columns
        (or its count of children ``n_<child>``), and each parent's children are drawn given it
        (:meth:`LinkedModel.sample`).
        """
        model = self._fitted_model()
        if isinstance(model, LinkedModel):
            if conditions and n is None:
                raise InputError("conditions draw fresh parents: give the number of parents, sample(n, "
                                 "conditions=...)")
            if n is None and hasattr(self, "result_"):
                return {name: table.copy() for name, table in self.result_.tables.items()}
            if n is None:
                raise InputError("a loaded model keeps no tables: give the number of parents, sample(n)")
            return model.sample(n, random_state=random_state, conditions=conditions)
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
        if is_linked_file(path):  # two linked tables: both models (docs/privacy.md §12)
            linked = LinkedModel.load(path)
            budget = [m.release for m in (linked.parent, linked.joined)]
            loaded = cls(epsilon=sum(r["epsilon_budget"] for r in budget),
                         delta=None if budget[0].get("delta_budget") is None
                         else sum(r["delta_budget"] for r in budget),
                         links={f"{linked.link.child}.{linked.link.foreign_key}": f"{linked.link.parent}."
                                f"{linked.link.key}"}, max_rows_per_unit=linked.k)
            loaded.model_ = linked
            return loaded
        model = FittedModel.load(path)
        release = model.release
        loaded = cls(epsilon=release["epsilon_budget"], delta=release.get("delta_budget"),
                     relation=release["relation"])
        loaded.model_, loaded.schema_ = model, model.schema
        return loaded

    def _fitted_model(self) -> FittedModel | LinkedModel:
        if not hasattr(self, "model_"):
            raise NotFittedError("this Synthesizer is not fitted yet: call fit(df) (or Synthesizer.load(path)) "
                                 "before sample() or save()")
        return self.model_


Synthesizer.__doc__ += "\n" + textwrap.indent(options_doc(PLAN_DEFAULTS), "    ")
