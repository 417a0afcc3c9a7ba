"""The ``synthdp`` command: generate, evaluate, schema, bench, demo.

Every error the library raises on purpose is printed as one line naming the
culprit, with exit status 2; nothing is written unless the command succeeds.
Output paths are checked before anything private runs and all outputs of a
run are written as one unit (:mod:`synthdp.files.outputs`); SIGINT and SIGTERM
end a run with one line and exit status 130 or 143.
"""

from __future__ import annotations

import argparse
import logging
import math
import signal
import sys
import threading
import warnings
from typing import Sequence

from synthdp._version import __version__
from synthdp.core.errors import InputError, SynthDPError
from synthdp.files.outputs import Interrupted

log = logging.getLogger("synthdp")

OUTPUTS_HELP = ("Outputs are checked before anything private runs (existing folder you can write in; not an input, "
                "not another output, not a directory, device or FIFO) and all outputs of a run are written as one "
                "unit: all appear, or none and existing files stay as they were. A symbolic link to an existing "
                "regular file is written through (the link stays); any other link is refused. SIGINT and SIGTERM "
                "stop the run with a message and leave no temporary file (exit status 130 and 143).")


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
    ``0.0:100`` a real one); ``LO..HI`` with dates for a datetime column (kept as text, read with its
    format); a ValueError says what is wrong."""
    lo, sep, hi = value.partition("..") if ".." in value else value.partition(":")
    if not sep:
        raise ValueError("write the bounds as LO:HI, e.g. age=17:90 (dates: LO..HI, e.g. 2020-01-01..2024-12-31)")
    try:
        lo_f, hi_f = float(lo), float(hi)
    except ValueError:
        if sep == "..":
            return lo, hi
        raise ValueError(f"{lo!r} and {hi!r} must both be numbers (dates: LO..HI with --datetime COL)") from None
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


def _learn_bounds(items: list | None) -> dict[str, str] | None:
    """``--learn-bounds COL[=DTYPE] ...``: each column and its public output dtype (float64 unless given)."""
    out = {}
    for item in _flat(items):
        name, sep, dtype = item.partition("=")
        if not name or (sep and dtype not in ("int64", "float64")):
            raise InputError(f"--learn-bounds expects COL or COL=int64|float64, got {item!r}")
        out[name] = dtype if sep else "float64"
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


def _schema_options(p: argparse.ArgumentParser, schema_file: bool = True) -> None:
    g = p.add_argument_group("schema (make the domain public instead of reading it off the data)")
    if schema_file:
        g.add_argument("--schema", help="schema JSON file (draft one with 'synthdp schema'), or a private-pgm "
                       "domain file {attr: size}")
    g.add_argument("--categorical", nargs="+", metavar="COL", help="treat these numeric columns as categorical")
    g.add_argument("--bounds", action="append", nargs="+", metavar="COL=LO:HI",
                   help="public bounds of numeric columns, e.g. --bounds age=17:90 hours-per-week=1:99")
    g.add_argument("--bins", action="append", nargs="+", metavar="COL=K",
                   help="number of equal-width bins of bounded columns, e.g. --bins age=8")
    g.add_argument("--cuts", action="append", nargs="+", metavar="COL=C1,C2,...",
                   help="public cut points of bounded columns (cells [LO,C1), ..., [Ck,HI]), e.g. --cuts age=25,45,65")
    g.add_argument("--datetime", action="append", nargs="+", metavar="COL[=FORMAT]",
                   help="datetime columns (numeric timestamps, written back as datetimes), with an optional strptime "
                        "format, e.g. --datetime joined=%%d/%%m/%%Y; give their bounds as dates: --bounds "
                        "joined=2000-01-01..2030-12-31")
    g.add_argument("--learn-bounds", action="append", nargs="+", metavar="COL[=DTYPE]",
                   help="numeric columns without public bounds whose bounds are learned privately (needs --delta; "
                        "docs/privacy.md §10.4); DTYPE int64 or float64 (default)")
    g.add_argument("--decimals", action="append", nargs="+", metavar="COL=K",
                   help="public precision of float columns: synthetic values are rounded to K decimals")
    g.add_argument("--discretise", choices=["privtree", "equal-width"], default="privtree",
                   help="cells of bounded columns without --bins: learned privately by PrivTree (default) or 10 "
                        "equal-width bins")
    g.add_argument("--nullable", nargs="+", metavar="COL", help="columns with public domains that may be missing")
    g.add_argument("--clip", action="store_true", help="clamp numeric values outside their bounds instead of failing")
    g.add_argument("--max-categories", type=int, default=100, help="refuse categorical columns with more values")
    r = p.add_argument_group("reading the CSV")
    r.add_argument("--missing", action="append", metavar="TOKEN", help="extra missing-value token, e.g. '?'")
    r.add_argument("--columns", help="comma-separated column names, one per field, for a CSV without a header row")
    r.add_argument("--skip-rows", type=int, default=0, metavar="N",
                   help="skip N leading lines (a title, a notice) before the header row or the first record")
    r.add_argument("--drop", nargs="+", metavar="COL", help="leave these columns of the CSV out (e.g. an ID column)")
    r.add_argument("--sep", default=",", help="field separator of the CSV (default ','; e.g. ';' or '\\t')")
    r.add_argument("--encoding", default="utf-8", help="text encoding of the CSV (default utf-8; e.g. latin-1)")


#: Options that describe the domain; a --schema file already fixes all of it.
_DOMAIN_OPTIONS = ("categorical", "bounds", "bins", "cuts", "datetime", "learn_bounds", "decimals", "nullable", "clip")


def _schema_kwargs(args) -> dict:
    from synthdp.core.schema import Schema

    schema = None
    if getattr(args, "schema", None):
        given = [f"--{o}" for o in _DOMAIN_OPTIONS if getattr(args, o)]
        if given:
            raise InputError(f"--schema fixes the whole domain, so {', '.join(given)} would be ignored; put "
                             "those settings in the schema file, or drop --schema")
        schema = Schema.load(args.schema)
    return dict(schema=schema, categorical=args.categorical, bounds=_pairs(args.bounds, "--bounds", _bounds) or None,
                bins=_pairs(args.bins, "--bins", _bins) or None, cuts=_pairs(args.cuts, "--cuts", _cuts) or None,
                nullable=args.nullable, clip=args.clip,
                datetimes=_datetimes(args.datetime), learn_bounds=_learn_bounds(args.learn_bounds),
                discretise=args.discretise, decimals=_pairs(args.decimals, "--decimals", _decimals) or None,
                max_categories=args.max_categories,
                unsafe_public_categories=getattr(args, "unsafe_public_categories", False))


def _read(path: str, args):
    """The CSV at ``path`` read with the CLI's options (missing tokens, names, separator, encoding, dropped columns)."""
    from synthdp.files.csvfile import read_csv
    from synthdp.files.sources import is_location, read_table

    if is_location(path):  # Parquet, a directory or a glob
        _no_skip_rows(args, f"{path!r} is not one CSV file")
        df = read_table(path, _read_options(args))
    else:
        df = read_csv(path, missing=args.missing, columns=args.columns.split(",") if args.columns else None,
                      sep=_separator(args.sep), encoding=args.encoding, skip_rows=args.skip_rows,
                      text=_unit(args))
    unknown = [c for c in args.drop or [] if c not in df.columns]
    if unknown:
        raise InputError(f"--drop names {unknown}, which {path!r} does not have; its columns are {list(df.columns)}")
    return df.drop(columns=args.drop) if args.drop else df


def _no_skip_rows(args, why: str) -> None:
    if getattr(args, "skip_rows", 0):
        raise InputError(f"--skip-rows applies to one CSV file read in memory, and {why}; remove the leading lines "
                         "from the file(s) instead")


def _read_options(args):
    """The CSV reading options of the command line, for the counting engines."""
    from synthdp.files.sources import ReadOptions

    return ReadOptions(missing=tuple(args.missing or ()), sep=_separator(args.sep), encoding=args.encoding,
                       columns=tuple(args.columns.split(",")) if args.columns else None, text=_unit(args))


def _rows_per_unit(text: str) -> int | str:
    """``--max-rows-per-unit``: an integer, or ``auto``."""
    return text if text == "auto" else int(text)


def _unit(args) -> tuple[str, ...]:
    """The privacy unit column, read as text (docs/privacy.md §10.6), if the command has one."""
    unit = getattr(args, "privacy_unit", None)
    return () if unit is None else (unit,)


def _separator(sep: str) -> str:
    return "\t" if sep in ("\\t", "tab", "TAB") else sep


def _check_schema_columns(schema, df, path: str) -> None:
    """Refuse CSV columns the schema does not list (the library would drop them with a warning)."""
    extra = [c for c in df.columns if str(c) not in schema.names]
    if extra:
        raise InputError(f"the schema has no column {extra[0]!r} of {path!r} (unlisted: {extra}); add them to the "
                         f"schema, or leave them out with --drop {' '.join(map(str, extra))}")


def _query_inputs(spec: str) -> list[str]:
    """Files a ``--queries`` spec reads (a workload JSON file), which no output may overwrite."""
    kind, _, where = spec.partition(":")
    return [where] if kind.strip() == "workload" and where.strip().endswith(".json") else []


def cmd_generate(args) -> int:
    from synthdp.api import synthesize
    from synthdp.config import SynthesisConfig
    from synthdp.files.csvfile import dump_json
    from synthdp.files.outputs import check_outputs, write_outputs
    from synthdp.files.parquet import dump_table, require_pyarrow, table_format
    from synthdp import cli_tune as tuning

    outputs = check_outputs({"-o": args.output, "--report": args.report},
                            inputs=[args.input, args.schema, *_query_inputs(args.queries)])
    if table_format(args.output, "-o") == "parquet":
        require_pyarrow()
    kwargs = _schema_kwargs(args)
    if tuning.requested(args):  # --tune FILE.json / --target-error ALPHA: docs/privacy.md §5
        return tuning.generate(args, kwargs, lambda: _read(args.input, args))
    # The one configuration object of the API and Synthesizer: every parameter is checked here, before reading.
    config = SynthesisConfig(
        query_class=args.queries, epsilon=args.epsilon, delta=args.delta, method=args.method, rounds=args.rounds,
        epsilon_per_round=args.epsilon_per_round, burn_in=args.burn_in, ftpl_noise=args.ftpl_noise,
        respond_to=args.respond_to,
        query_player=args.query_player, oracle=args.oracle, samples_per_round=args.samples_per_round,
        n_rows=args.n_rows, random_state=args.seed, progress=not args.quiet, time_limit=args.time_limit,
        relation=args.relation, numeric=args.numeric, engine=args.engine, scheduler=args.scheduler,
        privacy_unit=args.privacy_unit, max_rows_per_unit=args.max_rows_per_unit, **kwargs,
    )
    if args.engine == "dask":  # the files are counted part by part on the cluster, never read here
        from synthdp.engines.dask import DaskEngine

        _no_skip_rows(args, "--engine dask counts the files part by part")
        result = synthesize(args.input, config, engine=DaskEngine(scheduler=args.scheduler,
                                                                  options=_read_options(args)))
    else:
        df = _read(args.input, args)
        if kwargs["schema"] is not None:
            _check_schema_columns(kwargs["schema"], df.drop(columns=[c for c in _unit(args) if c in df.columns]),
                                  args.input)
        result = synthesize(df, config)
    jobs = [(outputs["-o"], lambda tmp: dump_table(result.data, tmp, args.output))]
    if args.report:
        jobs.append((outputs["--report"], lambda tmp: dump_json(result.report.to_dict(), tmp)))
    write_outputs(jobs)
    print(result.report.summary())
    print(f"output: {args.output} ({len(result.data)} rows)")  # no run time: it depends on the data
    return 0


def _workload_sets(spec: str, domain) -> list[tuple[int, ...]]:
    """Attribute sets of the marginals an evaluation looks at."""
    from synthdp.queries.spec import parse_query_class
    from synthdp.methods.players import as_workload

    qc = parse_query_class(spec, domain)
    base = getattr(qc, "base", qc)
    workload = as_workload(base)
    if workload is None:
        raise InputError(f"evaluate needs marginals or a workload (e.g. marginals:3), got {spec!r}")
    return [tuple(s) for s in workload.marginal_attrs]


def _is_marginal_workload(spec: str, domain) -> bool:
    """Whether ``spec`` is marginals or a workload (per-marginal tables); other classes get the certified worst case."""
    from synthdp.methods.players import as_workload
    from synthdp.queries.complement import base_class
    from synthdp.queries.spec import parse_query_class

    return as_workload(base_class(parse_query_class(spec, domain))) is not None


def _evaluate_worst_case(args, real_df, syn_df, schema, outputs) -> int:
    """The certified maximum error over a whole class (synthdp.evaluation.worst_case); exit status 1 if not certified in time."""
    from synthdp.evaluation.worst_case import worst_case_error

    if args.plot:
        raise InputError(f"--plot draws per-marginal errors; it needs marginals or a workload, not {args.queries!r}")
    result = worst_case_error(real_df, syn_df, args.queries, schema=schema, time_limit=args.time_limit)
    print(result.summary())
    _write_evaluation(args, outputs, [], {"queries": args.queries, "worst_case": result.to_dict()})
    return 0 if result.certified else 1


def _write_evaluation(args, outputs, jobs: list, content: dict) -> None:
    """The evaluation's files as one unit: ``jobs`` (the plot) and ``--json FILE`` with ``content``."""
    from synthdp.files.csvfile import dump_json
    from synthdp.files.outputs import write_outputs

    if args.json:
        jobs = [*jobs, (outputs["--json"], lambda tmp: dump_json(content, tmp))]
    write_outputs(jobs)
    for option, path in (("plot", args.plot), ("json", args.json)):
        if path:
            print(f"{option}: {path}")


def cmd_evaluate(args) -> int:
    from synthdp.api import resolve_schema
    from synthdp.core.encoding import Encoder
    from synthdp.files.outputs import check_outputs
    from synthdp.evaluation.marginals import marginal_errors, plot_format, save_plot

    if args.plot:
        plot_format(args.plot)
    outputs = check_outputs({"--plot": args.plot, "--json": args.json},
                            inputs=[args.real, args.synthetic, args.schema, *_query_inputs(args.queries)])
    real_df = _read(args.real, args)
    syn_df = _read_synthetic(args.synthetic, args)
    kw = _schema_kwargs(args)
    if kw["schema"] is not None:
        _check_schema_columns(kw["schema"], real_df, args.real)
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


def _read_synthetic(path: str, args):
    """A synthetic CSV as ``synthdp generate`` writes it (header row, comma, UTF-8), with --drop applied."""
    from synthdp.files.csvfile import read_csv

    df = read_csv(path, missing=args.missing)
    return df.drop(columns=[c for c in args.drop or [] if c in df.columns])


def cmd_schema(args) -> int:
    """Draft a schema from a CSV for the data owner to review (nothing private is released)."""
    from synthdp.core.draft import DRAFT_KEY, draft_schema
    from synthdp.files.csvfile import dump_json
    from synthdp.files.outputs import check_outputs, write_outputs

    outputs = check_outputs({"-o": args.output}, inputs=[args.input])
    df = _read(args.input, args)
    kw = _schema_kwargs(args)
    draft = draft_schema(df, categorical=kw["categorical"], bounds=kw["bounds"], bins=kw["bins"], cuts=kw["cuts"],
                         datetimes=kw["datetimes"], decimals=kw["decimals"], discretise=kw["discretise"],
                         nullable=kw["nullable"], clip=kw["clip"], max_categories=kw["max_categories"],
                         missing_values=args.missing or ())
    write_outputs([(outputs["-o"], lambda tmp: dump_json(draft, tmp))])
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
    import os

    import numpy as np

    from synthdp.datasets.demo import demo_dataframe, demo_schema
    from synthdp.api import generate_synthetic
    from synthdp.core.data import AggregatedData
    from synthdp.core.encoding import Encoder
    from synthdp.evaluation.marginals import marginal_errors
    from synthdp.files.csvfile import write_csv

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
    write_csv(result.data, "results/demo-synthetic.csv")
    print("synthetic table: results/demo-synthetic.csv")
    return 0


BENCHES = {
    "oracles": "synthdp.bench.oracles",
    "evaluation": "synthdp.bench.answering",
    "accuracy": "synthdp.bench.accuracy",
    "scale": "synthdp.bench.scale",
    "evaluator": "synthdp.bench.certification",
    "classes": "synthdp.bench.classes",
    "numeric": "synthdp.bench.numeric",
    "width": "synthdp.bench.width",
}


def cmd_bench(args) -> int:
    import importlib

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
    import os

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
    from synthdp import api
    from synthdp import cli_tune as tuning
    from synthdp.methods.registry import method_names

    parser = argparse.ArgumentParser(
        prog="synthdp", description="Differentially private synthetic tables with certified solver oracles.")
    parser.add_argument("--version", action="version", version=f"synthdp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help=VERBOSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="private synthetic CSV from a CSV", parents=[common],
                       epilog=OUTPUTS_HELP)
    g.add_argument("input", help="input CSV (with a header row), Parquet file, directory of them, or glob")
    g.add_argument("--engine", choices=["pandas", "dask"], default="pandas",
                   help="counting pass: pandas (in memory) or dask (part by part on a dask.distributed cluster; "
                        "needs --schema and synthdp[dask])")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="address of a running Dask scheduler (default with --engine dask: a local cluster)")
    g.add_argument("-o", "--output", required=True, help="output table: .csv, or .parquet (needs pyarrow); "
                   "checked before anything runs, written with --report as one unit")
    g.add_argument("--epsilon", type=float, required=True, help="total privacy budget epsilon")
    g.add_argument("--delta", type=float, default=None,
                   help="total delta (omit, or 0, for pure DP); choose it below 1/n. Checked under replace-one only: "
                        "under add-remove n is private, so take a public upper bound N on n and use delta <= 1/N^2")
    g.add_argument("--queries", default="marginals:3", help="query class: marginals:3, conjunctions, parities:2, "
                   "halfspaces, workload:FILE.json ... (default marginals:3)")
    g.add_argument("--method", choices=method_names(), default="auto",
                   help="measure: select-measure-estimate (docs/privacy.md §8; without --delta: pure DP with "
                        "Laplace measurements, marginal classes only, §10.2); game: the synthetic-data game (any "
                        "class; the options below marked game); auto (default): measure where it serves the class "
                        "(under pure DP when its data-independent bound is the better), unless a game option is set; "
                        "the report says which and why")
    g.add_argument("--rounds", type=int, default=None,
                   help="game rounds T (default: as many as keep --epsilon-per-round, at most "
                        f"{api.DEFAULT_MAX_ROUNDS})")
    g.add_argument("--epsilon-per-round", type=float, default=None,
                   help=f"per-round budget that fixes T (default {api.DEFAULT_EPSILON_PER_ROUND})")
    g.add_argument("--burn-in", type=float, default=None,
                   help=f"fraction of first rounds whose samples are not released (default {api.ROUND_BURN_IN} when "
                        "the query player answers the round, 0 when it answers the union)")
    g.add_argument("--respond-to", choices=["auto", "round", "union"], default="auto",
                   help="the query player answers this round's samples or the union of all so far (default: the "
                        f"union once the per-round budget is at least {api.UNION_FROM_EPSILON_PER_ROUND})")
    g.add_argument("--ftpl-noise", choices=["two-sided", "one-sided"], default=api.DEFAULT_NOISE,
                   help="data-player perturbation: the two-sided discrete Laplace of docs/privacy.md §4.3 or FEM-style one-sided "
                        "penalties (default %(default)s)")
    g.add_argument("--samples-per-round", type=int, default=None,
                   help=f"data-player samples per round N (default {api.DEFAULT_SAMPLES}, or "
                        f"{api.CAPPED_SAMPLES} when the rounds are capped at {api.DEFAULT_MAX_ROUNDS})")
    g.add_argument("--query-player", default="auto", help="auto, rspm, prsma, prsma-exact (PRSMA's law under an oracle that cannot fail: one call per round, for accuracy studies), exponential, noisy-max")
    g.add_argument("--oracle", default="auto", help="auto, exact, cpsat, cbc, maxsat, brute")
    g.add_argument("--relation", default="add-remove", choices=["add-remove", "replace-one"])
    g.add_argument("--privacy-unit", metavar="COL", default=None,
                   help="column identifying a person: the guarantee covers one unit with all its rows; needs "
                        "--max-rows-per-unit (docs/privacy.md §10.6). The column is never released")
    g.add_argument("--max-rows-per-unit", metavar="K", type=_rows_per_unit, default=None,
                   help="public bound k: at most k rows per unit are kept (chosen at random per unit); every noise "
                        "scale grows by k. 'auto': choose k privately (1/20 of epsilon)")
    g.add_argument("--time-limit", type=float, default=None,
                   help="seconds per oracle call: Mode N, privacy conditional on no solver failure")
    g.add_argument("--n-rows", type=int, default=None, help="resample the output to this many rows")
    g.add_argument("--numeric", choices=["label", "uniform"], default="uniform",
                   help="numeric columns as numbers drawn uniformly inside their cell (default) or as cell labels")
    g.add_argument("--seed", type=int, default=None, help="seed for reproducible experiments (omit for releases)")
    g.add_argument("--report", help="write the full report as JSON here")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _schema_options(g)
    g.add_argument("--unsafe-public-categories", action="store_true",
                   help="read the categories of columns without public ones off the data: NOT differentially "
                        "private (it publishes every value that occurs; the report says so). Default: learn them "
                        "privately by partition selection, which needs --delta (docs/privacy.md §9)")
    tuning.add_arguments(g)
    g.set_defaults(func=cmd_generate)

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
    _schema_options(e)
    e.set_defaults(func=cmd_evaluate)

    s = sub.add_parser("schema", help="draft a schema file from a CSV, for the data owner to review",
                       parents=[common], epilog=OUTPUTS_HELP,
                       description="Draft a schema (JSON) from a CSV. What you pass (--bounds, --bins, --cuts, "
                       "--datetime, --decimals, --discretise, --categorical, --nullable) is kept; everything else (category lists, bounds of numeric "
                       "columns, whether a column has missing values) is read off the data and listed under "
                       "'_read_off_data'. Review those parts, replace them with public values, delete the "
                       "'_read_off_data' entry, then pass the file to generate --schema.")
    s.add_argument("input", help="input CSV")
    s.add_argument("-o", "--output", required=True, help="schema JSON to write")
    _schema_options(s, schema_file=False)
    s.set_defaults(func=cmd_schema)

    b = sub.add_parser("bench", help="benchmarks: oracles, evaluation, accuracy", parents=[common])
    b.add_argument("target", choices=sorted(BENCHES))
    b.add_argument("rest", nargs=argparse.REMAINDER, help="options of the benchmark (see synthdp bench T --help)")
    b.set_defaults(func=cmd_bench)

    d = sub.add_parser("demo", help="private generation on the embedded demo table", parents=[common])
    d.add_argument("--epsilon", type=float, default=1.0)
    d.add_argument("--rows", type=int, default=20_000, help="size of the generated demo table")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("-q", "--quiet", action="store_true")
    d.set_defaults(func=cmd_demo)
    return parser


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(levelname)s %(name)s: %(message)s")
    others = (logging.INFO if args.verbose >= 2 else logging.CRITICAL + 1 if getattr(args, "quiet", False)
              else logging.WARNING)
    quiet_others, handlers = _OtherLibraries(others), list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(quiet_others)
    from synthdp.core.schema import PrivacyWarning

    warnings.simplefilter("ignore", PrivacyWarning)  # the closing summary repeats them as "warning: ..."
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _interrupt) for sig in handled}
    try:
        return args.func(args)
    except SynthDPError as exc:
        print(f"synthdp: error: {exc.for_cli()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        done = ("the outputs had already been written in full" if getattr(exc, "written", False)
                else "nothing was written")
        print(f"synthdp: interrupted ({signal.Signals(signum).name}); {done}", file=sys.stderr)
        return 128 + signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for handler in handlers:
            handler.removeFilter(quiet_others)


if __name__ == "__main__":
    sys.exit(main())
