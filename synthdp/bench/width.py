"""Benchmark: select-measure-estimate on wide coded tables (30 to 200 columns), time, peak memory and error.

Each table is generated (:func:`tree_table`): its columns follow a random
tree of dependencies -- column 0 is the root, column ``j`` has one parent
drawn uniformly among the columns before it -- with 2 to 8 values per
column, a root marginal and per-parent-value conditionals drawn from a
Dirichlet.  The data are the benchmark's own, so nothing here is private.
Each run happens in a fresh process (its peak resident memory is its own)
and releases as many records as the table has; the error is the largest
cell error over every 2-way marginal, as a share of the rows.

Prints a table and writes ``<output>/width.json``.  Targets (reported, not
asserted; docs/benchmarks.md): 100 columns x 100,000 rows in 5 minutes and
2 GB at most; 200 x 50,000 in 20 minutes.

    synthdp bench width [--columns 30,50,100,200] [--rows 50000,50000,100000,50000] [--seed 0]
                        [--queries marginals:2] [--epsilon 1] [--delta 1e-9] [--out results/width] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from synthdp.api import generate_synthetic
from synthdp.bench.options import add_out, add_quick, comma_list, quick
from synthdp.bench.scale import cpu_seconds, peak_bytes
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.evaluation.marginals import marginal_errors

#: Dirichlet concentration of the generated conditionals (below 1: strong, uneven dependencies).
CONCENTRATION = 0.5
#: Values per generated column: uniform in this range.
MIN_SIZE, MAX_SIZE = 2, 8


def tree_table(columns: int, rows: int, seed: int = 0):
    """A coded table of ``rows`` records whose ``columns`` follow a random tree, and its schema.

    Returns ``(df, schema, parents)``: integer codes ``0..size-1`` per column
    (named ``c0``, ``c1``, ...), the coded schema of those sizes, and each
    column's parent (None for the root).
    """

    if columns < 1 or rows < 1:
        raise ValueError(f"columns and rows must be positive, got {columns} and {rows}")
    import pandas as pd

    rng = np.random.default_rng(seed)
    sizes = rng.integers(MIN_SIZE, MAX_SIZE + 1, size=columns)
    parents: list[int | None] = [None] + [int(rng.integers(0, j)) for j in range(1, columns)]
    codes = np.empty((rows, columns), dtype=np.int64)
    for j in range(columns):
        p = parents[j]
        table = rng.dirichlet(np.full(sizes[j], CONCENTRATION), size=1 if p is None else sizes[p])
        given = np.zeros(rows, dtype=np.int64) if p is None else codes[:, p]
        cum = np.cumsum(table, axis=1)
        cum[:, -1] = 1.0
        codes[:, j] = (rng.random(rows)[:, None] > cum[given]).sum(axis=1)
    names = [f"c{j}" for j in range(columns)]
    schema = Schema._from_sizes({n: int(s) for n, s in zip(names, sizes)}, "tree_table")
    return pd.DataFrame(codes, columns=names), schema, parents


def _run(columns: int, rows: int, seed: int, queries: str, epsilon: float, delta: float, method: str) -> dict[str, Any]:
    """One release on a generated table, in this (fresh) process: time, peak memory, all-2-way max error."""

    df, schema, _ = tree_table(columns, rows, seed)
    idle = peak_bytes()
    cpu, start = cpu_seconds(), time.perf_counter()
    result = generate_synthetic(df, queries, epsilon=epsilon, delta=delta, schema=schema, random_state=seed,
                                method=method, progress=False)
    seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    peak = peak_bytes()
    encoder = Encoder(schema)
    real, synthetic = encoder.to_aggregated(df), encoder.to_aggregated(result.data)
    pairs = list(itertools.combinations(range(columns), 2))
    errors = marginal_errors(real, synthetic, pairs)
    return {"columns": columns, "rows": rows, "seed": seed, "queries": queries, "epsilon": epsilon, "delta": delta,
            "method": result.plan.method.name if result.plan is not None else method, "seconds": seconds,
            "cpu_seconds": cpu, "peak_bytes": peak, "idle_peak_bytes": idle, "max_error_2way": errors.max_error,
            "mean_tv_2way": errors.mean_tv, "rounds": result.report.rounds,
            "measurements": len(result.report.measurements)}


def _child(queue, *args) -> None:
    try:
        queue.put(_run(*args))
    except Exception as exc:  # reported by the parent
        queue.put({"error": f"{type(exc).__name__}: {exc}"})


def run_one(columns: int, rows: int, seed: int, queries: str, epsilon: float, delta: float,
            method: str) -> dict[str, Any]:
    """:func:`_run` in a fresh process, so the peak memory is the run's own."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, columns, rows, seed, queries, epsilon, delta, method))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def table(records: list[dict[str, Any]]) -> str:
    lines = [f"{'columns':>7} {'rows':>8} {'method':>8} {'time s':>8} {'CPU s':>8} {'peak MB':>8} {'rounds':>6} "
             f"{'max err (all 2-way)':>19}"]
    for r in records:
        if "error" in r:
            lines.append(f"{r['columns']:>7} {r['rows']:>8} failed: {r['error']}")
            continue
        lines.append(f"{r['columns']:>7} {r['rows']:>8} {r['method']:>8} {r['seconds']:>8.1f} {r['cpu_seconds']:>8.1f} "
                     f"{r['peak_bytes'] / 2**20:>8.0f} {r['rounds'] or '-':>6} {r['max_error_2way']:>19.4f}")
    return "\n".join(lines)


def _ints(text: str, option: str) -> list[int]:
    """Positive whole numbers of a comma list (``1e5`` allowed); anything else is refused, naming ``option``."""
    out = []
    for item in comma_list(text, option):
        try:
            value = float(item)
        except ValueError:
            value = 0.5
        if value != int(value) or value < 1:
            raise InputError(f"{option} takes positive whole numbers (comma list), got {item!r}")
        out.append(int(value))
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench width", description=__doc__.splitlines()[0])
    parser.add_argument("--columns", default="30,50,100,200", help="comma-separated widths")
    parser.add_argument("--rows", default="50000,50000,100000,50000",
                        help="rows per width (one value for all, or one per width)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated tables and of the runs")
    parser.add_argument("--queries", default="marginals:2", help="the query class every run is asked for")
    parser.add_argument("--epsilon", type=float, default=1.0, help="epsilon of every run")
    parser.add_argument("--delta", type=float, default=1e-9, help="delta of every run")
    parser.add_argument("--method", default="measure", help="synthdp's method (measure, game, auto)")
    add_out(parser, str(Path("results") / "width"))
    add_quick(parser, "--columns 40 --rows 5000")
    return parser


def run(argv: list[str] | None = None) -> dict:
    args = quick(build_parser().parse_args(argv), columns="40", rows="5000")
    widths, rows = _ints(args.columns, "--columns"), _ints(args.rows, "--rows")
    if len(rows) == 1:
        rows = rows * len(widths)
    if len(rows) != len(widths):
        raise InputError(f"--rows needs one value or one per width ({len(widths)}), got {len(rows)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for columns, n in zip(widths, rows):
        record = run_one(columns, n, args.seed, args.queries, args.epsilon, args.delta, args.method)
        record.setdefault("columns", columns)
        record.setdefault("rows", n)
        records.append(record)
        print(table([record]).splitlines()[-1], flush=True)
    result = {"machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "load_average": os.getloadavg()},
              "generator": {"concentration": CONCENTRATION, "sizes": [MIN_SIZE, MAX_SIZE]}, "records": records}
    path = out / f"width-seed{args.seed}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(table(records))
    print(f"wrote {path}")
    return result
