"""``synthdp evaluate``: the data owner's (non-private) check of a synthetic table against the real one: the error
of every marginal, the certified worst case over a query class, or the quality page; with ``--link``, the
quality report of two linked tables."""

from __future__ import annotations

from pathlib import Path

from synthdp.cli.common import (DOMAIN_OPTIONS, check_schema_columns, query_inputs, read_input, schema_kwargs,
                                workload_sets)
from synthdp.cli.linked import parse_link, table_names
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import resolve_schema
from synthdp.evaluation.marginals import marginal_errors, plot_format, save_plot
from synthdp.evaluation.worst_case import worst_case_error
from synthdp.files import csvfile
from synthdp.files.outputs import check_outputs, write_outputs
from synthdp.methods.game.players import as_workload
from synthdp.quality import quality_report
from synthdp.queries.complement import base_class
from synthdp.queries.spec import parse_query_class


def _is_marginal_workload(spec: str, domain) -> bool:
    """Whether ``spec`` is marginals or a workload (per-marginal tables); other classes get the certified worst case."""
    return as_workload(base_class(parse_query_class(spec, domain))) is not None


def _evaluate_worst_case(args, real_df, syn_df, schema, outputs) -> int:
    """The certified maximum error over a whole class (:mod:`synthdp.evaluation.worst_case`).

    Exit status 1 if it was not certified in time.
    """
    if args.plot:
        raise InputError(f"--plot draws per-marginal errors; it needs marginals or a workload, not {args.queries!r}")
    result = worst_case_error(real_df, syn_df, args.queries, schema=schema, time_limit=args.time_limit)
    print(result.summary())
    _write_evaluation(args, outputs, [], {"queries": args.queries, "worst_case": result.to_dict()})
    return 0 if result.certified else 1


def _write_evaluation(args, outputs, jobs: list, content: dict) -> None:
    """The evaluation's files as one unit: ``jobs`` (the plot) and ``--json FILE`` with ``content``."""
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
    if args.plot:
        raise InputError("--plot draws per-marginal errors; the --html page draws its own pictures: drop --plot")
    outputs = check_outputs({"--html": args.html, "--json": args.json},
                            inputs=[args.real, args.synthetic, args.schema, args.report])
    typed = not (args.schema or any(getattr(args, o) for o in DOMAIN_OPTIONS))
    real_df = read_input(args.real, args, typed=typed)
    syn_df = _read_synthetic(args.synthetic, args, typed=typed)
    kw = schema_kwargs(args)
    schema = kw.pop("schema")
    if schema is not None:
        check_schema_columns(schema, real_df.columns, args.real)
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


def _evaluate_linked(args) -> int:
    """The quality report of two linked tables (:func:`synthdp.quality.linked_quality_report`): the real parent's
    and child's CSVs, each named after its file, against ``DIR/<table>.csv``; nothing is overwritten."""
    if args.link is None or args.synthetic_folder is None:
        raise InputError("two tables need --link CHILD.COLUMN=PARENT.COLUMN and --synthetic DIR, e.g. synthdp "
                         "evaluate customers.csv orders.csv --synthetic out/ --link "
                         "orders.customer_id=customers.customer_id --html pair.html")
    one_table = [flag for flag in ("plot", "target", "certify", "schema", *DOMAIN_OPTIONS)
                 if getattr(args, flag, None)]
    if one_table:
        raise InputError(f"{', '.join('--' + f.replace('_', '-') for f in one_table)} compare one table; with --link "
                         "each column's type is read off the files: drop them, or evaluate one table on its own")
    names = table_names(args.real, args.synthetic)
    folder = Path(args.synthetic_folder)
    if not folder.is_dir():
        raise InputError(f"--synthetic {args.synthetic_folder!r} must be the folder synthdp generate --link wrote")
    paths = {name: folder / f"{name}.csv" for name in names}
    absent = [str(p) for p in paths.values() if not p.is_file()]
    if absent:
        raise InputError(f"--synthetic {args.synthetic_folder!r}: no synthetic table {absent} (synthdp generate "
                         "--link writes one <table>.csv per table, named after its input)")
    existing = [p for p in (args.html, args.json) if p and Path(p).exists()]
    if existing:
        raise InputError(f"{existing} exist already; nothing is overwritten: choose other names or remove them")
    outputs = check_outputs({"--html": args.html, "--json": args.json},
                            inputs=[args.real, args.synthetic, *paths.values(), args.report])
    real = {name: read_input(path, args, typed=True) for name, path in zip(names, (args.real, args.synthetic))}
    synthetic = {name: _read_synthetic(str(path), args, typed=True) for name, path in paths.items()}
    report = quality_report(real, synthetic, release=args.report, links=parse_link(args.link),
                            max_rows_per_unit=args.max_rows_per_unit)
    print(report.summary())
    jobs = [(outputs["--html"], report.to_html)] if args.html else []
    _write_evaluation(args, outputs, jobs, report.to_dict())
    if args.html:
        print(f"html: {args.html}")
    return 0


def run(args) -> int:
    if args.link is not None or args.synthetic_folder is not None:
        return _evaluate_linked(args)
    if args.max_rows_per_unit is not None:
        raise InputError("--max-rows-per-unit belongs to two linked tables: add --link and --synthetic DIR")
    if args.html:
        return _evaluate_html(args)
    page_only = [flag for flag in ("target", "certify", "report") if getattr(args, flag)]
    if page_only:
        raise InputError(f"{', '.join('--' + f for f in page_only)} belong to the quality page: add --html FILE")
    if args.plot:
        plot_format(args.plot)
    outputs = check_outputs({"--plot": args.plot, "--json": args.json},
                            inputs=[args.real, args.synthetic, args.schema, *query_inputs(args.queries)])
    real_df = read_input(args.real, args)
    syn_df = _read_synthetic(args.synthetic, args)
    kw = schema_kwargs(args)
    if kw["schema"] is not None:
        check_schema_columns(kw["schema"], real_df.columns, args.real)
    kw["unsafe_public_categories"] = True  # the owner's own, non-private check: the real data's categories
    kw["discretise"] = "equal-width"  # and public bins for bounded columns (nothing private is learned here)
    schema = resolve_schema(real_df, kw.pop("schema"), [], **kw).with_equal_width()
    if not _is_marginal_workload(args.queries, schema.domain):
        return _evaluate_worst_case(args, real_df, syn_df, schema, outputs)
    encoder = Encoder(schema)
    real, syn = encoder.to_aggregated(real_df), encoder.to_aggregated(syn_df)
    report = marginal_errors(real, syn, workload_sets(args.queries, schema.domain), progress=True)
    frame = report.to_frame().sort_values("max_error", ascending=False)
    print(frame.head(args.top).to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(report.summary())
    jobs = [(outputs["--plot"], lambda tmp: save_plot(report, tmp, plot_format(args.plot)))] if args.plot else []
    _write_evaluation(args, outputs, jobs, {"queries": args.queries, **report.to_dict()})
    return 0


def _read_synthetic(path: str, args, typed: bool = False):
    """A synthetic CSV as ``synthdp generate`` writes it (header row, comma, UTF-8), with --drop applied; types
    inferred by pandas when ``typed``."""
    df = csvfile.read_csv(path, missing=args.missing, typed=typed)
    return df.drop(columns=[c for c in args.drop or [] if c in df.columns])
