"""The one configuration object of a synthesis run, shared by the API, :class:`~synthdp.Synthesizer` and the CLI.

:class:`SynthesisConfig` holds every keyword of
:func:`synthdp.generate_synthetic`, checked on construction by the rules of
:mod:`synthdp.core.parameters` (so a bad value fails where it is given, before
any data are read).  It is frozen: a run's settings cannot change under it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from synthdp.core.errors import InputError
from synthdp.core.parameters import check_all, check_delta

#: Tuned defaults that are not ``None`` (docs/benchmarks.md; privacy does not depend on them).
DEFAULT_THETA = 0.3
DEFAULT_RESOLUTION = 100
DEFAULT_NOISE = "one-sided"


#: Parameters that only the synthetic-data game reads (docs/privacy.md §4).
GAME_PARAMETERS = ("rounds", "epsilon_per_round", "burn_in", "query_player", "oracle", "samples_per_round",
                   "time_limit", "resolution", "ftpl_theta", "ftpl_noise", "respond_to", "prsma_max_calls",
                   "work_limit", "data_work_limit", "insist")
#: Game parameters select-measure-estimate also reads for a class it selects from with RSPM (its oracle, Mode N).
ORACLE_PARAMETERS = ("oracle", "time_limit")


@dataclass(frozen=True, kw_only=True)
class SynthesisConfig:
    """Every parameter of a run except the data (see :func:`synthdp.generate_synthetic` for their meaning).

    Parameters left at ``None`` or ``"auto"`` are chosen by
    :func:`synthdp.plan.make_plan` from public inputs only.
    """

    epsilon: float
    query_class: Any = "marginals:3"
    delta: float | None = None
    method: str = "auto"
    rounds: int | None = None
    epsilon_per_round: float | None = None
    burn_in: float | None = None
    query_player: str = "auto"
    oracle: str = "auto"
    samples_per_round: int | None = None
    n_rows: int | None = None
    schema: Any = None
    random_state: int | None = None
    progress: bool = True
    time_limit: float | None = None
    relation: str = "add-remove"
    categorical: Sequence[str] | None = None
    bounds: Mapping[str, tuple[float, float]] | None = None
    bins: Mapping[str, int] | None = None
    cuts: Mapping[str, Sequence[float]] | None = None
    datetimes: Any = None
    learn_bounds: Any = None
    decimals: Mapping[str, int] | None = None
    discretise: str = "privtree"
    categories: Mapping[str, Sequence[Any]] | None = None
    nullable: Sequence[str] | None = None
    missing: Sequence[str] | None = None
    unsafe_public_categories: bool = False
    clip: bool = False
    max_categories: int = 100
    resolution: int = DEFAULT_RESOLUTION
    ftpl_theta: float = DEFAULT_THETA
    ftpl_noise: str = DEFAULT_NOISE
    respond_to: str = "auto"
    numeric: str = "uniform"
    prsma_max_calls: int = 100_000
    work_limit: float | None = None
    data_work_limit: float | None = None
    insist: bool = False
    engine: str = "pandas"
    scheduler: str | None = None
    privacy_unit: str | None = None
    max_rows_per_unit: int | None = None

    def __post_init__(self) -> None:
        check_all(self.to_dict())
        check_delta(self.delta, self.relation)  # the add/remove ceiling; the 1/n_rows warning is the report's
        self._check_unit()
        from synthdp.engines import ENGINES

        if self.engine not in ENGINES:
            raise InputError(f"unknown engine {self.engine!r}; choose one of {list(ENGINES)}")
        if self.scheduler is not None and self.engine != "dask":
            raise InputError("scheduler= is the address of a Dask scheduler; it needs engine='dask'")
        if self.epsilon_per_round is not None and self.rounds is not None:
            raise InputError("give rounds or epsilon_per_round, not both: each fixes the other through the budget")
        if self.epsilon_per_round is not None and not self.epsilon_per_round <= self.epsilon:
            raise InputError(f"epsilon_per_round must be in (0, epsilon], got {self.epsilon_per_round!r} "
                             f"with epsilon={self.epsilon!r}")

    def _check_unit(self) -> None:
        """A privacy unit needs its public bound ``k``, add/remove neighbours and no PRSMA (docs/privacy.md §10.6)."""
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
        """The parameter names, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a flat mapping (shallow: values are not copied)."""
        return {name: getattr(self, name) for name in self.names()}

    def game_settings(self) -> list[str]:
        """The game-only parameters given a value other than their default (they choose the game under ``auto``)."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        return [name for name in GAME_PARAMETERS if getattr(self, name) != defaults[name]]

    def schema_options(self) -> dict[str, Any]:
        """The options that build a schema from a DataFrame (:meth:`synthdp.core.schema.Schema.from_dataframe`)."""
        return dict(categorical=self.categorical, bounds=self.bounds, bins=self.bins, cuts=self.cuts,
                    discretise=self.discretise, datetimes=self.datetimes,
                    learn_bounds=self.learn_bounds, decimals=self.decimals, categories=self.categories,
                    nullable=self.nullable, clip=self.clip, max_categories=self.max_categories,
                    missing_values=tuple(self.missing or ()), unsafe_public_categories=self.unsafe_public_categories)
