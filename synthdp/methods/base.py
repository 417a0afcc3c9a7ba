"""What every method is: the interface the driver plans, runs and reports through, and the values it passes.

A method (:class:`Method`) owns four things, so that adding one touches its
own module and :mod:`synthdp.methods.registry` only:

* its **suitability** (:meth:`Method.suitability`): whether it serves the
  public inputs, why, and the data-independent error bound ``auto`` compares
  (docs/privacy.md §10.2); computed from public inputs only, so choosing
  costs nothing;
* its **plan** (:meth:`Method.plan`): its own frozen plan dataclass, every
  choice with its reason, refusing before any private step what it cannot
  run (docs/privacy.md §4.1: a method's inputs are fixed before the data are
  touched);
* its **run** (:meth:`Method.run`): the private part, spending through the
  ledger it is given, returning a :class:`MethodOutput`;
* its **report section** (:meth:`Method.summary`): the line the report shows
  for it, from the release only.

Methods never see the driver's configuration: the driver hands them a
:class:`MethodInputs` of public quantities (the query class, the exact
budget, the relation, the contribution bound and the run's options by name).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, ClassVar, Mapping

import numpy as np

from synthdp.core.parameters import Relation
from synthdp.oracles.base import Oracle
from synthdp.queries.base import QueryClass


@dataclass(frozen=True)
class Choice:
    """One planned value and why it was chosen (or that the caller gave it)."""

    value: Any
    reason: str

    def to_dict(self) -> dict[str, Any]:
        value = self.value.name if isinstance(self.value, Oracle) else self.value
        plain = isinstance(value, (int, float, str, bool, type(None))) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value))
        return {"value": value if plain else str(value), "reason": self.reason}


@dataclass(frozen=True)
class MethodInputs:
    """The public quantities a method plans and runs from (never the data, never the driver's configuration).

    ``epsilon``/``delta`` are the method's budget as exact rationals (``delta``
    None: pure DP), what the private steps before it left; ``filter_rho`` and
    ``filter_delta`` are what those steps already spent inside a zCDP filter
    the method may continue (docs/privacy.md §10.3, §10.5); ``filter_budget`` that filter's ``rho`` when a caller
    fixed it (§12).  ``options`` holds
    the run's options by name; a method reads the ones it declares
    (:meth:`Method.reads`).  ``given`` names the method options the caller set
    to other than their defaults.
    """

    query_class: QueryClass
    epsilon: Fraction
    delta: Fraction | None
    relation: Relation
    contribution_bound: int
    options: Mapping[str, Any]
    #: The run's whole epsilon, before any private step: ``auto``'s bounds read it, so that the method chosen on
    #: the schema as given is the one chosen after the steps ahead spent their share (docs/privacy.md §10.2).
    budget_epsilon: Fraction
    given: tuple[str, ...] = ()
    filter_rho: Fraction = Fraction(0)
    filter_delta: Fraction = Fraction(0)
    #: The zCDP filter's whole ``rho`` when it is fixed outside the run: a public share of one conversion for
    #: several releases measured in one filter (two linked views, docs/privacy.md §12); None: the conversion of
    #: this run's own ``(epsilon, delta)`` (§8.5).
    filter_budget: Fraction | None = None
    #: Columns whose marginals alone another release answers (a linked run's joined view: its parent's columns and
    #: ``m``, docs/privacy.md §12 step 2): a method that can leave them out does (select-measure-estimate's
    #: ``released_columns``).
    released_columns: tuple[str, ...] = ()

    @property
    def pure(self) -> bool:
        """Pure DP: no delta (docs/privacy.md §10.2)."""
        return self.delta is None

    @property
    def n_rows(self) -> int | None:
        """The caller's number of output records, or None (never the input's size)."""
        return self.options.get("n_rows")

    @property
    def progress(self) -> bool:
        return bool(self.options.get("progress", False))


def settings_of(kind: type, options: Mapping[str, Any]):
    """An instance of the dataclass ``kind`` with each field read from ``options`` by its name."""
    return kind(**{f.name: options[f.name] for f in fields(kind)})


@dataclass(frozen=True)
class ErrorBound:
    """A data-independent bound ``E[max error] <= a/n + b`` over the workload, and how the plan states it."""

    a: float
    b: float
    statement: str

    def at_most_wherever_informative(self, other: "ErrorBound") -> bool:
        """True if this bound is at most ``other`` at every ``n`` where this one is below 1 (says something).

        Both are ``a/n + b``; their difference is monotone in ``1/n``, so it is
        enough to compare them as ``n`` grows without end and at the smallest
        informative ``n = a / (1 - b)``.
        """
        if self.b >= 1:
            return False
        at_infinity = self.b <= other.b
        at_smallest = (self.a - other.a) * (1 - self.b) / self.a + self.b - other.b <= 0
        return at_infinity and at_smallest


@dataclass(frozen=True)
class Suitability:
    """Whether a method serves the public inputs, and why; with its error bound when it states one."""

    serves: bool
    reason: str
    bound: ErrorBound | None = None


@dataclass
class MethodOutput:
    """What a method's run returns: the released codes, the ledger, and what the report needs.

    ``post_rng`` is the (seeded or not) generator the post-processing steps
    continue with; ``release`` holds the method's release fields (paid for or
    public), ``diagnostics`` its measured ones (never published).
    """

    codes: np.ndarray
    ledger: Any
    post_rng: np.random.Generator
    conditional: bool
    selected_queries: list[str]
    release: dict[str, Any]
    diagnostics: dict[str, Any]
    notes: list[str]
    #: Warnings for the release summary, read off released values only (e.g. :func:`~synthdp.methods.measure.method.
    #: joint_warning`).
    warnings: list[str] = field(default_factory=list)
    #: The released estimate the records were drawn from (``sample(rows, generator)``, docs/privacy.md §10.9);
    #: None when the records are released as they are (the game's plays), which are then the model.
    model: Any = None


class Method(ABC):
    """One synthesis method: its suitability, plan, run and report section (see the module docstring).

    ``name`` is what callers pass as ``method=`` and what the release records;
    ``title`` is how the plan's reasons name it.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    #: The run options this method owns, declared in its package: only it reads them, and setting one to other
    #: than its default makes ``auto`` choose it (:func:`synthdp.methods.registry.given_options`).
    options: ClassVar[tuple[str, ...]] = ()
    #: The fields of the method's section of the release, with their values when another method ran (every
    #: release has every registered method's fields: :func:`synthdp.methods.registry.release_defaults`).
    release_defaults: ClassVar[Mapping[str, Any]] = {}

    def reads(self, query_class: QueryClass) -> frozenset[str]:
        """The run options this method reads for ``query_class`` (``auto`` leaves it when others are given): its
        own by default."""
        return frozenset(self.options)

    @abstractmethod
    def suitability(self, inputs: MethodInputs) -> Suitability:
        """Whether the method serves ``inputs`` and why (public inputs only: no privacy cost)."""

    @abstractmethod
    def plan(self, inputs: MethodInputs) -> Any:
        """The method's own plan (a frozen dataclass holding ``inputs``); refuses what it cannot run."""

    @abstractmethod
    def run(self, plan: Any, real, ledger, rng, zcdp=None) -> MethodOutput:
        """The private part, spending through ``ledger`` (or ``zcdp``, the filter opened before it)."""

    @abstractmethod
    def choices(self, plan: Any) -> dict[str, dict[str, Any]]:
        """The plan's choices with their reasons, as plain data for the report."""

    @abstractmethod
    def rows(self, plan: Any) -> Choice:
        """How many records the output has without ``n_rows``, and why (never the input's size)."""

    @abstractmethod
    def summary(self, release) -> str:
        """The report's line for this method, from the release only."""

    def release_section(self, release: Mapping[str, Any]) -> dict[str, Any]:
        """The method's section of the release from its run's ``MethodOutput.release``: only the fields it
        declares (:attr:`release_defaults`), the others at their defaults."""
        unknown = set(release) - set(self.release_defaults)
        if unknown:
            raise ValueError(f"method {self.name!r} released fields it does not declare: {sorted(unknown)}")
        return {**copy.deepcopy(dict(self.release_defaults)), **release}

    def zcdp_budget(self, plan: Any) -> Fraction | None:
        """The zCDP budget of the filter the method spends in (docs/privacy.md §8.4), or None if it has none.

        Private steps before the method (domains, cells, bounds) then spend
        from the same filter.
        """
        return None

    def converted_budget(self, plan: Any) -> tuple[Fraction, Fraction] | None:
        """The ``(epsilon, delta)`` the filter's ``rho`` is the conversion of (§8.5), reserves set aside, or None if
        the method has no filter: what several releases measured in one filter add up (docs/privacy.md §12)."""
        return None

    def open_filter(self, plan: Any, ledger):
        """Charge ``ledger`` for the method's zCDP filter and return the filter (methods with one only)."""
        raise NotImplementedError(f"method {self.name!r} spends through the (epsilon, delta) ledger, not a filter")

    def check_public_n(self, plan: Any, n: int) -> None:
        """Refuse what does not fit a public ``n`` (replace-one only, docs/privacy.md §1.3); nothing by default."""
