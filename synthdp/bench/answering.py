"""Benchmark: answer every cell of the ADULT 3-way x64 workload (458,996 cells, 48,842 rows).

Times :meth:`synthdp.queries.workload.Workload.cell_answers` on the raw rows and on
the aggregated distinct rows, and the generic
:meth:`synthdp.queries.conjunctions.Conjunctions.answer` on the same cells given as
query objects (the path the game and the oracles use); best of ``--repeats``
runs each.  Prints a small table and writes ``results/evaluation.json``.

    synthdp bench evaluation [--workload adult_3way_64] [--repeats 5]

Data come from ``$SYNTHDP_DATA_DIR`` (else ``../shared/datasets`` seen from the working directory),
workloads from ``$SYNTHDP_BENCHMARKS_DIR`` (else ``../shared/benchmarks``): :mod:`synthdp.datasets.locations`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from synthdp.bench.options import add_out, add_quick, quick
from synthdp.queries.spec import load_workload
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.datasets import data_dir

def load_adult(folder: Path) -> tuple[Domain, np.ndarray]:
    """The coded ADULT table and its public domain."""
    domain = Domain.from_sizes(json.loads((folder / "adult-domain.json").read_text()))
    frame = pd.read_csv(folder / "adult.csv", usecols=list(domain.names))
    return domain, domain.check_codes(frame[list(domain.names)].to_numpy())


def best_of(repeats: int, fn: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    """Smallest wall time of ``repeats`` calls, and the last result."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench evaluation", description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="adult_3way_64", help="workload key or JSON path (see synthdp.queries.spec)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per path; the best counts "
                        "(default: %(default)s)")
    parser.add_argument("--data-dir", type=Path, default=None, help="folder of adult.csv and adult-domain.json")
    add_out(parser, "results")
    add_quick(parser, "--repeats 1")
    return parser


def run(argv: list[str] | None = None) -> dict:
    args = quick(build_parser().parse_args(argv), repeats=1)

    domain, codes = load_adult(args.data_dir or data_dir())
    work = load_workload(args.workload, domain)
    data = AggregatedData.from_codes(domain, codes)
    ones = np.ones(len(codes), dtype=np.int64)
    cells = list(work._enumerate())

    t_raw, answers = best_of(args.repeats, lambda: work.cell_answers(codes, ones))
    t_agg, answers_agg = best_of(args.repeats, lambda: work.cell_answers(data.codes, data.counts))
    t_obj, answers_obj = best_of(args.repeats, lambda: work.answer(cells, data.codes, data.counts))
    if not (np.array_equal(answers, answers_agg) and np.array_equal(answers, answers_obj)):
        raise AssertionError("the evaluation paths disagree")
    if any(int(t.sum()) != len(codes) for t in work.marginals(data.codes, data.counts)):
        raise AssertionError("a marginal does not sum to the number of rows")

    timings = [
        ("Workload.cell_answers, raw rows", len(codes), t_raw),
        ("Workload.cell_answers, distinct rows", len(data), t_agg),
        ("Conjunctions.answer, query objects", len(data), t_obj),
    ]
    result = {
        "workload": work.name,
        "marginals": len(work.marginal_attrs),
        "cells": work.n_cells,
        "rows": len(codes),
        "distinct_rows": len(data),
        "repeats": args.repeats,
        "timings": [{"path": p, "rows": n, "best_seconds": round(t, 4)} for p, n, t in timings],
        "target_seconds": 2.0,
        "machine": {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count()},
    }
    print(f"{work.name}: {work.n_cells:,} cells of {len(work.marginal_attrs)} marginals, "
          f"{len(codes):,} rows ({len(data):,} distinct); best of {args.repeats}")
    print(f"{'path':40s} {'rows':>8s} {'seconds':>9s}")
    for path, n, t in timings:
        print(f"{path:40s} {n:8,d} {t:9.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "evaluation.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
