"""The one declaration of a synthesis run's options: :class:`SynthesisConfig`.

Every option of :func:`synthdp.generate_synthetic`, :class:`synthdp.Synthesizer`
and ``synthdp generate`` is declared once, as a field with its default, its
group (:data:`GROUPS`) and its documentation (what it is and why, its units,
what the default means): here, or, for the options only one method reads, in
that method's package (the game's :class:`~synthdp.methods.game.settings.GameSettings`,
inherited here; select-measure-estimate's settings are one object,
``measure_options``, whose fields document themselves).  The function's and the
class's signatures list these fields (a test keeps them equal), their
docstrings and the command's flags and ``--help`` are derived from them; each
field has exactly one validation rule, in :data:`synthdp.core.parameters.RULES`
(in the core layer, so that the layers below the driver check with the same
rules), applied on construction: a bad value fails where it is given, before
any data are read.  A config is frozen: a run's settings cannot change under it.

Documentation may name a tuned default of the planner as ``$NAME`` (e.g.
``$DEFAULT_SAMPLES``): :func:`option_doc` fills it in from the values it is
given (:data:`synthdp.methods.game.defaults.PLAN_DEFAULTS`).

This module imports no numpy or pandas (the types ``Schema``, ``QueryClass``
and ``MeasureOptions`` are named for type checkers only): the command line
builds its flags and ``--help`` from it without loading the library.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from synthdp.core.errors import InputError, UnknownOptionError
from synthdp.core.options import GROUPS, comment_docs, option, unknown_option
from synthdp.core.parameters import check_all, check_delta_ceiling
from synthdp.methods.game.settings import GameSettings

if TYPE_CHECKING:
    from synthdp.core.schema import Schema
    from synthdp.methods.measure.settings import MeasureOptions
    from synthdp.queries.base import QueryClass

__all__ = ["GROUPS", "SynthesisConfig", "option", "option_doc", "options_doc", "options_in", "measure_settings_doc"]


#: The options that describe one table's columns: for two linked tables, a dict keyed by table name
#: (docs/privacy.md §12).
TABLE_OPTIONS = ("schema", "categorical", "bounds", "bins", "cuts", "datetimes", "learn_bounds", "decimals",
                 "dtypes", "categories", "nullable", "derived")


@dataclass(frozen=True, kw_only=True)
class SynthesisConfig(GameSettings):
    """Every option of a run except the data.

    The game's options are declared in its package
    (:class:`~synthdp.methods.game.settings.GameSettings`) and inherited here;
    select-measure-estimate's tuned settings are one object,
    ``measure_options``.  Options left at ``None`` or ``"auto"`` are chosen by
    :func:`synthdp.plan.make_plan` from public inputs only (the report's
    ``plan`` says what was chosen and why).
    """

    # -- privacy ------------------------------------------------------------------------------------------------
    epsilon: float = option(group="privacy", doc="""
        Total privacy budget epsilon of the release, in (0, 100] (typical budgets are 0.1 to 10). The ledger never
        spends more and the report shows what was spent. Each run is a new release that spends it again: releases
        on the same data compose.""")
    delta: float | None = option(None, group="privacy", doc="""
        Total delta; None (or 0) for pure epsilon-DP. Choose it well below 1/n: under add-remove n is private, so
        take a public upper bound N on the number of rows and use delta <= 1/N^2 (at most 1e-3 is accepted, with a
        warning above 1/n_rows); under replace-one delta > 1/n is refused.""")
    relation: str = option("add-remove", group="privacy", doc="""
        The neighbouring relation (docs/privacy.md §1.3): 'add-remove' (one record added or removed; the number of
        rows is private) or 'replace-one' (one record changed; the number of rows is public).""")
    privacy_unit: str | None = option(None, group="privacy", doc="""
        Column identifying a person (the privacy unit): the guarantee then covers one unit with all its rows.
        Needs max_rows_per_unit; the column is never released (docs/privacy.md §10.6). None: one row per person.""")
    max_rows_per_unit: int | str | None = option(None, group="privacy", doc="""
        Public bound k on the rows of one privacy unit: at most k rows per unit are kept (chosen at random per
        unit) before anything else, and every noise scale grows by k. 'auto' chooses k privately with 1/20 of
        epsilon (docs/privacy.md §10.6).""")
    links: Mapping[str, str] | None = option(None, group="privacy", doc="""
        Two tables released together (the data a dict of two DataFrames or files by name; with engine 'dask' the
        child table's files are counted part by part, docs/guide/linked-tables.md): the one link from the child
        table's foreign key to the parent table's key, {'orders.customer_id': 'customers.customer_id'}. The privacy
        unit is then one parent key with its parent row and all its child rows; max_rows_per_unit bounds the
        children kept per parent ('auto': chosen privately over the parents' child counts, docs/privacy.md §12).""")
    keys: Mapping[str, str] | None = option(None, group="privacy", doc="""
        With links: the child table's own key column, {'orders': 'order_id'}: an identifier, never modelled, and
        written as fresh keys 1..M (docs/privacy.md §12).""")
    random_state: int | None = option(None, group="privacy", doc="""
        Seed of the run's one random generator, for reproducible experiments. Omit it (None) for a release: a
        seeded noise stream is not cryptographic, and the report says the run was seeded.""")

    # -- method -------------------------------------------------------------------------------------------------
    query_class: str | QueryClass = option("marginals:3", group="method", doc="""
        The queries the synthetic table should answer well: 'marginals:K', 'conjunctions', 'parities:K',
        'halfspaces', 'workload:FILE.json', ... or a QueryClass object.""")
    method: str = option("auto", group="method", doc="""
        'measure': select-measure-estimate (docs/privacy.md §8: private selection of marginals, noisy
        measurements, a graphical model; without delta pure DP with Laplace measurements, marginal classes only,
        §10.2). 'game': the synthetic-data game (§4; any class, pure DP too). 'auto': measure where it serves the
        class, unless a game option is set; the report's plan says which and why.""")
    measure_options: MeasureOptions | None = option(None, group="method", doc="""
        Select-measure-estimate's tuned settings, one object: MeasureOptions(rounds_per_attribute=..., ...) from
        synthdp (CLI: --measure-option NAME=VALUE, repeatable). None: the tuned defaults (docs/benchmarks.md). Setting
        it makes method 'auto' choose select-measure-estimate. The settings: $MEASURE_SETTINGS""")

    # -- columns and schema ---------------------------------------------------------------------------------------
    schema: Schema | str | os.PathLike | None = option(None, group="schema", doc="""
        A Schema or a schema file (draft one with 'synthdp schema'; or a private-pgm domain file {attr: size})
        that makes the whole domain public. Without it the options below describe the domain, and columns without
        public categories have them learned privately by partition selection, charged to the budget
        (docs/privacy.md §9; needs delta).""")
    categorical: Sequence[str] | None = option(None, group="schema", doc="""
        Numeric columns to treat as categorical.""")
    bounds: Mapping[str, tuple[float, float]] | None = option(None, group="schema", doc="""
        Public bounds (lo, hi) of numeric columns, by column; dates for a datetime column.""")
    bins: Mapping[str, int] | None = option(None, group="schema", doc="""
        Number of equal-width bins of bounded numeric columns, by column.""")
    cuts: Mapping[str, Sequence[float]] | None = option(None, group="schema", doc="""
        Public cut points of bounded numeric columns, by column: cells [lo, c1), ..., [ck, hi].""")
    discretise: str = option("privtree", group="schema", doc="""
        Cells of a bounded numeric column without public bins or cuts: 'privtree' learns them privately by
        PrivTree from a tenth of the method's budget (docs/privacy.md §10.3); 'equal-width' takes 10 equal-width
        bins, free.""")
    point_masses: bool = option(True, group="method", doc="""
        Values many rows of a numeric column hold (0, a round amount) are selected privately and kept as cells of
        their own before PrivTree, from a twentieth of the method's budget and an eighth of delta
        (docs/privacy.md §11.2; select-measure-estimate with a delta only).""")
    cells_from_total: bool = option(False, group="method", doc="""
        PrivTree's threshold set from a noisy count of the rows released first, from a fiftieth of the method's
        epsilon: a tree its total says would stop above depth 3 splits further (docs/privacy.md §13). Off by
        default: on the benchmark tables it did not help (docs/benchmarks.md).""")
    datetimes: Mapping[str, str | None] | Sequence[str] | None = option(None, group="schema", doc="""
        Datetime columns (a list, or {column: strptime format}): numeric columns of timestamps, bounds given as
        dates, written back as datetimes. The format is their precision (without a time of day: whole days) and written form
        (none: ISO 8601, whole seconds). Bounds written as dates, and a datetime dtype in dtypes (its zone too),
        make a datetime column too; a datetime64 column of a DataFrame does not (docs/privacy.md §10.1).""")
    learn_bounds: Mapping[str, str] | Sequence[str] | None = option(None, group="schema", doc="""
        Numeric columns without public bounds whose bounds are learned privately (a list, or {column: 'int64' or
        'float64'}, the output dtype; by default the one dtypes declares, else float64) from a fifth of the
        budget (docs/privacy.md §10.4; needs delta).""")
    decimals: Mapping[str, int] | None = option(None, group="schema", doc="""
        Public precision of float columns, by column: synthetic values are rounded to that many decimals
        (post-processing); declared decimals make a column real, whatever its bounds.""")
    dtypes: Mapping[str, str] | None = option(None, group="schema", doc="""
        Public output dtype per column ('int64', 'float64', 'bool', 'str', 'category', 'datetime64[ns]',
        'datetime64[ns, Europe/Paris]'): the column's type, declared. A DataFrame's own dtypes never type a column
        (pandas infers them from the rows; docs/privacy.md §10.1): without a declaration here, in a schema, in
        datetimes, decimals or learn_bounds, a column takes the type its bounds are written in (integers: whole
        numbers), and a column of bounds to learn comes back real. synthdp.draft_schema(df) drafts them all.""")
    categories: Mapping[str, Sequence[Any]] | None = option(None, group="schema", doc="""
        Public category lists, by column: the values a categorical column may take (others are refused).""")
    nullable: Sequence[str] | None = option(None, group="schema", doc="""
        Columns with public domains that may be missing (and, with other, columns whose categories are learned).""")
    missing: Sequence[str] | None = option(None, group="schema", doc="""
        Extra tokens meaning 'missing' (e.g. '?'); surrounding spaces of text values are stripped.""")
    other: str | None = option(None, group="schema", doc="""
        A public label for the values partition selection did not keep of a column whose categories are learned
        (e.g. 'other'): they come back as this label, not as missing values (docs/privacy.md §9; a public rule,
        no cost), and such a column may be missing only when nullable names it. A schema file gives it per column
        ("other": LABEL), for given categories too.""")
    unsafe_public_categories: bool = option(False, group="schema", doc="""
        Read the categories of columns without public ones off the data: NOT differentially private (it publishes
        every value that occurs; the report says so). Default: learn them privately by partition selection, which
        needs delta (docs/privacy.md §9).""")
    clip: bool = option(False, group="schema", doc="""
        Clamp numeric values outside their public bounds instead of refusing the table.""")
    max_categories: int = option(100, group="schema", doc="""
        Refuse categorical columns with more distinct values than this.""")
    derived: Mapping[str, str] | None = option(None, group="schema", doc="""
        Columns that are public functions of others, by column: 'COL.year', 'COL.month', 'COL.day', 'COL.weekday'
        or 'COL.hour' of a datetime column, 'A + B' or 'A - B' of two numeric columns. They are never modelled
        (their values in the data are not read) and are computed after sampling, so every row agrees with itself
        (docs/privacy.md §10.10); added to a given schema's.""")

    # -- engine -------------------------------------------------------------------------------------------------
    engine: str = option("pandas", group="engine", doc="""
        The counting pass: 'pandas' (in memory) or 'dask' (part by part on a dask.distributed cluster; needs a
        public schema and synthdp[dask]). Both give the same release for the same seed.""")
    scheduler: str | None = option(None, group="engine", doc="""
        Address of a running Dask scheduler, with engine 'dask' (None: a local cluster).""")

    # -- output -------------------------------------------------------------------------------------------------
    n_rows: int | None = option(None, group="output", doc="""
        Rows written: a resample of the release (post-processing). None: for measure the model's noisy total
        count, for the game its released plays; the input's size is never used (it is private under
        add-remove).""")
    numeric: str = option("uniform", group="output", doc="""
        Numeric columns as numbers drawn uniformly inside their released cell ('uniform': integers for integer
        columns, within the public bounds) or as the cell labels 'lo-hi' ('label').""")
    progress: bool = option(True, group="output", doc="""
        Show a progress bar and notes on the run's steps on standard error.""")
    strict: bool = option(False, group="output", doc="""
        Fail when the release has columns far from the real table (a shape far off, values lost, rows piled on
        one value, a constant column, a correlation moved; read off the real rows for the data owner only,
        docs/guide/evaluation.md), after the release is made: Python raises FarFromRealError, which carries the
        result; the command writes its outputs, lists the findings and exits with status 3. Without it the
        findings are only warnings for the data owner.""")

    def __post_init__(self) -> None:
        values = self.to_dict()
        if self.links is not None:  # given per table: each table's are checked in its view's config (§12)
            values = {name: value for name, value in values.items() if name not in TABLE_OPTIONS}
        check_all(values)
        check_delta_ceiling(self.delta, self.relation)  # the add/remove ceiling; the 1/n_rows warning is the report's
        self._check_unit()
        if self.scheduler is not None and self.engine != "dask":
            raise InputError("scheduler= is the address of a Dask scheduler; it needs engine='dask'")
        if self.strict and self.engine != "pandas":
            raise InputError(f"strict=True compares the release with the real rows in memory, which engine="
                             f"{self.engine!r} never holds (CLI --strict); drop strict, or use engine='pandas'")
        if self.epsilon_per_round is not None and self.rounds is not None:
            raise InputError("give rounds or epsilon_per_round, not both: each fixes the other through the budget")
        if self.epsilon_per_round is not None and not self.epsilon_per_round <= self.epsilon:
            raise InputError(f"epsilon_per_round must be in (0, epsilon], got {self.epsilon_per_round!r} "
                             f"with epsilon={self.epsilon!r}")

    def _check_links(self) -> None:
        """Two linked tables: the unit is the parent key, with a public ``k`` (or ``"auto"``), add/remove neighbours,
        in memory (docs/privacy.md §12)."""
        if self.links is None:
            if self.keys is not None:
                raise InputError("keys= names the child table's own key of two linked tables; it needs links=")
            return
        if self.privacy_unit is not None:
            raise InputError("with links= the privacy unit is the parent table's key (docs/privacy.md §12): drop "
                             "privacy_unit")
        if self.max_rows_per_unit is None:
            raise InputError("links= needs max_rows_per_unit=k, a public bound on the child rows kept per parent "
                             "(every noise scale of the joined view grows by k), or max_rows_per_unit='auto' to "
                             "choose it privately (docs/privacy.md §12)")
        if self.relation != "add-remove":
            raise InputError("links= needs relation='add-remove': neighbours add or remove one parent with all its "
                             "child rows, whose number is never public (docs/privacy.md §12)")
        if self.strict:
            raise InputError("links= runs without strict (not offered for two tables yet)")
        if self.max_rows_per_unit == "auto" and self.engine != "pandas":
            child = next(iter(self.links)).partition(".")[0] if isinstance(self.links, Mapping) else "child"
            raise InputError(f"max_rows_per_unit='auto' reads table {child!r} in memory, which engine="
                             f"{self.engine!r} does not: give a number (CLI --max-rows-per-unit K), or use "
                             "engine='pandas'")

    def _check_unit(self) -> None:
        """A privacy unit needs its public bound ``k``, add/remove neighbours and no PRSMA (docs/privacy.md §10.6)."""
        self._check_links()
        if self.links is not None:
            return
        if self.max_rows_per_unit is not None and self.privacy_unit is None:
            raise InputError("max_rows_per_unit bounds the rows of each privacy unit; it needs privacy_unit= the "
                             "column naming the unit (CLI --privacy-unit COL)")
        if self.privacy_unit is None:
            return
        if self.max_rows_per_unit is None:
            raise InputError(f"privacy_unit={self.privacy_unit!r} needs max_rows_per_unit=k (CLI --max-rows-per-unit "
                             "k), the public bound on the rows kept per unit: every sensitivity is k times that of "
                             "one row (docs/privacy.md §10.6)")
        if self.relation != "add-remove":
            raise InputError("privacy_unit needs relation='add-remove': a unit holds 1 to k rows, so the number of "
                             "rows is never public (docs/privacy.md §10.6)")
        if self.max_rows_per_unit == "auto" and self.engine != "pandas":
            raise InputError("max_rows_per_unit='auto' counts the rows of every unit in memory; with engine='dask' "
                             "give a public k")
        if self.query_player in ("prsma", "prsma-exact"):
            raise InputError(f"query_player={self.query_player!r} cannot run with a privacy unit yet (PRSMA's pieces "
                             "would have to be cut from whole units, docs/privacy.md §10.6); use query_player='auto'")

    @classmethod
    def of(cls, **options: Any) -> "SynthesisConfig":
        """The config of ``options``; an unknown name is refused with the nearest valid names."""
        cls.check_names(options)
        return cls(**options)

    @classmethod
    def check_names(cls, names: Sequence[str]) -> None:
        """Refuse the names that are not options, each with the nearest valid names."""
        unknown = [name for name in names if name not in cls.names()]
        if unknown:
            raise UnknownOptionError("; ".join(unknown_option(name, cls.names()) for name in unknown))

    @property
    def contribution_bound(self) -> int:
        """Rows one neighbour may add or remove: ``max_rows_per_unit`` with a privacy unit, else 1 (§10.6).

        ``"auto"`` has no value until the run chooses it privately: reading it before raises.
        """
        if self.privacy_unit is None:
            return 1
        if self.max_rows_per_unit == "auto":
            raise InputError("max_rows_per_unit='auto' is chosen privately when a run starts (docs/privacy.md "
                             "§10.6); give a public k here")
        return self.max_rows_per_unit

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, group by group (:data:`GROUPS`), in declaration order within a group."""
        order = list(GROUPS)
        return tuple(f.name for f in sorted(dataclasses.fields(cls), key=lambda f: order.index(f.metadata["group"])))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The default of every option that has one (all but ``epsilon``)."""
        fields = cls.__dataclass_fields__
        return {name: fields[name].default for name in cls.names() if fields[name].default is not dataclasses.MISSING}

    def to_dict(self) -> dict[str, Any]:
        """The options as a flat mapping (shallow: values are not copied)."""
        return {name: getattr(self, name) for name in self.names()}

    def schema_options(self) -> dict[str, Any]:
        """The options that build a schema from a DataFrame (:meth:`synthdp.core.schema.Schema.from_dataframe`)."""
        return dict(categorical=self.categorical, bounds=self.bounds, bins=self.bins, cuts=self.cuts,
                    discretise=self.discretise, datetimes=self.datetimes,
                    learn_bounds=self.learn_bounds, decimals=self.decimals, dtypes=self.dtypes,
                    categories=self.categories,
                    nullable=self.nullable, clip=self.clip, max_categories=self.max_categories, derived=self.derived,
                    missing_values=tuple(self.missing or ()), unsafe_public_categories=self.unsafe_public_categories,
                    other=self.other)


def options_in(group: str) -> tuple[str, ...]:
    """The names of the options of ``group`` (a key of :data:`GROUPS`), in declaration order."""
    fields = SynthesisConfig.__dataclass_fields__
    return tuple(name for name in SynthesisConfig.names() if fields[name].metadata["group"] == group)


def option_doc(name: str, values: Mapping[str, Any] | None = None) -> str:
    """The documentation of option ``name``, with the planner's defaults ``$NAME`` filled in from ``values``."""
    doc = SynthesisConfig.__dataclass_fields__[name].metadata["doc"]
    settings = {"MEASURE_SETTINGS": measure_settings_doc()} if "$MEASURE_SETTINGS" in doc else {}
    return Template(doc).safe_substitute({**settings, **(values or {})})


#: Where select-measure-estimate's settings are declared (read as text: the command line loads no numpy).
MEASURE_SETTINGS_SOURCE = Path(__file__).parent / "methods" / "measure" / "settings.py"


@functools.cache
def measure_settings_doc() -> str:
    """Select-measure-estimate's settings, ``name = default: what it is``, read off the declaration of
    :class:`~synthdp.methods.measure.settings.MeasureOptions` (its fields, defaults and the first sentence of
    their ``#:`` comments, whose rest gives the measurements behind each default) without importing it."""
    groups: list[tuple[list[str], str]] = []  # fields under one comment block share its text
    for f in comment_docs(MEASURE_SETTINGS_SOURCE, "MeasureOptions"):
        if groups and groups[-1][1] == f.first_sentence():
            groups[-1][0].append(f"{f.name} = {f.default}")
        else:
            groups.append(([f"{f.name} = {f.default}"], f.first_sentence()))
    return "; ".join(f"{', '.join(names)}: {doc}" for names, doc in groups) + "."


def options_doc(values: Mapping[str, Any] | None = None, width: int = 100) -> str:
    """Every option, group by group, as the numpydoc ``Parameters`` section of a docstring."""
    lines = ["Parameters (one declaration: :class:`synthdp.config.SynthesisConfig`)", "-" * 70]
    for group, heading in GROUPS.items():
        lines.append(f"*{heading}*")
        for f in map(SynthesisConfig.__dataclass_fields__.get, options_in(group)):
            default = "required" if f.default is dataclasses.MISSING else f"default {f.default!r}"
            lines.append(f"``{f.name}`` : {f.type}, {default}")
            lines.extend(textwrap.wrap(option_doc(f.name, values), width, initial_indent="    ",
                                       subsequent_indent="    ", break_on_hyphens=False))
        lines.append("")
    return "\n".join(lines)

