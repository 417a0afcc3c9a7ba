"""What several commands share: the table read with the command's reading options, the domain options parsed
into a schema's keywords, and the marginals an evaluation looks at."""

from __future__ import annotations

import math
from pathlib import Path

from synthdp.cli.parser import derived_names
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.files import csvfile  # by module: tests replace csvfile.dump_json to simulate a full disk
from synthdp.files.sources import ReadOptions, is_location, read_table
from synthdp.methods.game.players import as_workload
from synthdp.queries.spec import parse_query_class


def _pairs(items: list | None, option: str, parse) -> dict:
    """Parse ``NAME=VALUE`` options such as ``--bounds age=17:90 hours=1:99`` (several per flag, flag repeatable)."""
    out = {}
    for item in flat(items):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(f"{option} expects NAME=VALUE pairs, got {item!r} (put the input file before "
                             f"{option}, or end the list with --)")
        if name in out:
            raise InputError(f"{option} gives column {name!r} twice; give each column once")
        try:
            out[name] = parse(value)
        except ValueError as exc:
            raise InputError(f"cannot read {option} {item!r}: {exc}") from None
    return out


def flat(items: list | None) -> list[str]:
    """The values of an ``append`` option with ``nargs='+'`` (a list of lists), in order."""
    return [x for group in items or [] for x in (group if isinstance(group, list) else [group])]


def _number(text: str) -> int | float:
    """An integer literal as an ``int`` (it declares an integer column), anything else as a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _bounds(value: str) -> tuple[int | float, int | float]:
    """``LO:HI`` with finite numbers and ``LO < HI``; integers as written (``17:90`` declares an integer column,
    ``0.0:100`` a real one); ``LO..HI`` with dates declares a datetime column (kept as text, read with its
    format, else as ISO 8601; docs/privacy.md §10.1); a ValueError says what is wrong."""
    lo, sep, hi = value.partition("..") if ".." in value else value.partition(":")
    if not sep:
        raise ValueError("write the bounds as LO:HI, e.g. age=17:90 (dates: LO..HI, e.g. 2020-01-01..2024-12-31)")
    try:
        lo_f, hi_f = float(lo), float(hi)
    except ValueError:
        if sep == "..":
            return lo, hi
        raise ValueError(f"{lo!r} and {hi!r} must both be numbers (dates: LO..HI, e.g. 2020-01-01..2024-12-31)") from None
    if not (math.isfinite(lo_f) and math.isfinite(hi_f)):
        raise ValueError("bounds must be finite numbers (not nan or inf)")
    if lo_f == hi_f:
        raise ValueError(f"LO equals HI ({lo_f:g}): the range is empty; give LO < HI")
    if lo_f > hi_f:
        raise ValueError(f"LO ({lo_f:g}) is above HI ({hi_f:g}); give them in order, e.g. {hi}:{lo}")
    return _number(lo), _number(hi)


def _datetimes(items: list | None) -> dict[str, str | None] | None:
    """``--datetime COL[=FORMAT] ...``: each datetime column and its strptime format (None: any pandas reads)."""
    out: dict[str, str | None] = {}
    for item in flat(items):
        name, sep, fmt = item.partition("=")
        if not name:
            raise InputError(f"--datetime expects COL or COL=FORMAT, got {item!r}")
        out[name] = fmt if sep else None
    return out or None


def _learn_bounds(items: list | None) -> dict[str, str | None] | None:
    """``--learn-bounds COL[=DTYPE] ...``: each column and its public output dtype (None: real, or the schema's)."""
    out: dict[str, str | None] = {}
    for item in flat(items):
        name, sep, dtype = item.partition("=")
        if not name or (sep and dtype not in ("int64", "float64")):
            raise InputError(f"--learn-bounds expects COL or COL=int64|float64, got {item!r}")
        out[name] = dtype if sep else None
    return out or None


def _decimals(value: str) -> int:
    if not value.isdigit():
        raise ValueError(f"the number of decimals must be a whole number, got {value!r}")
    return int(value)


def _cuts(value: str) -> list[float]:
    """``C1,C2,...``: increasing public cut points inside the bounds (checked by the schema)."""
    try:
        return [float(c) for c in value.split(",")]
    except ValueError:
        raise ValueError(f"the cut points must be numbers separated by commas, e.g. 10,20.5,40, got {value!r}") \
            from None


def _bins(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise ValueError(f"the number of bins must be a whole number, got {value!r}") from None
    if k < 1:
        raise ValueError(f"the number of bins must be at least 1, got {k}")
    return k


#: Options that describe the domain; a --schema file already fixes all of it.
DOMAIN_OPTIONS = ("categorical", "bounds", "bins", "cuts", "datetime", "learn_bounds", "decimals", "dtype", "nullable",
                   "other", "clip")


def schema_kwargs(args) -> dict:
    """The domain options of a command, by option name: the derived flags' values and the parsed hand-written ones."""
    schema = None
    if getattr(args, "schema", None):
        given = [f"--{o}" for o in DOMAIN_OPTIONS if getattr(args, o)]
        if given:
            raise InputError(f"--schema fixes the whole domain, so {', '.join(given)} would be ignored; put "
                             "those settings in the schema file, or drop --schema")
        schema = Schema.load(args.schema)
    derived = {name: getattr(args, name) for name in derived_names(["schema"]) if hasattr(args, name)}
    return dict(schema=schema, categorical=args.categorical, bounds=_pairs(args.bounds, "--bounds", _bounds) or None,
                bins=_pairs(args.bins, "--bins", _bins) or None, cuts=_pairs(args.cuts, "--cuts", _cuts) or None,
                nullable=args.nullable, datetimes=_datetimes(args.datetime),
                learn_bounds=_learn_bounds(args.learn_bounds),
                decimals=_pairs(args.decimals, "--decimals", _decimals) or None,
                dtypes=_pairs(args.dtype, "--dtype", str) or None,
                derived=_pairs(getattr(args, "derived", None), "--derived", str) or None, **derived)


def read_input(path: str, args, typed: bool = False, schema=None):
    """The CSV at ``path`` read with the CLI's options (missing tokens, names, separator, encoding, dropped columns);
    every field as text unless ``typed`` (drafting a schema, docs/privacy.md §10.7); a header may name the
    ``schema``'s columns by numbers."""
    known = tuple(schema.names) if schema is not None else ()
    if is_location(path):  # Parquet, a directory or a glob
        no_skip_rows(args, f"{path!r} is not one CSV file")
        df = read_table(path, read_options(args, typed, known))
    else:
        df = csvfile.read_csv(path, missing=args.missing, columns=args.columns.split(",") if args.columns else None,
                              sep=_separator(args.sep), encoding=args.encoding, skip_rows=args.skip_rows,
                              text=unit_columns(args), typed=typed, known_columns=known)
    unknown = [c for c in args.drop or [] if c not in df.columns]
    if unknown:
        raise InputError(f"--drop names {unknown}, which {path!r} does not have; its columns are {list(df.columns)}")
    return df.drop(columns=args.drop) if args.drop else df


def no_skip_rows(args, why: str) -> None:
    if getattr(args, "skip_rows", 0):
        raise InputError(f"--skip-rows applies to one CSV file read in memory, and {why}; remove the leading lines "
                         "from the file(s) instead")


def read_options(args, typed: bool = False, known: tuple[str, ...] = ()):
    """The CSV reading options of the command line, for the counting engines."""
    return ReadOptions(missing=tuple(args.missing or ()), sep=_separator(args.sep), encoding=args.encoding,
                       columns=tuple(args.columns.split(",")) if args.columns else None, text=unit_columns(args),
                       typed=typed, known_columns=known, dropped=tuple(getattr(args, "drop", None) or ()))


def unit_columns(args) -> tuple[str, ...]:
    """The privacy unit column, read as text (docs/privacy.md §10.6), if the command has one."""
    unit = getattr(args, "privacy_unit", None)
    return () if unit is None else (unit,)


def _separator(sep: str) -> str:
    return "\t" if sep in ("\\t", "tab", "TAB") else sep


def check_schema_columns(schema, columns, path: str) -> None:
    """Refuse input columns the schema does not list (the library would drop them with a warning)."""
    extra = [c for c in columns if str(c) not in schema.names and str(c) not in {d.name for d in schema.derived}]
    if extra:
        raise InputError(f"the schema has no column {extra[0]!r} of {path!r} (unlisted: {extra}); add them to the "
                         f"schema, or leave them out with --drop {' '.join(map(str, extra))}")


def query_inputs(spec: str) -> list[str]:
    """Files a ``--queries`` spec reads (a workload JSON file), which no output may overwrite."""
    kind, _, where = spec.partition(":")
    return [where] if kind.strip() == "workload" and where.strip().endswith(".json") else []


def workload_sets(spec: str, domain) -> list[tuple[int, ...]]:
    """Attribute sets of the marginals an evaluation looks at."""
    qc = parse_query_class(spec, domain)
    base = getattr(qc, "base", qc)
    workload = as_workload(base)
    if workload is None:
        raise InputError(f"evaluate needs marginals or a workload (e.g. marginals:3), got {spec!r}")
    return [tuple(s) for s in workload.marginal_attrs]


def table_paths(output: str, names: list[str], why: str, *others: str | None) -> dict[str, Path]:
    """``-o``'s folder's ``<table>.csv`` for each table ``names`` holds, refused (``why`` says when two tables are
    written) unless ``output`` is an existing folder and none of them, nor of the other outputs ``others``, exists."""
    folder = Path(output)
    if not folder.is_dir():
        raise InputError(f"-o {output!r} must be an existing folder: {why} each table is written there as "
                         "<table>.csv")
    paths = {name: folder / f"{name}.csv" for name in names}
    existing = [str(p) for p in (*paths.values(), *others) if p and Path(p).exists()]
    if existing:
        raise InputError(f"{existing} exist already; nothing is overwritten {why}: choose another folder or remove "
                         "them")
    return paths
