"""Query classes from short text specs, e.g. ``marginals:3`` or ``workload:adult_3way_64``.

Widths and bounds are written after a colon; :data:`FORMS` lists every form.
By default the class is returned closed under complement (the game needs a
complement-closed class): wrapped in :class:`~synthdp.queries.complement.ComplementClosed`
unless it is closed natively (halfspaces).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from synthdp.queries.base import QueryClass
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions
from synthdp.queries.disjunctions import Disjunctions
from synthdp.queries.halfspaces import Halfspaces
from synthdp.queries.monotone import MonotoneConjunctions
from synthdp.queries.parities import Parities
from synthdp.queries.workload import Workload
from synthdp.datasets.locations import benchmarks_dir
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

#: The accepted spec forms (shown in errors).
FORMS = (
    "marginals:K       cells of all K-way marginals (width exactly K)",
    "marginals:<=K     conjunctions of one-hot literals of width 1..K",
    "conjunctions[:K]  conjunctions of one-hot literals of width 1..K (no K: unbounded)",
    "monotone[:K]      monotone conjunctions of binary features, width 0..K",
    "disjunctions[:K]  disjunctions of one-hot literals, width 1..K",
    "parities[:K]      parities of binary features, width 0..K",
    "halfspaces[:B]    halfspaces over binary features with integer weights in -B..B (default B=1)",
    "workload:PATH     cells of the marginals listed in a JSON file (a list of attribute-name lists)",
    "workload:KEY      a named workload of the benchmarks folder, e.g. workload:adult_3way_64",
)


def _invalid(spec: object, why: str = "unknown query class") -> InputError:
    return InputError(f"{why} in query class spec {spec!r}; valid forms are:\n  " + "\n  ".join(FORMS))


def _width(spec: str, arg: str | None) -> int | None:
    """The optional non-negative integer after the colon."""
    if arg is None:
        return None
    if not (arg.isascii() and arg.isdigit()):
        raise _invalid(spec, f"expected a non-negative integer after ':', got {arg!r}")
    return int(arg)


def _columns_width(domain: Domain, spec: str, arg: str | None) -> int | None:
    """The width after the colon, refused in the user's words when the table has fewer columns."""
    width = _width(spec, arg)
    if width is not None and width > len(domain):
        kind = spec.strip().partition(":")[0]
        raise InputError(f"the query class {spec!r} reads up to {width} columns, but the table has {len(domain)}; "
                         f"give a width of at most {len(domain)} (e.g. {kind}:{len(domain)})")
    return width


def _marginals(domain: Domain, spec: str, arg: str | None) -> QueryClass:
    if arg is None:
        raise _invalid(spec, "marginals needs a width")
    at_most = arg.startswith("<=")
    width = _columns_width(domain, spec, arg.removeprefix("<=").strip())
    if width == 0:  # the only 0-way marginal is the trivial query "every row", which the game would just spend on
        raise _invalid(spec, "marginals need a width of at least 1 (the 0-way marginal is the constant query)")
    return Conjunctions.marginals(domain, width, exact=not at_most)


def capped_width(spec: str | QueryClass, columns: int) -> tuple[str | QueryClass, str | None]:
    """``marginals:K`` (or ``marginals:<=K``) with ``K`` above the number of ``columns`` becomes the marginals of
    all the columns, with a note saying so (the default ``marginals:3`` on a two-column table); any other spec is
    returned as given, with None.  Both inputs are public: this choice costs no privacy."""
    if not isinstance(spec, str):
        return spec, None
    kind, colon, arg = spec.strip().partition(":")
    at_most = arg.strip().startswith("<=")
    width = arg.strip().removeprefix("<=").strip()
    if kind.strip().lower() != "marginals" or not (width.isascii() and width.isdigit()) or int(width) <= columns:
        return spec, None
    capped = f"marginals:{'<=' if at_most else ''}{columns}"
    return capped, (f"{spec.strip()} asks for marginals of {width} columns, but the table has {columns}: "
                    f"{capped}, the marginals of all its columns, instead")


_BUILDERS: dict[str, Callable[[Domain, str, str | None], QueryClass]] = {
    "marginals": _marginals,
    "conjunctions": lambda dom, spec, arg: Conjunctions(dom, max_width=_columns_width(dom, spec, arg)),
    "monotone": lambda dom, spec, arg: MonotoneConjunctions(dom, max_width=_width(spec, arg)),
    "disjunctions": lambda dom, spec, arg: Disjunctions(Conjunctions(dom, max_width=_columns_width(dom, spec, arg))),
    "parities": lambda dom, spec, arg: Parities(dom, max_width=_width(spec, arg)),
    "halfspaces": lambda dom, spec, arg: Halfspaces(dom, weight_bound=1 if arg is None else _width(spec, arg)),
    "workload": lambda dom, spec, arg: load_workload(arg or "", dom),
}


def parse_query_class(spec: str | QueryClass, domain: Domain, *, closed: bool = True) -> QueryClass:
    """The query class described by ``spec`` (a :data:`FORMS` string, or a class passed through).

    With ``closed=True`` the result is complement closed: wrapped in
    :class:`ComplementClosed` unless it already is.
    """
    if isinstance(spec, QueryClass):
        qc = spec
    elif isinstance(spec, str):
        kind, colon, arg = spec.strip().partition(":")
        builder = _BUILDERS.get(kind.strip().lower())
        if builder is None or (colon and not arg.strip()):
            raise _invalid(spec)
        qc = builder(domain, spec, arg.strip() if colon else None)
    else:
        raise _invalid(spec, "a query class spec must be a string or a QueryClass")
    return ComplementClosed(qc) if closed and not qc.complement_closed else qc


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read workload file {path}: {exc}") from None


def _named_workloads(folder: Path) -> dict[str, list]:
    """Workloads of a benchmarks folder: the keys of JSON dicts, and JSON lists by file stem.

    Files that are not valid JSON are skipped: they name no workload.
    """
    found: dict[str, list] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            data = _read_json(path)
        except InputError:
            continue
        if isinstance(data, dict):
            found.update({k: v for k, v in data.items() if isinstance(v, list) and k not in found})
        elif isinstance(data, list):
            found.setdefault(path.stem, data)
    return found


def load_workload(where: str, domain: Domain) -> Workload:
    """``where`` is a JSON file path (``*.json`` or containing a ``/``) or a workload key."""
    if not where:
        raise _invalid("workload:", "workload needs a JSON path or a key")
    if where.endswith(".json") or os.sep in where or "/" in where:
        path = Path(where).expanduser()
        tuples = _read_json(path)
        if isinstance(tuples, dict):
            raise InputError(f"{path} holds several workloads ({sorted(tuples)}); put the file in the benchmarks "
                             f"folder (SYNTHDP_BENCHMARKS_DIR) and use workload:KEY")
        name = f"workload:{path.stem}"
    else:
        folder = benchmarks_dir()
        named = _named_workloads(folder)
        if where not in named:
            raise InputError(f"no workload named {where!r} in {folder} (set SYNTHDP_BENCHMARKS_DIR to change "
                             f"the folder); available: {sorted(named)}")
        tuples, name = named[where], f"workload:{where}"
    if not isinstance(tuples, list):
        raise InputError(f"workload {where!r} must be a JSON list of attribute-name lists")
    return Workload.from_names(domain, tuples, name=name)
