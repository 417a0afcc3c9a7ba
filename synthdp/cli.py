"""The ``synthdp`` command: generate, evaluate, bench, demo.

Every error the library raises on purpose is printed as one line naming the
culprit, with exit status 2; nothing is written unless the command succeeds.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from typing import Sequence

from synthdp._version import __version__
from synthdp.core.errors import InputError, SynthDPError

log = logging.getLogger("synthdp")


def _pairs(items: list[str] | None, option: str, parse) -> dict:
    """Parse ``NAME=VALUE`` options such as ``--bounds age=17:90``."""
    out = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(f"{option} expects NAME=VALUE, got {item!r}")
        try:
            out[name] = parse(value)
        except ValueError:
            raise InputError(f"cannot read {option} {item!r}") from None
    return out


def _bounds(value: str) -> tuple[float, float]:
    lo, sep, hi = value.partition(":")
    if not sep:
        raise ValueError(value)
    lo_f, hi_f = float(lo), float(hi)
    if not lo_f < hi_f:
        raise ValueError(value)
    return lo_f, hi_f


def _schema_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("schema (make the domain public instead of reading it off the data)")
    g.add_argument("--schema", help="schema JSON file (or a private-pgm domain file {attr: size})")
    g.add_argument("--categorical", nargs="+", metavar="COL", help="treat these numeric columns as categorical")
    g.add_argument("--bounds", action="append", metavar="COL=LO:HI", help="public bounds of a numeric column")
    g.add_argument("--bins", action="append", metavar="COL=K", help="number of equal-width bins of a numeric column")
    g.add_argument("--missing", action="append", metavar="TOKEN", help="extra missing-value token, e.g. '?'")
    g.add_argument("--nullable", nargs="+", metavar="COL", help="columns with public domains that may be missing")
    g.add_argument("--clip", action="store_true", help="clamp numeric values outside their bounds instead of failing")
    g.add_argument("--columns", help="comma-separated column names, for a CSV without a header row")
    g.add_argument("--max-categories", type=int, default=100, help="refuse categorical columns with more values")


def _schema_kwargs(args) -> dict:
    from synthdp.core.schema import Schema

    schema = None
    if args.schema:
        schema = Schema.load(args.schema)
    return dict(schema=schema, categorical=args.categorical, bounds=_pairs(args.bounds, "--bounds", _bounds) or None,
                bins=_pairs(args.bins, "--bins", int) or None, nullable=args.nullable, clip=args.clip,
                max_categories=args.max_categories)


def _read(path: str, args):
    from synthdp.core.io import read_csv

    return read_csv(path, missing=args.missing, columns=args.columns.split(",") if args.columns else None)


def cmd_generate(args) -> int:
    import time

    from synthdp.api import generate_synthetic
    from synthdp.core.io import write_json

    start = time.perf_counter()
    df = _read(args.input, args)
    result = generate_synthetic(
        df, args.queries, epsilon=args.epsilon, delta=args.delta, rounds=args.rounds,
        epsilon_per_round=args.epsilon_per_round, burn_in=args.burn_in, ftpl_noise=args.ftpl_noise,
        respond_to=args.respond_to,
        query_player=args.query_player, oracle=args.oracle, samples_per_round=args.samples_per_round,
        n_rows=args.n_rows, random_state=args.seed, progress=not args.quiet, time_limit=args.time_limit,
        relation=args.relation, numeric=args.numeric, **_schema_kwargs(args),
    )
    result.to_csv(args.output)
    if args.report:
        write_json(result.report.to_dict(), args.report)
    print(result.report.summary())
    print(f"output: {args.output} ({len(result.data)} rows) in {time.perf_counter() - start:.1f} s")
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


def _evaluate_worst_case(args, real_df, syn_df, schema) -> int:
    """The certified maximum error over a whole class (synthdp.worst_case); exit status 1 if not certified in time."""
    from synthdp.worst_case import worst_case_error

    if args.plot:
        raise InputError(f"--plot draws per-marginal errors; it needs marginals or a workload, not {args.queries!r}")
    result = worst_case_error(real_df, syn_df, args.queries, schema=schema, time_limit=args.time_limit)
    print(result.summary())
    return 0 if result.certified else 1


def cmd_evaluate(args) -> int:
    from synthdp.api import resolve_schema
    from synthdp.core.encoding import Encoder
    from synthdp.evaluate import marginal_errors, plot_errors
    from synthdp.core.io import read_csv
    real_df = _read(args.real, args)
    syn_df = read_csv(args.synthetic, missing=args.missing)
    kw = _schema_kwargs(args)
    schema = resolve_schema(real_df, kw.pop("schema"), [], **kw)
    if not _is_marginal_workload(args.queries, schema.domain):
        return _evaluate_worst_case(args, real_df, syn_df, schema)
    encoder = Encoder(schema)
    real, syn = encoder.to_aggregated(real_df), encoder.to_aggregated(syn_df)
    report = marginal_errors(real, syn, _workload_sets(args.queries, schema.domain))
    frame = report.to_frame().sort_values("max_error", ascending=False)
    print(frame.head(args.top).to_string(index=False, float_format=lambda x: f"{x:.4f}"))
    print(report.summary())
    if args.plot:
        plot_errors(report, args.plot)
        print(f"plot: {args.plot}")
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
    from synthdp.evaluate import marginal_errors
    from synthdp.core.io import write_csv

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
    "evaluation": "synthdp.bench.evaluation",
    "accuracy": "synthdp.bench.accuracy",
    "evaluator": "synthdp.bench.worst_case",
}


def cmd_bench(args) -> int:
    import importlib

    try:
        module = importlib.import_module(BENCHES[args.target])
    except ModuleNotFoundError as exc:
        raise InputError(f"benchmark {args.target!r} is not available in this version ({exc.name})") from None
    module.run(args.rest)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from synthdp import api

    parser = argparse.ArgumentParser(
        prog="synthdp", description="Differentially private synthetic tables with certified solver oracles.")
    parser.add_argument("--version", action="version", version=f"synthdp {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("generate", help="private synthetic CSV from a CSV")
    g.add_argument("input", help="input CSV (with a header row)")
    g.add_argument("-o", "--output", required=True, help="output CSV (written atomically)")
    g.add_argument("--epsilon", type=float, required=True, help="total privacy budget epsilon")
    g.add_argument("--delta", type=float, default=None, help="total delta (omit for pure DP); at most 1/n")
    g.add_argument("--queries", default="marginals:3", help="query class: marginals:3, conjunctions, parities:2, "
                   "halfspaces, workload:FILE.json ... (default marginals:3)")
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
                   help="data-player perturbation: the note's two-sided discrete Laplace or FEM-style one-sided "
                        "penalties (default %(default)s)")
    g.add_argument("--samples-per-round", type=int, default=None,
                   help=f"data-player samples per round N (default {api.DEFAULT_SAMPLES}, or "
                        f"{api.CAPPED_SAMPLES} when the rounds are capped at {api.DEFAULT_MAX_ROUNDS})")
    g.add_argument("--query-player", default="auto", help="auto, rspm, prsma, prsma-exact (PRSMA's law under an oracle that cannot fail: one call per round, for accuracy studies), exponential, noisy-max")
    g.add_argument("--oracle", default="auto", help="auto, exact, cpsat, cbc, maxsat, brute")
    g.add_argument("--relation", default="add-remove", choices=["add-remove", "replace-one"])
    g.add_argument("--time-limit", type=float, default=None,
                   help="seconds per oracle call: Mode N, privacy conditional on no solver failure")
    g.add_argument("--n-rows", type=int, default=None, help="resample the output to this many rows")
    g.add_argument("--numeric", choices=["label", "uniform"], default="label",
                   help="numeric columns as bin labels or values drawn within the bin")
    g.add_argument("--seed", type=int, default=None, help="seed for reproducible experiments (omit for releases)")
    g.add_argument("--report", help="write the full report as JSON here")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _schema_options(g)
    g.set_defaults(func=cmd_generate)

    e = sub.add_parser("evaluate", help="(non-private) error of a synthetic CSV against the real one")
    e.add_argument("real")
    e.add_argument("synthetic")
    e.add_argument("--queries", default="marginals:3")
    e.add_argument("--plot", help="write a PNG of per-marginal errors")
    e.add_argument("--top", type=int, default=20, help="rows of the error table to print")
    e.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the certified maximum error over a class that is not marginals or a workload "
                        "(conjunctions, monotone, disjunctions, parities, halfspaces); exit status 1 when it could "
                        "not be certified in time (the best bounds are printed)")
    _schema_options(e)
    e.set_defaults(func=cmd_evaluate)

    b = sub.add_parser("bench", help="benchmarks: oracles, evaluation, accuracy")
    b.add_argument("target", choices=sorted(BENCHES))
    b.add_argument("rest", nargs=argparse.REMAINDER, help="options of the benchmark (see synthdp bench T --help)")
    b.set_defaults(func=cmd_bench)

    d = sub.add_parser("demo", help="private generation on the embedded demo table")
    d.add_argument("--epsilon", type=float, default=1.0)
    d.add_argument("--rows", type=int, default=20_000, help="size of the generated demo table")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("-q", "--quiet", action="store_true")
    d.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(levelname)s %(name)s: %(message)s")
    from synthdp.core.schema import PrivacyWarning

    warnings.simplefilter("ignore", PrivacyWarning)  # the closing summary repeats them as "warning: ..."
    try:
        return args.func(args)
    except SynthDPError as exc:
        print(f"synthdp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("synthdp: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
