"""The ``synthdp`` command: generate, sample, evaluate, schema, bench, demo.

Every error the library raises on purpose is printed as one line naming the
culprit, with exit status 2; nothing is written unless the command succeeds.
Output paths are checked before anything private runs and all outputs of a
run are written as one unit (:mod:`synthdp.files.outputs`); SIGINT and SIGTERM
end a run with one line and exit status 130 or 143.

The flags of the options are not listed here: each plain scalar option of
:class:`~synthdp.config.SynthesisConfig` becomes ``--its-name`` with the type,
choices, default and documentation declared there (:func:`derived_flag`);
the few written by hand are in :data:`GENERATE_FLAGS` and :data:`SCHEMA_FLAGS`,
and :data:`API_ONLY` says why an option has no flag.

The parser is built from light modules only (the option declarations, the
output checks): ``--help``, ``--version`` and usage errors answer without
loading numpy, pandas or the solvers, which each command imports when it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import math
import os
import signal
import sys
import threading
import warnings
from typing import Any, Callable, Sequence

from synthdp import cli_tune
from synthdp._version import __version__
from synthdp.config import GROUPS, SynthesisConfig, option_doc, options_in
from synthdp.core.errors import InputError, SynthDPError
from synthdp.core.options import nearest
from synthdp.core.parameters import RULES
from synthdp.core.progress import Phases
from synthdp.files.outputs import Interrupted, check_outputs, write_outputs
from synthdp.methods.game.defaults import PLAN_DEFAULTS

log = logging.getLogger("synthdp")

OUTPUTS_HELP = ("Outputs are checked before anything private runs (existing folder you can write in; not an input, "
                "not another output, not a directory, device or FIFO) and all outputs of a run are written as one "
                "unit: all appear, or none and existing files stay as they were. A symbolic link to an existing "
                "regular file is written through (the link stays); any other link is refused. SIGINT and SIGTERM "
                "stop the run with a message and leave no temporary file (exit status 130 and 143).")

#: Exit status of ``synthdp generate --strict`` when the release has columns far from the real table (the option's
#: documentation says it; 2 is an error, 128 + N a signal).
STRICT_STATUS = 3

VERBOSE_HELP = ("more logging (-vv for debug). Debug logs contain PRIVATE values (n, noisy objective values, "
                "solver failure counts): never attach them to a release")


def _pairs(items: list | None, option: str, parse) -> dict:
    """Parse ``NAME=VALUE`` options such as ``--bounds age=17:90 hours=1:99`` (several per flag, flag repeatable)."""
    out = {}
    for item in _flat(items):
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


def _flat(items: list | None) -> list[str]:
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
    for item in _flat(items):
        name, sep, fmt = item.partition("=")
        if not name:
            raise InputError(f"--datetime expects COL or COL=FORMAT, got {item!r}")
        out[name] = fmt if sep else None
    return out or None


def _learn_bounds(items: list | None) -> dict[str, str | None] | None:
    """``--learn-bounds COL[=DTYPE] ...``: each column and its public output dtype (None: real, or the schema's)."""
    out: dict[str, str | None] = {}
    for item in _flat(items):
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


def _rows_per_unit(text: str) -> int | str:
    """``--max-rows-per-unit``: an integer, or ``auto``."""
    return text if text == "auto" else int(text)


#: Options whose flags are written by hand, by option: the flags and their argparse settings. Their help is the
#: option's documentation followed by ``syntax`` (how to write the value), their default the option's (a switch's
#: is False). Each is here for a reason: a name that is not the option's (``--queries``, ``--seed``), an inverted
#: switch (``--quiet``), or a value that is not one scalar (a list of columns, ``COL=VALUE`` pairs, an integer or
#: ``auto``).
GENERATE_FLAGS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "query_class": (("--queries",), dict(syntax="(default %(default)s)")),
    "random_state": (("--seed",), dict(type=int)),
    "max_rows_per_unit": (("--max-rows-per-unit",), dict(metavar="K", type=_rows_per_unit)),
    "progress": (("-q", "--quiet"), dict(action="store_true", help="no progress bar")),
    "measure_options": (("--measure-option",), dict(action="append", nargs="+", metavar="NAME=VALUE",
                                                    dest="measure_options",
                                                    syntax="E.g. --measure-option rounds_per_attribute=4 "
                                                           "cover_share=1/2")),
    "point_masses": (("--no-point-masses",), dict(action="store_false", dest="point_masses",
                                                  syntax="On by default; --no-point-masses keeps none: the cells "
                                                         "are PrivTree's alone.")),
}
#: The hand-written flags of the domain (shared by generate, evaluate and schema), as :data:`GENERATE_FLAGS`.
SCHEMA_FLAGS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "schema": (("--schema",), dict(metavar="FILE")),
    "categorical": (("--categorical",), dict(nargs="+", metavar="COL")),
    "bounds": (("--bounds",), dict(action="append", nargs="+", metavar="COL=LO:HI",
                                   syntax="E.g. --bounds age=17:90 hours-per-week=1:99 joined=2000-01-01..2030-12-31")),
    "bins": (("--bins",), dict(action="append", nargs="+", metavar="COL=K", syntax="E.g. --bins age=8")),
    "cuts": (("--cuts",), dict(action="append", nargs="+", metavar="COL=C1,C2,...", syntax="E.g. --cuts age=25,45,65")),
    "datetimes": (("--datetime",), dict(action="append", nargs="+", metavar="COL[=FORMAT]",
                                        syntax="E.g. --datetime joined=%%d/%%m/%%Y")),
    "learn_bounds": (("--learn-bounds",), dict(action="append", nargs="+", metavar="COL[=DTYPE]",
                                               syntax="synthdp schema also takes 'all' (every column of numbers "
                                                      "without public bounds).")),
    "decimals": (("--decimals",), dict(action="append", nargs="+", metavar="COL=K", syntax="E.g. --decimals fnlwgt=0")),
    "dtypes": (("--dtype",), dict(action="append", nargs="+", metavar="COL=TYPE",
                                  syntax="E.g. --dtype age=int64 'joined=datetime64[ns, UTC]'")),
    "nullable": (("--nullable",), dict(nargs="+", metavar="COL")),
    "derived": (("--derived",), dict(action="append", nargs="+", metavar="COL=EXPR",
                                     syntax="E.g. --derived year=joined.year 'net=gross - tax'")),
    "missing": (("--missing",), dict(action="append", metavar="TOKEN",
                                     syntax="The CSV reader applies them (e.g. --missing ?).")),
}
#: Options the command line does not offer, and why.
API_ONLY = {
    "categories": "a category list per column is too long for flags: it belongs in a schema file (--schema, "
                  "drafted by 'synthdp schema')",
}


def _flag_help(name: str, syntax: str = "") -> str:
    """The ``--help`` text of option ``name``: its documentation (``%`` escaped for argparse), then ``syntax``."""
    return " ".join((option_doc(name, PLAN_DEFAULTS).replace("%", "%%"), syntax)).strip()


def scalar_type(name: str) -> type | None:
    """The type of option ``name`` if it is one scalar (``bool``, ``int``, ``float`` or ``str``, or None), else None.

    Read off the annotation as written (:mod:`synthdp.config` names its other types for type checkers only).
    """
    kinds = [kind.strip() for kind in SynthesisConfig.__dataclass_fields__[name].type.split("|")]
    kinds = [kind for kind in kinds if kind != "None"]
    return {"bool": bool, "int": int, "float": float, "str": str}.get(kinds[0]) if len(kinds) == 1 else None


def derived_flag(group, name: str) -> None:
    """The flag of a scalar option, from its declaration: ``--name-with-dashes``, type, choices, default, help."""
    field, kind = SynthesisConfig.__dataclass_fields__[name], scalar_type(name)
    flag, required = "--" + name.replace("_", "-"), field.default is dataclasses.MISSING
    if kind is None or (kind is bool and field.default is not False):
        raise TypeError(f"option {name!r} is not a plain scalar switched on by its flag: write its flag by hand "
                        "(GENERATE_FLAGS, SCHEMA_FLAGS) or list it in API_ONLY with the reason")
    if kind is bool:
        group.add_argument(flag, action="store_true", help=_flag_help(name))
        return
    default = None if required else field.default
    group.add_argument(flag, type=kind, choices=RULES[name].choices, default=default, required=required,
                       help=_flag_help(name, "" if default is None else "(default %(default)s)"))


def _add_flags(group, names: Sequence[str], hand_written: dict) -> None:
    """The flags of the options ``names`` in ``group``, in declaration order: ``hand_written`` ones, else derived."""
    for name in names:
        if name in hand_written:
            flags, settings = hand_written[name]
            settings = dict(settings)
            syntax = settings.pop("syntax", "")
            if settings.get("action") != "store_true":
                settings["default"] = SynthesisConfig.__dataclass_fields__[name].default
            group.add_argument(*flags, **{"help": _flag_help(name, syntax), **settings})
        elif name not in API_ONLY:
            derived_flag(group, name)


def _derived_names(groups: Sequence[str]) -> list[str]:
    """The options of ``groups`` whose flags are derived (neither hand-written nor API-only)."""
    special = {*GENERATE_FLAGS, *SCHEMA_FLAGS, *API_ONLY}
    return [name for group in groups for name in options_in(group) if name not in special]


def _schema_options(p: argparse.ArgumentParser, omit: Sequence[str] = ()) -> None:
    """The flags of the domain (the ``schema`` options but ``omit``) and of reading the CSV."""
    g = p.add_argument_group(GROUPS["schema"])
    _add_flags(g, [n for n in options_in("schema") if n not in (*omit, "missing")], SCHEMA_FLAGS)
    r = p.add_argument_group("reading the CSV")
    _add_flags(r, ["missing"], SCHEMA_FLAGS)
    r.add_argument("--columns", help="comma-separated column names, one per field, for a CSV without a header row")
    r.add_argument("--skip-rows", type=int, default=0, metavar="N",
                   help="skip N leading lines (a title, a notice) before the header row or the first record")
    r.add_argument("--drop", nargs="+", metavar="COL", help="leave these columns of the CSV out (e.g. an ID column)")
    r.add_argument("--sep", default=",", help="field separator of the CSV (default ','; e.g. ';' or '\\t')")
    r.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8; e.g. latin-1)")


#: Options that describe the domain; a --schema file already fixes all of it.
_DOMAIN_OPTIONS = ("categorical", "bounds", "bins", "cuts", "datetime", "learn_bounds", "decimals", "dtype", "nullable",
                   "other", "clip")


def _schema_kwargs(args) -> dict:
    """The domain options of a command, by option name: the derived flags' values and the parsed hand-written ones."""
    from synthdp.core.schema import Schema

    schema = None
    if getattr(args, "schema", None):
        given = [f"--{o}" for o in _DOMAIN_OPTIONS if getattr(args, o)]
        if given:
            raise InputError(f"--schema fixes the whole domain, so {', '.join(given)} would be ignored; put "
                             "those settings in the schema file, or drop --schema")
        schema = Schema.load(args.schema)
    derived = {name: getattr(args, name) for name in _derived_names(["schema"]) if hasattr(args, name)}
    return dict(schema=schema, categorical=args.categorical, bounds=_pairs(args.bounds, "--bounds", _bounds) or None,
                bins=_pairs(args.bins, "--bins", _bins) or None, cuts=_pairs(args.cuts, "--cuts", _cuts) or None,
                nullable=args.nullable, datetimes=_datetimes(args.datetime),
                learn_bounds=_learn_bounds(args.learn_bounds),
                decimals=_pairs(args.decimals, "--decimals", _decimals) or None,
                dtypes=_pairs(args.dtype, "--dtype", str) or None,
                derived=_pairs(getattr(args, "derived", None), "--derived", str) or None, **derived)


def _read(path: str, args, typed: bool = False, schema=None):
    """The CSV at ``path`` read with the CLI's options (missing tokens, names, separator, encoding, dropped columns);
    every field as text unless ``typed`` (drafting a schema, docs/privacy.md §10.7); a header may name the
    ``schema``'s columns by numbers."""
    from synthdp.files import csvfile  # by module: tests replace csvfile.dump_json to simulate a full disk
    from synthdp.files.sources import is_location, read_table

    known = tuple(schema.names) if schema is not None else ()
    if is_location(path):  # Parquet, a directory or a glob
        _no_skip_rows(args, f"{path!r} is not one CSV file")
        df = read_table(path, _read_options(args, typed, known))
    else:
        df = csvfile.read_csv(path, missing=args.missing, columns=args.columns.split(",") if args.columns else None,
                              sep=_separator(args.sep), encoding=args.encoding, skip_rows=args.skip_rows,
                              text=_unit(args), typed=typed, known_columns=known)
    unknown = [c for c in args.drop or [] if c not in df.columns]
    if unknown:
        raise InputError(f"--drop names {unknown}, which {path!r} does not have; its columns are {list(df.columns)}")
    return df.drop(columns=args.drop) if args.drop else df


def _no_skip_rows(args, why: str) -> None:
    if getattr(args, "skip_rows", 0):
        raise InputError(f"--skip-rows applies to one CSV file read in memory, and {why}; remove the leading lines "
                         "from the file(s) instead")


def _read_options(args, typed: bool = False, known: tuple[str, ...] = ()):
    """The CSV reading options of the command line, for the counting engines."""
    from synthdp.files.sources import ReadOptions

    return ReadOptions(missing=tuple(args.missing or ()), sep=_separator(args.sep), encoding=args.encoding,
                       columns=tuple(args.columns.split(",")) if args.columns else None, text=_unit(args),
                       typed=typed, known_columns=known, dropped=tuple(getattr(args, "drop", None) or ()))


def _unit(args) -> tuple[str, ...]:
    """The privacy unit column, read as text (docs/privacy.md §10.6), if the command has one."""
    unit = getattr(args, "privacy_unit", None)
    return () if unit is None else (unit,)


def _separator(sep: str) -> str:
    return "\t" if sep in ("\\t", "tab", "TAB") else sep


def _check_schema_columns(schema, columns, path: str) -> None:
    """Refuse input columns the schema does not list (the library would drop them with a warning)."""
    extra = [c for c in columns if str(c) not in schema.names and str(c) not in {d.name for d in schema.derived}]
    if extra:
        raise InputError(f"the schema has no column {extra[0]!r} of {path!r} (unlisted: {extra}); add them to the "
                         f"schema, or leave them out with --drop {' '.join(map(str, extra))}")


def _query_inputs(spec: str) -> list[str]:
    """Files a ``--queries`` spec reads (a workload JSON file), which no output may overwrite."""
    kind, _, where = spec.partition(":")
    return [where] if kind.strip() == "workload" and where.strip().endswith(".json") else []


def generate_options(args) -> dict[str, Any]:
    """The options of ``synthdp generate`` by name: the derived flags' values, then the hand-written ones parsed."""
    options = {name: getattr(args, name) for name in _derived_names(list(GROUPS))}
    options.update(_schema_kwargs(args), query_class=args.queries, random_state=args.seed,
                   max_rows_per_unit=args.max_rows_per_unit, progress=not args.quiet, point_masses=args.point_masses,
                   measure_options=_measure_options(args.measure_options))
    return options


def _measure_options(items: list | None):
    """``--measure-option NAME=VALUE ...``: select-measure-estimate's settings (loads the method only when given)."""
    if not items:
        return None
    from synthdp.methods.measure.settings import measure_options_from_text
    return measure_options_from_text(_flat(items))


def cmd_generate(args) -> int:
    from synthdp.api import spend_text
    from synthdp.files import csvfile
    from synthdp.files.parquet import dump_table, require_pyarrow, table_format
    from synthdp.model import dump_model
    from synthdp.owner_check import FarFromRealWarning
    from synthdp.release_check import ReleaseWarning

    outputs = check_outputs({"-o": args.output, "--report": args.report, "--save-model": args.save_model},
                            inputs=[args.input, args.schema, *_query_inputs(args.queries)])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    options = generate_options(args)
    if cli_tune.requested(args):  # --tune FILE.json / --target-error ALPHA: docs/privacy.md §5
        for flag, given in (("--save-model", args.save_model), ("--strict", args.strict)):
            if given:
                raise InputError(f"{flag} is not available with --tune or --target-error yet: use it with a plain "
                                 "generate run of the chosen settings")
        return cli_tune.generate(args, options, lambda: _read(args.input, args, schema=options["schema"]))
    result = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReleaseWarning)  # the closing summary gives them as "warning: ..."
            warnings.simplefilter("ignore", FarFromRealWarning)  # and these in its lines for the data owner
            result = _synthesize(args, SynthesisConfig.of(**options))  # every option checked before anything is read
        jobs = [(outputs["-o"], lambda tmp: dump_table(result.data, tmp, args.output, result.schema))]
        if args.report:
            jobs.append((outputs["--report"], lambda tmp: csvfile.dump_json(result.report.to_dict(), tmp)))
        if args.save_model:
            jobs.append((outputs["--save-model"], lambda tmp: dump_model(result.model, tmp)))
        with Phases(enabled=not args.quiet)(f"writing {', '.join(str(out.target) for out, _ in jobs)}"):
            write_outputs(jobs)
    except KeyboardInterrupt as interrupt:  # what the ledger was charged, for main's message (docs/privacy.md §10.1)
        if result is not None:  # the release was made: its whole spend
            interrupt.charged = spend_text(result.report.epsilon_spent, result.report.delta_spent)
        elif not hasattr(interrupt, "charged"):  # before the run's first step
            interrupt.charged = "nothing"
        raise
    print(result.report.summary())
    print(f"output: {args.output} ({len(result.data)} rows)" +  # no run time: it depends on the data
          (f"; model: {args.save_model} (synthdp sample draws more rows from it, free)" if args.save_model else ""))
    if result.comparison is not None:
        print(result.comparison.summary())
    if args.strict and result.far_from_real:
        print(f"synthdp: --strict: the release has columns far from the real table (listed above, for the data "
              f"owner only); the outputs are written, and the exit status is {STRICT_STATUS}", file=sys.stderr)
        return STRICT_STATUS
    return 0


def _synthesize(args, config: SynthesisConfig):
    """The run of ``synthdp generate``: in memory, or part by part on a Dask cluster."""
    from synthdp.api import check_method, synthesize
    from synthdp.engines.dask import DaskEngine  # light: Dask itself is imported only when the engine runs
    from synthdp.files.sources import file_columns, list_files

    check_method(config)  # before anything is read
    if args.engine == "dask":  # the files are counted part by part on the cluster, never read here
        _no_skip_rows(args, "--engine dask counts the files part by part")
        read = _read_options(args)
        columns = dict.fromkeys(c for f in list_files(args.input) for c in file_columns(f, read))  # headers only
        unknown = [c for c in args.drop or [] if c not in columns]
        if unknown:
            raise InputError(f"--drop names {unknown}, which {args.input!r} does not have; its columns are "
                             f"{list(columns)}")
        if config.schema is not None:  # as in memory
            _check_schema_columns(config.schema, [c for c in columns if c not in
                                                  {*_unit(args), *(args.drop or []), *(config.derived or ())}],
                                  args.input)
        return synthesize(args.input, config, engine=DaskEngine(scheduler=args.scheduler, options=read))
    df = _read(args.input, args, schema=config.schema)
    if config.schema is not None:
        left_out = {*_unit(args), *(config.derived or ())}
        _check_schema_columns(config.schema, [c for c in df.columns if c not in left_out], args.input)
    return synthesize(df, config)


def cmd_sample(args) -> int:
    """``synthdp sample MODEL -n N -o OUT``: fresh rows from a saved model (post-processing, docs/privacy.md §10.9)."""
    from synthdp.core.parameters import check
    from synthdp.files.parquet import dump_table, require_pyarrow, table_format
    from synthdp.model import FittedModel

    outputs = check_outputs({"-o": args.output}, inputs=[args.model])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    try:
        check("n_rows", args.rows)
    except InputError as error:
        raise InputError(f"-n {args.rows}: {error}") from None
    model = FittedModel.load(args.model)
    data = model.sample(args.rows, random_state=args.seed)
    write_outputs([(outputs["-o"], lambda tmp: dump_table(data, tmp, args.output, model.schema))])
    print(f"output: {args.output} ({len(data)} rows drawn from the model in {args.model}: post-processing of its "
          "release, no privacy cost)")
    return 0


def _workload_sets(spec: str, domain) -> list[tuple[int, ...]]:
    """Attribute sets of the marginals an evaluation looks at."""
    from synthdp.methods.game.players import as_workload
    from synthdp.queries.spec import parse_query_class

    qc = parse_query_class(spec, domain)
    base = getattr(qc, "base", qc)
    workload = as_workload(base)
    if workload is None:
        raise InputError(f"evaluate needs marginals or a workload (e.g. marginals:3), got {spec!r}")
    return [tuple(s) for s in workload.marginal_attrs]


def _is_marginal_workload(spec: str, domain) -> bool:
    """Whether ``spec`` is marginals or a workload (per-marginal tables); other classes get the certified worst case."""
    from synthdp.methods.game.players import as_workload
    from synthdp.queries.complement import base_class
    from synthdp.queries.spec import parse_query_class

    return as_workload(base_class(parse_query_class(spec, domain))) is not None


def _evaluate_worst_case(args, real_df, syn_df, schema, outputs) -> int:
    """The certified maximum error over a whole class (:mod:`synthdp.evaluation.worst_case`).

    Exit status 1 if it was not certified in time.
    """
    from synthdp.evaluation.worst_case import worst_case_error

    if args.plot:
        raise InputError(f"--plot draws per-marginal errors; it needs marginals or a workload, not {args.queries!r}")
    result = worst_case_error(real_df, syn_df, args.queries, schema=schema, time_limit=args.time_limit)
    print(result.summary())
    _write_evaluation(args, outputs, [], {"queries": args.queries, "worst_case": result.to_dict()})
    return 0 if result.certified else 1


def _write_evaluation(args, outputs, jobs: list, content: dict) -> None:
    """The evaluation's files as one unit: ``jobs`` (the plot) and ``--json FILE`` with ``content``."""
    from synthdp.files import csvfile

    if args.json:
        jobs = [*jobs, (outputs["--json"], lambda tmp: csvfile.dump_json(content, tmp))]
    write_outputs(jobs)
    for option, path in (("plot", args.plot), ("json", args.json)):
        if path:
            print(f"{option}: {path}")


def _evaluate_html(args) -> int:
    """The quality page (:mod:`synthdp.quality`): one self-contained HTML file, for the data owner only.

    Without --schema or domain options the two tables' types are read off the files (numbers stay numbers);
    with them, the columns are read as ``synthdp evaluate`` reads them.
    """
    from synthdp.api import resolve_schema
    from synthdp.files import csvfile
    from synthdp.quality import quality_report

    if args.plot:
        raise InputError("--plot draws per-marginal errors; the --html page draws its own pictures: drop --plot")
    outputs = check_outputs({"--html": args.html, "--json": args.json},
                            inputs=[args.real, args.synthetic, args.schema, args.report])
    typed = not (args.schema or any(getattr(args, o) for o in _DOMAIN_OPTIONS))
    real_df = _read(args.real, args, typed=typed)
    syn_df = _read_synthetic(args.synthetic, args, typed=typed)
    kw = _schema_kwargs(args)
    schema = kw.pop("schema")
    if schema is not None:
        _check_schema_columns(schema, real_df.columns, args.real)
    elif not typed:  # domain options without a schema file: the schema synthdp evaluate builds
        schema = resolve_schema(real_df, None, [], **{**kw, "unsafe_public_categories": True,
                                                      "discretise": "equal-width"}).with_equal_width()
    report = quality_report(real_df, syn_df, schema, args.report, target=args.target, certify=args.certify,
                            time_limit=args.time_limit)
    print(report.summary())
    jobs = [(outputs["--html"], report.to_html)]
    if args.json:
        jobs.append((outputs["--json"], lambda tmp: csvfile.dump_json(report.to_dict(), tmp)))
    write_outputs(jobs)
    for option, path in (("html", args.html), ("json", args.json)):
        if path:
            print(f"{option}: {path}")
    return 0


def cmd_evaluate(args) -> int:
    from synthdp.api import resolve_schema
    from synthdp.core.encoding import Encoder
    from synthdp.evaluation.marginals import marginal_errors, plot_format, save_plot

    if args.html:
        return _evaluate_html(args)
    page_only = [flag for flag in ("target", "certify", "report") if getattr(args, flag)]
    if page_only:
        raise InputError(f"{', '.join('--' + f for f in page_only)} belong to the quality page: add --html FILE")
    if args.plot:
        plot_format(args.plot)
    outputs = check_outputs({"--plot": args.plot, "--json": args.json},
                            inputs=[args.real, args.synthetic, args.schema, *_query_inputs(args.queries)])
    real_df = _read(args.real, args)
    syn_df = _read_synthetic(args.synthetic, args)
    kw = _schema_kwargs(args)
    if kw["schema"] is not None:
        _check_schema_columns(kw["schema"], real_df.columns, args.real)
    kw["unsafe_public_categories"] = True  # the owner's own, non-private check: the real data's categories
    kw["discretise"] = "equal-width"  # and public bins for bounded columns (nothing private is learned here)
    schema = resolve_schema(real_df, kw.pop("schema"), [], **kw).with_equal_width()
    if not _is_marginal_workload(args.queries, schema.domain):
        return _evaluate_worst_case(args, real_df, syn_df, schema, outputs)
    encoder = Encoder(schema)
    real, syn = encoder.to_aggregated(real_df), encoder.to_aggregated(syn_df)
    report = marginal_errors(real, syn, _workload_sets(args.queries, schema.domain), progress=True)
    frame = report.to_frame().sort_values("max_error", ascending=False)
    print(frame.head(args.top).to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(report.summary())
    jobs = [(outputs["--plot"], lambda tmp: save_plot(report, tmp, plot_format(args.plot)))] if args.plot else []
    _write_evaluation(args, outputs, jobs, {"queries": args.queries, **report.to_dict()})
    return 0


def _read_synthetic(path: str, args, typed: bool = False):
    """A synthetic CSV as ``synthdp generate`` writes it (header row, comma, UTF-8), with --drop applied; types
    inferred by pandas when ``typed``."""
    from synthdp.files import csvfile

    df = csvfile.read_csv(path, missing=args.missing, typed=typed)
    return df.drop(columns=[c for c in args.drop or [] if c in df.columns])


def cmd_schema(args) -> int:
    """Draft a schema from a CSV for the data owner to review (nothing private is released)."""
    from synthdp.core.draft import DRAFT_KEY, draft_document
    from synthdp.files import csvfile

    outputs = check_outputs({"-o": args.output}, inputs=[args.input])
    df = _read(args.input, args, typed=True)  # the draft reads types off the data, for the owner's review
    kw = _schema_kwargs(args)
    draft = draft_document(df, categorical=kw["categorical"], bounds=kw["bounds"], bins=kw["bins"], cuts=kw["cuts"],
                           datetimes=kw["datetimes"], learn_bounds=kw["learn_bounds"], decimals=kw["decimals"],
                           dtypes=kw["dtypes"], discretise=kw["discretise"], nullable=kw["nullable"], clip=kw["clip"],
                           max_categories=kw["max_categories"], missing_values=args.missing or (),
                           learn_categories=args.learn_categories, other=kw["other"])
    write_outputs([(outputs["-o"], lambda tmp: csvfile.dump_json(draft, tmp))])
    if DRAFT_KEY not in draft:
        print(f"schema: {args.output} ({len(draft['attributes'])} columns); nothing was read off the data: ready "
              "for generate --schema")
        return 0
    print(f"draft schema: {args.output} ({len(draft['attributes'])} columns)")
    for entry in draft[DRAFT_KEY]:
        print(f"  read off the data, review: {entry['column']}: {', '.join(entry['read'])}")
    print(f"replace what was read off the data with public values (a code book, legal ranges), then delete the "
          f"{DRAFT_KEY!r} entry; synthdp refuses the draft until then")
    return 0


def cmd_demo(args) -> int:
    """A real private generation on the embedded demo table, then the owner's error check.

    For scale, the same check is shown for a table drawn uniformly at random
    from the domain (what a generator that learned nothing would give).
    """
    import numpy as np

    from synthdp.api import generate_synthetic
    from synthdp.core.data import AggregatedData
    from synthdp.core.encoding import Encoder
    from synthdp.datasets.demo import demo_dataframe, demo_schema
    from synthdp.evaluation.marginals import marginal_errors
    from synthdp.files import csvfile
    from synthdp.quality import quality_report

    df = demo_dataframe(n=args.rows)
    schema = demo_schema()
    print(f"demo table: {len(df)} rows x {df.shape[1]} columns ({', '.join(df.columns)}), generated by synthdp")
    result = generate_synthetic(df, "marginals:2", epsilon=args.epsilon, delta=1e-6, schema=schema,
                                random_state=args.seed, progress=not args.quiet)
    print(result.report.summary())
    encoder = Encoder(schema)
    real = encoder.to_aggregated(df)
    sets = _workload_sets("marginals:2", schema.domain)
    report = marginal_errors(real, encoder.to_aggregated(result.data), sets)
    print(report.to_frame().sort_values("max_error", ascending=False)
          .to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(f"synthdp (epsilon={args.epsilon}): {report.summary()}")
    rng = np.random.default_rng(0)
    uniform = np.stack([rng.integers(0, s, len(result.data)) for s in schema.domain.sizes], axis=1)
    baseline = marginal_errors(real, AggregatedData.from_codes(schema.domain, uniform), sets)
    print(f"uniform random table (no information): {baseline.summary()}")
    os.makedirs("results", exist_ok=True)
    csvfile.write_csv(result.data, "results/demo-synthetic.csv")
    print("synthetic table: results/demo-synthetic.csv")
    quality = quality_report(df, result.data, schema, result.report.to_dict())
    quality.to_html("results/demo-quality.html")
    print(f"quality report (for the data owner, not for publication): results/demo-quality.html, score "
          f"{quality.score:.1f} of 100")
    return 0


#: The ``synthdp bench`` targets and their modules, imported by name when one runs (:func:`cmd_bench`).
BENCHES = {
    "oracles": "synthdp.bench.oracles",
    "evaluation": "synthdp.bench.answering",
    "accuracy": "synthdp.bench.accuracy",
    "scale": "synthdp.bench.scale",
    "evaluator": "synthdp.bench.certification",
    "classes": "synthdp.bench.classes",
    "numeric": "synthdp.bench.numeric",
    "width": "synthdp.bench.width",
    "reading": "synthdp.bench.reading",
}


def cmd_bench(args) -> int:
    """Run one benchmark; its module is loaded by name only now (they load peers and solvers the others never need)."""
    try:
        module = importlib.import_module(BENCHES[args.target])
    except ModuleNotFoundError as exc:
        raise InputError(f"benchmark {args.target!r} is not available in this version ({exc.name})") from None
    return _interruptible(lambda: module.run(args.rest), args.target)


def _interruptible(work, name: str) -> int:
    """Run ``work`` in a worker thread, so that SIGINT and SIGTERM act at once.

    A solver call (CP-SAT, numba) can hold the main thread for minutes, and
    Python runs signal handlers only between its bytecodes there; here the
    main thread only waits.  On a signal the run ends at once: whatever the
    benchmark had written stays (it writes its results as it goes), and a
    call still running in the worker is abandoned with the process.
    """
    outcome: dict[str, BaseException] = {}

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the main thread, which reports it
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"synthdp-bench-{name}", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"synthdp: interrupted ({signal.Signals(signum).name}); bench {name} stopped, the results it had "
              "written are kept", file=sys.stderr, flush=True)
        thread.join(1.0)
        if thread.is_alive():  # a solver call that does not return: end the process now
            sys.stdout.flush()
            os._exit(128 + signum)
        return 128 + signum
    if "error" in outcome:
        raise outcome["error"]
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``synthdp`` command and its sub-commands (one function each)."""
    parser = argparse.ArgumentParser(
        prog="synthdp", description="Differentially private synthetic tables with certified solver oracles.")
    parser.add_argument("--version", action="version", version=f"synthdp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_generate_parser, _sample_parser, _evaluate_parser, _schema_parser, _bench_parser, _demo_parser):
        add(sub, common)
    return parser


def _generate_parser(sub, common: argparse.ArgumentParser) -> None:
    """``synthdp generate``: every option of :class:`SynthesisConfig` but :data:`API_ONLY`, group by group."""
    g = sub.add_parser("generate", help="private synthetic CSV from a CSV", parents=[common], epilog=OUTPUTS_HELP)
    g.add_argument("input", help="input CSV (with a header row), Parquet file, directory of them, or glob")
    g.add_argument("-o", "--output", required=True, help="output table: .csv, or .parquet (needs pyarrow); "
                   "checked before anything runs, written with --report as one unit")
    g.add_argument("--report", help="write the full report as JSON here")
    g.add_argument("--save-model", metavar="FILE", help="also write the released model (a zip of JSON and numpy "
                   "arrays: the fitted model, the schema, the release report; nothing private) for synthdp sample")
    for group, heading in GROUPS.items():
        if group == "schema":
            _schema_options(g)
        else:
            _add_flags(g.add_argument_group(heading), options_in(group), GENERATE_FLAGS)
    cli_tune.add_arguments(g)
    g.set_defaults(func=cmd_generate)


def _sample_parser(sub, common: argparse.ArgumentParser) -> None:
    m = sub.add_parser("sample", help="more rows from a model saved by generate --save-model (free)",
                       parents=[common], epilog=OUTPUTS_HELP,
                       description="Draw fresh rows from a released model: post-processing of the release, no "
                       "privacy cost (docs/privacy.md §10.9).")
    m.add_argument("model", help="model file written by synthdp generate --save-model or Synthesizer.save")
    m.add_argument("-n", "--rows", type=int, required=True, help="number of rows to draw")
    m.add_argument("-o", "--output", required=True, help="output table: .csv, or .parquet (needs pyarrow)")
    m.add_argument("--seed", type=int, help="seed of the draw: the same seed gives the same rows")
    m.set_defaults(func=cmd_sample)


def _evaluate_parser(sub, common: argparse.ArgumentParser) -> None:
    e = sub.add_parser("evaluate", help="(non-private) error of a synthetic CSV against the real one",
                       parents=[common], epilog=OUTPUTS_HELP)
    e.add_argument("real", help="the real (private) table, CSV")
    e.add_argument("synthetic", help="the synthetic CSV, as synthdp generate writes it")
    e.add_argument("--queries", default="marginals:3", help="the queries to compare on: marginals:K or a workload "
                   "(per-marginal errors), or a class such as conjunctions or halfspaces (certified worst case)")
    e.add_argument("--plot", help="write a plot of the per-marginal errors: the worst marginals and the "
                   "distribution of all; format from the suffix (.png, .pdf or .svg)")
    e.add_argument("--json", metavar="FILE", help="also write the figures as JSON (summary and every marginal's "
                   "errors, or the certified worst case) for programs")
    e.add_argument("--top", type=int, default=20, help="rows of the error table to print")
    e.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the certified maximum error over a class that is not marginals or a workload "
                        "(conjunctions, monotone, disjunctions, parities, halfspaces); exit status 1 when it could "
                        "not be certified in time (the best bounds are printed)")
    q = e.add_argument_group("quality page (for the data owner only: it shows statistics of the real data)")
    q.add_argument("--html", metavar="FILE", help="write the quality report as one self-contained HTML page: the "
                   "score and its parts, every column's picture, pair trends, correlations, point masses, warnings")
    q.add_argument("--report", metavar="RELEASE", help="the release JSON synthdp generate --report wrote: its "
                   "summary (budget spent, method, what was learned privately) goes on the page")
    q.add_argument("--target", metavar="COL", help="ML efficacy: predict COL with a model trained on the synthetic "
                   "table and one trained on real rows, both tested on held-out real rows (needs synthdp[quality])")
    q.add_argument("--certify", metavar="CLASS", help="add the certified worst case over a query class (e.g. "
                   "conjunctions), within --time-limit seconds")
    # the owner's own check reads the categories off the real table: there is nothing to make public
    _schema_options(e, omit=("unsafe_public_categories", "derived"))
    e.set_defaults(func=cmd_evaluate)


def _schema_parser(sub, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("schema", help="draft a schema file from a CSV, for the data owner to review",
                       parents=[common], epilog=OUTPUTS_HELP,
                       description="Draft a schema (JSON) from a CSV. What you pass (--bounds, --bins, --cuts, "
                       "--datetime, --decimals, --discretise, --categorical, --nullable) is kept; everything else "
                       "(category lists, bounds of numeric columns, whether a column has missing values) is read "
                       "off the data and listed under '_read_off_data'. Review those parts, replace them with public "
                       "values, delete the '_read_off_data' entry, then pass the file to generate --schema.")
    s.add_argument("input", help="input CSV")
    s.add_argument("-o", "--output", required=True, help="schema JSON to write")
    s.add_argument("--learn-categories", nargs="+", metavar="COL",
                   help="categorical columns whose categories are left to be learned privately instead of read off "
                        "the data ('all': every column not made numeric by --bounds, --bins, --cuts, --datetime or "
                        "--learn-bounds, nor a column of numbers, which gets bounds to review or --learn-bounds all, nor "
                        "a column of dates, which gets bounds to review (--categorical keeps it text); "
                        "leave an ID column out with --drop); needs a delta at generate "
                        "(docs/privacy.md §9, §10.5)")
    _schema_options(s, omit=("schema", "unsafe_public_categories", "derived"))
    s.set_defaults(func=cmd_schema)


def _bench_parser(sub, common: argparse.ArgumentParser) -> None:
    b = sub.add_parser("bench", help="benchmarks: oracles, evaluation, accuracy", parents=[common])
    b.add_argument("target", choices=sorted(BENCHES))
    b.add_argument("rest", nargs=argparse.REMAINDER, help="options of the benchmark (see synthdp bench T --help)")
    b.set_defaults(func=cmd_bench)


def _demo_parser(sub, common: argparse.ArgumentParser) -> None:
    d = sub.add_parser("demo", help="private generation on the embedded demo table", parents=[common])
    d.add_argument("--epsilon", type=float, default=1.0)
    d.add_argument("--rows", type=int, default=20_000, help="size of the generated demo table")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("-q", "--quiet", action="store_true")
    d.set_defaults(func=cmd_demo)


class _OtherLibraries(logging.Filter):
    """synthdp's log records at the -v level; other libraries' (Dask's INFO chatter, its shutdown tracebacks)
    from ``level`` up: WARNING by default, INFO with -vv, nothing under -q."""

    def __init__(self, level: int):
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.split(".")[0] == "synthdp" or record.levelno >= self.level


def _interrupt(signum, frame) -> None:
    raise Interrupted(signum)


def _one_line_warnings() -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each warning as one line, ``warning: ...``, the first time its text
    is seen (no file path or source line: they mean nothing to a user of the command)."""
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)

    return show


def _charge_note(interrupt: KeyboardInterrupt) -> str:
    """What the privacy ledger was charged before an interrupt, for a command that runs private steps."""
    charged = getattr(interrupt, "charged", None)
    if charged is None:
        return ""
    if charged == "nothing":
        return "; no privacy budget was charged (no private step had run)"
    return (f"; the privacy ledger had been charged {charged} by the private steps that ran: a new run on the "
            "same data spends again (docs/privacy.md §10.1)")


def _refuse_unknown_flags(parser: argparse.ArgumentParser, command: str, unknown: Sequence[str]) -> None:
    """argparse's refusal of arguments no flag of ``command`` takes, with the flags nearest to each misspelt one
    (``--round 3``: did you mean --rounds?).  Exits with status 2."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    flags = [flag for action in sub._actions for flag in action.option_strings if flag.startswith("--")]
    hints = [f"{word}: did you mean {' or '.join(near)}?" for word in unknown if word.startswith("--")
             if (near := nearest(word.partition("=")[0], flags))]
    sub.error(f"unrecognized arguments: {' '.join(unknown)}" + "".join(f"; {hint}" for hint in hints))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _refuse_unknown_flags(parser, args.command, unknown)
    from synthdp.core.owner import log as owner_log  # after parsing: --help and usage errors load no library
    from synthdp.core.schema import PrivacyWarning

    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(levelname)s %(name)s: %(message)s")
    others = (logging.INFO if args.verbose >= 2 else logging.CRITICAL + 1 if getattr(args, "quiet", False)
              else logging.WARNING)
    quiet_others, handlers = _OtherLibraries(others), list(logging.getLogger().handlers)

    def not_owner(record: logging.LogRecord) -> bool:  # an owner's warning is printed once, as a warning
        return record.name != owner_log.name

    for handler in handlers:
        handler.addFilter(quiet_others)
        handler.addFilter(not_owner)

    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _interrupt) for sig in handled}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)  # the closing summary repeats them as "warning: ..."
            warnings.showwarning = _one_line_warnings()
            code = args.func(args)
        sys.stdout.flush()  # a reader gone away shows here, not at interpreter exit
        return code
    except SynthDPError as exc:
        print(f"synthdp: error: {exc.for_cli()}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`synthdp schema IN -o OUT | head -1`); the files are written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at interpreter exit
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        done = ("the outputs had already been written in full" if getattr(exc, "written", False)
                else "nothing was written")
        print(f"synthdp: interrupted ({signal.Signals(signum).name}); {done}{_charge_note(exc)}", file=sys.stderr)
        return 128 + signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for handler in handlers:
            handler.removeFilter(quiet_others)
            handler.removeFilter(not_owner)


if __name__ == "__main__":
    sys.exit(main())
