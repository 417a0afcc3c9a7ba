"""``synthdp bench evaluator``: time the certified worst-case evaluation (:mod:`synthdp.evaluation.worst_case`).

For each dataset and each number of attributes ``d`` (the first ``d``
columns), certify the maximum of ``|q(real) - q(synthetic)|`` over a query
class (default: all conjunctions of any width, ``3^d - 1`` queries on binary
data) between the real table and a synthetic one, and report the wall time
(median of ``--repeats``).  The synthetic table is either a sample of the
real table's one-way marginals drawn independently with the fixed public
seed ``--seed`` (default: no privacy, a fixed reference), a private
release of ``synthdp generate`` at ``--epsilon`` on ``marginals:3`` made in
the run, or CSV files named by a template such as ``out/{dataset}-syn.csv``.
Results go to ``<out>/worst-case.json``.

Wall times are of a shared machine: concurrent load inflates them.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
from pathlib import Path

import numpy as np
import pandas as pd

from synthdp.api import generate_synthetic
from synthdp.bench.options import add_out, add_quick, comma_list, quick
from synthdp.core.errors import InputError
from synthdp.datasets import CODED_DATASETS, load_coded
from synthdp.evaluation.worst_case import worst_case_error

log = logging.getLogger(__name__)


def independent_sample(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """``len(df)`` rows whose columns are drawn independently from ``df``'s one-way marginals."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: rng.choice(df[c].to_numpy(), size=len(df), replace=True) for c in df.columns})


def synthetic_table(name: str, df: pd.DataFrame, schema, kind: str, epsilon: float, seed: int) -> pd.DataFrame:
    """The synthetic table the evaluation compares ``df`` with (see the module docstring)."""
    if kind == "independent":
        return independent_sample(df, seed)
    if kind != "generate":
        return pd.read_csv(kind.format(dataset=name))

    log.info("generating a synthetic %s at epsilon %s (marginals:3, seed %d)", name, epsilon, seed)
    return generate_synthetic(df, "marginals:3", epsilon=epsilon, schema=schema, random_state=seed,
                              progress=False).data


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench evaluator", description=__doc__.splitlines()[0])
    parser.add_argument("--suite", "--datasets", dest="suite", default="nltcs,acs",
                        help="comma list of coded datasets (default: %(default)s)")
    parser.add_argument("--dims", default="8,12,16,20,23",
                        help="numbers of leading attributes to keep, capped at each dataset's (default: %(default)s)")
    parser.add_argument("--classes", default="conjunctions", help="comma list of query class specs (default: %(default)s)")
    parser.add_argument("--synthetic", default="independent",
                        help="'independent' one-way sample (default), 'generate' (a synthdp release at --epsilon), "
                             "or a CSV path template with {dataset}, e.g. results/{dataset}-syn.csv")
    parser.add_argument("--epsilon", type=float, default=1.0, help="budget of the generated release (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="public seed of the synthetic table (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per setting; the median and the "
                        "maximum time are reported (default: %(default)s)")
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per evaluation (default: %(default)s)")
    add_out(parser, "results")
    add_quick(parser, "--suite nltcs --dims 8 --repeats 1 --time-limit 30")
    return parser


def run(argv: list[str] | None = None) -> list[dict]:
    args = quick(build_parser().parse_args(argv), suite="nltcs", dims="8", repeats=1, time_limit=30.0)
    if args.synthetic not in ("independent", "generate") and "{dataset}" not in args.synthetic:
        raise InputError("--synthetic must be 'independent', 'generate' or a path template containing {dataset}")
    try:
        dims = [int(d) for d in comma_list(args.dims, "--dims")]
    except ValueError:
        raise InputError(f"--dims takes whole numbers such as 8,12, got {args.dims!r}") from None
    suites = comma_list(args.suite, "--suite", CODED_DATASETS)
    rows = []
    print(f"{'dataset':8s} {'d':>3s} {'class':14s} {'certified':>9s} {'max error':>9s} {'median s':>9s} "
          f"{'max s':>7s}  worst query")
    for name in suites:
        df, schema = load_coded(name)
        syn = synthetic_table(name, df, schema, args.synthetic, args.epsilon, args.seed)
        for d in sorted({min(d, df.shape[1]) for d in dims}):
            cols = list(df.columns[:d])
            sub_schema = type(schema)(tuple(schema[c] for c in cols), schema.missing_values)
            for spec in args.classes.split(","):
                results = [worst_case_error(df[cols], syn[cols], spec, schema=sub_schema, time_limit=args.time_limit)
                           for _ in range(args.repeats)]
                times = [r.seconds for r in results]
                last = results[-1]
                row = {"dataset": name, "d": d, "class": last.query_class, "class_size": str(last.class_size),
                       "rows": last.n_real, "certified": all(r.certified for r in results), "error": last.error,
                       "lower": last.lower, "upper": last.upper, "query": last.text, "backend": last.backend,
                       "median_seconds": round(statistics.median(times), 3), "max_seconds": round(max(times), 3)}
                rows.append(row)
                error = f"[{last.lower:.3f}, {last.upper:.3f}]" if last.error is None else f"{last.error:.4f}"
                print(f"{name:8s} {d:3d} {last.query_class:14s} {str(row['certified']):>9s} {error:>9s} "
                      f"{row['median_seconds']:9.2f} {row['max_seconds']:7.2f}  {last.text}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"synthetic": args.synthetic, "epsilon": args.epsilon if args.synthetic == "generate" else None,
              "seed": args.seed, "repeats": args.repeats, "runs": rows,
              "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count()}}
    (out / "worst-case.json").write_text(json.dumps(result, indent=2) + "\n")
    return rows
