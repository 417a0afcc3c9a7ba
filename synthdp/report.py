"""The report of a run, in two parts: the **release** and the **diagnostics**.

* :class:`Release` holds only what the ledger paid for and public parameters:
  the budget and what the ledger spent, the relation, the method and the
  plan's choices with their reasons, the selected queries, the rows written,
  the a-priori bound when it says something.  It is safe to publish with the
  synthetic table, and it is what :meth:`Report.to_dict` and the CLI's
  ``--report`` write.
* :class:`Diagnostics` holds what the run measured about itself: wall times,
  oracle call counts and times, failed or unproven calls.  These track hidden
  quantities (how often PRSMA's solver failed, how hard the real data made
  the search), so they are **not** differentially private: never publish
  them (docs/privacy.md §3.2 on PRSMA's failure flags).

Budget figures come from the ledger, which the mechanisms fill as they spend;
nothing here recomputes a privacy cost.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from synthdp.methods.base import MethodOutput
from synthdp.methods import registry
from synthdp.model import copula_columns
from synthdp.plan import Plan
from synthdp.transfer import population_statement

#: Failure probabilities of the summary's population statement (public, fixed).
POPULATION_FAILURE = 0.1
POPULATION_SAMPLE_FAILURE = 0.05
#: The mark every diagnostics output carries.
DO_NOT_PUBLISH = ("DO NOT PUBLISH: diagnostics (times, call and failure counts) depend on the private data "
                  "and are not covered by the privacy guarantee")


def unit_line(privacy_unit: str, k: int) -> str:
    """The summary line naming the privacy unit and its bound (docs/privacy.md §10.6)."""
    return (f"privacy unit: column {privacy_unit!r}; neighbours add or remove one unit with up to {k} rows (at most "
            f"{k} rows kept per unit)")


#: The text of an exact value as the release writes it: ``str`` of a :class:`~fractions.Fraction`.
EXACT = re.compile(r"-?[0-9]+(/[0-9]+)?")


def with_decimals(value: Any) -> Any:
    """``value`` with, beside every exact value ``"KEY": "p/q"`` of a mapping, its decimal ``"KEY_decimal": p/q``
    as a float (nearest), at any depth; the exact text stays, for programs that compose budgets exactly."""
    if isinstance(value, list):
        return [with_decimals(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        out[key] = with_decimals(item)
        if isinstance(item, str) and EXACT.fullmatch(item):
            out[f"{key}_decimal"] = float(Fraction(item))
    return out


@dataclass(frozen=True)
class Release:
    """What may be published with the synthetic table: paid for by the ledger, or public."""

    epsilon_budget: float
    delta_budget: float | None  # None under pure DP (docs/privacy.md §10.2)
    epsilon_spent: float
    delta_spent: float | None
    composition: str
    relation: str
    method: str
    query_class: str
    rows_written: int
    seeded: bool
    conditional: bool
    plan: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: How numeric columns come back (values drawn inside the cells, or cell labels).
    numeric_values: str = ""
    ledger: list[dict[str, Any]] = field(default_factory=list)
    selected_queries: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The privacy unit (a public column name) and its public bound ``k``: neighbours are one unit of up to ``k``
    #: rows (docs/privacy.md §10.6); None for one row per person.
    privacy_unit: str | None = None
    max_rows_per_unit: int | None = None
    #: The method's own section (:attr:`~synthdp.methods.base.Method.release_defaults` filled by its run's
    #: ``MethodOutput.release``): the game's rounds and players, select-measure-estimate's measurements and zCDP
    #: ledger.  Read as attributes (``release.rounds``).
    section: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        """A field of the method's section; another method's field has its default (``rho_budget`` of a game)."""
        if name.startswith("__") or name == "section":
            raise AttributeError(name)
        fields = self.method_fields()
        if name not in fields:
            raise AttributeError(f"the release has no field {name!r}")
        return fields[name]

    def method_fields(self) -> dict[str, Any]:
        """Every method's release fields, at their defaults (:func:`synthdp.methods.registry.release_defaults`),
        with this run's method's section over them: one layout for every release, so that releases of different
        methods read and compare alike."""
        return {**registry.release_defaults(), **self.section}

    def to_dict(self) -> dict[str, Any]:
        """The release as plain data, the method's fields beside the common ones; a pure-DP release has no
        ``delta`` fields at all (docs/privacy.md §10.2).

        Exact values (``"rho": "1/20"``) keep their exact text, each with its decimal beside it
        (``"rho_decimal": 0.05``): :func:`with_decimals`.
        """
        out = asdict(self)
        del out["section"]
        out.update(self.method_fields())
        if self.delta_budget is None:
            del out["delta_budget"], out["delta_spent"]
        return with_decimals(out)


@dataclass(frozen=True)
class Diagnostics:
    """What the run measured about itself.  **Do not publish**: see the module docstring."""

    seconds: float
    oracle_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    round_seconds: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"warning": DO_NOT_PUBLISH, **asdict(self)}

    def summary(self) -> str:
        """A few lines for the data owner's eyes only."""
        lines = [DO_NOT_PUBLISH, f"run time {self.seconds:.1f} s"]
        for name, st in self.oracle_stats.items():
            role = ("data player: a failed/unproven call played the best record found (no privacy cost: the data "
                    "player is not private)" if name.startswith("data/") else "query player")
            lines.append(f"  oracle {name}: {st['calls']} calls, {st['failures']} failed/unproven, "
                         f"{st['total_time']:.2f} s total, {st['max_time']:.3f} s max ({role})")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)


@dataclass(frozen=True)
class Report:
    """The release and the diagnostics of one run.

    Attributes of the release read through (``report.epsilon_spent``);
    the diagnostics only by name (``report.diagnostics.seconds``), so that
    nothing data-dependent is read by accident.  :meth:`to_dict` and
    :meth:`summary` show the release only.
    """

    release: Release
    diagnostics: Diagnostics

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("release", "diagnostics"):
            raise AttributeError(name)
        return getattr(self.release, name)

    def to_dict(self) -> dict[str, Any]:
        """The release (safe to publish); the diagnostics are :meth:`Diagnostics.to_dict`."""
        return self.release.to_dict()

    def population(self, sample_error: float, *, sample_failure: float = POPULATION_SAMPLE_FAILURE,
                   failure: float = POPULATION_FAILURE):
        """What answers from the table promise about the population (the transfer theorem, docs/privacy.md §5).

        ``sample_error`` (with failure probability ``sample_failure``) is a
        public sample-accuracy figure for the queries asked -- an a-priori
        bound or the user's own, never an error measured on the private data.
        Only the release's spent budget and relation enter: no privacy cost.
        """
        r = self.release
        return population_statement(r.epsilon_spent, r.delta_spent or 0.0, sample_error=sample_error,
                                    sample_failure=sample_failure, failure=failure, relation=str(r.relation))

    def summary(self) -> str:
        """A few lines for the terminal, from the release only."""
        r = self.release
        if r.delta_budget is None:
            spent = f"privacy: spent epsilon={r.epsilon_spent:.6g} of budget epsilon={r.epsilon_budget:.6g}"
        else:
            spent = (f"privacy: spent epsilon={r.epsilon_spent:.6g}, delta={r.delta_spent:.3g} "
                     f"of budget epsilon={r.epsilon_budget:.6g}, delta={r.delta_budget:.3g}")
        lines = [
            f"{spent} ({r.composition} composition, {r.relation} neighbours); each run is a new release: running "
            "again on the same data spends again (Synthesizer.sample draws more rows for free)",
        ]
        if "method" in r.plan:
            lines.append(f"method {r.method}: {r.plan['method']['reason']}")
        if r.privacy_unit is not None:
            lines.append(unit_line(r.privacy_unit, r.max_rows_per_unit))
        if "bounds" in r.plan:  # released: the owner reads where the values were clipped
            lines.append(f"bounds: {r.plan['bounds']['reason']}")
        if "domains" in r.plan:  # public: the learned columns, their cost, and where the other values went
            lines.append(f"categories of {r.plan['domains']['value']}: {r.plan['domains']['reason']}")
        method = registry.METHODS.get(r.method)  # the method's own section
        lines.append(method.summary(r) if method is not None else f"method: {r.method}")
        if r.conditional:
            lines.append("WARNING: privacy conditional on no solver failure (Mode N): do not publish")
        if "A" in r.accuracy_bound:
            b = r.accuracy_bound
            if b["B"] < 1:
                lines.append(f"a-priori bound: E[max error] <= {b['A']:.4g}/n + {b['B']:.4g} (worst case)")
            else:
                lines.append(f"a-priori bound: vacuous at these settings (its constant term {b['B']:.3g} is at "
                             "least 1, the largest possible error)")
        if r.privacy_unit is not None:
            lines.append("population (transfer theorem, docs/privacy.md §5): not stated with a privacy unit: the rows "
                         "of one unit are not independent draws (docs/privacy.md §10.6)")
            lines.append(f"wrote {r.rows_written} rows")
            lines.extend(f"warning: {w}" for w in r.warnings)
            return "\n".join(lines)
        overhead = self.population(0.0).population_error
        if overhead < 1:  # a bound of 1 or more says nothing: no line (Report.population() still explains it)
            lines.append(f"population (transfer theorem, docs/privacy.md §5): answers from this table are within "
                         f"their sample error + {overhead:.3g} of the population's, with probability "
                         f"{1 - POPULATION_FAILURE:g} given sample accuracy failing w.p. "
                         f"{POPULATION_SAMPLE_FAILURE:g}; see Report.population()")
        rows = r.plan.get("rows")
        lines.append(f"wrote {r.rows_written} rows" + (f": {rows['reason']}" if rows else ""))
        lines.extend(f"warning: {w}" for w in r.warnings)
        return "\n".join(lines)


#: How numeric columns come back, for the report (post-processing of the released cells, no privacy cost).
NUMERIC_VALUES = {
    "uniform": "numbers drawn uniformly inside each released cell (integers uniform over the cell's integers for "
               "integer columns, whole days for datetime columns whose format has no time of day), within the "
               "public bounds, in the schema's dtype",
    "label": "cell labels 'lo-hi' (numeric='label')",
}


def _numeric_values(numeric: str, output: MethodOutput) -> str:
    """How numeric columns come back: :data:`NUMERIC_VALUES`, and the columns a copula places (docs/privacy.md
    §8.12)."""
    placed = copula_columns(output.model) if numeric == "uniform" else []
    return NUMERIC_VALUES[numeric] + (f"; except {placed}, placed inside their cells by a Gaussian copula read off "
                                      "the released counts, which keeps related values in order" if placed else "")


def make_report(plan: Plan, output: MethodOutput, rows: int, collected: list[str], seconds: float) -> Report:
    """The release (ledger totals, public parameters, the plan) and the diagnostics (never published)."""
    config, spent = plan.config, output.ledger.total()
    pure = plan.delta is None  # pure DP: no delta anywhere in the release (docs/privacy.md §10.2)
    collected.extend(output.warnings)
    if config.random_state is not None:
        collected.append("seeded run (random_state given): the noise comes from a reproducible, non-cryptographic "
                         "stream; for experiments only, not for release (omit random_state to release)")
    release = Release(
        epsilon_budget=float(config.epsilon), delta_budget=None if pure else float(config.delta),
        epsilon_spent=float(spent.epsilon), delta_spent=None if pure else float(spent.delta),
        composition=f"{spent.method} (pure epsilon-DP)" if pure else spent.method,
        relation=str(plan.relation), method=plan.method.name, query_class=plan.query_class.name, rows_written=rows,
        seeded=config.random_state is not None, conditional=output.conditional, plan=plan.choices(),
        ledger=[e.to_dict(pure=pure) for e in output.ledger.events], selected_queries=output.selected_queries,
        warnings=collected, privacy_unit=config.privacy_unit, numeric_values=_numeric_values(config.numeric, output),
        max_rows_per_unit=config.max_rows_per_unit if config.privacy_unit is not None else None,
        section=plan.method.release_section(output.release))
    return Report(release, Diagnostics(seconds=seconds, notes=output.notes, **output.diagnostics))
