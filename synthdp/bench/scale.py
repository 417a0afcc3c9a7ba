"""Benchmark: the counting pass on ADULT-shaped tables of 1M to 100M rows (Dask engine, pandas where it fits).

For each size, rows of the coded ADULT table are drawn with replacement and
written as Parquet (files of up to 10M rows, row groups of 1M, written chunk
by chunk so generation fits in memory) into a temporary folder. Each
measurement then runs in a fresh process, so its peak resident memory is the
driver's own: the counting pass on a local cluster (``--workers`` processes,
one thread each; the cluster's start-up is timed apart), the tally pass of a
run that learns every column's categories (docs/privacy.md §10.7), then a whole small
and fast release from the same files (``marginals:1``, 3 rounds). The pandas
engine counts the same files in memory up to ``--pandas-max`` rows. A
single-core breakdown of one 1M-row batch (Parquet decode, encoding, keys and
counting them) shows where the time goes.

Prints a table, writes ``<output>/scale.json`` and ``<output>/scale.png``
(time against rows). Targets (reported, not asserted): 100M rows on 2 cores
with the driver under 2 GB; counting at least 5M rows/s from Parquet.

    synthdp bench scale [--rows 1e6,1e7,1e8] [--workers 2] [--pandas-max 1e7] [--output results/scale]
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import platform
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from synthdp.api import generate_synthetic
from synthdp.bench.options import add_out, add_quick, comma_list, existing_folder, quick
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.extras import require
from synthdp.core.keys import pack
from synthdp.core.machine import proc_bytes
from synthdp.core.schema import Attribute, Schema
from synthdp.datasets import load_coded
from synthdp.engines import get_engine
from synthdp.engines.keys import sum_by_key

#: Rows per generated Parquet file and per row group (= per generation chunk).
FILE_ROWS = 10_000_000
CHUNK_ROWS = 1_000_000
#: The whole run: small and fast, so that its time is the counting pass plus a constant.
RUN = dict(query_class="marginals:1", epsilon=1.0, delta=1e-9, rounds=3, samples_per_round=10, random_state=0,
           progress=False)


def generate(folder: Path, rows: int, seed: int = 0) -> float:
    """Write ``rows`` rows drawn from coded ADULT as Parquet files into ``folder``; seconds taken."""
    pa = require("pyarrow", "the scale benchmark")
    pq = require("pyarrow.parquet", "the scale benchmark")

    start = time.perf_counter()
    df, _ = load_coded("adult")
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    written, k = 0, 0
    while written < rows:
        in_file = min(FILE_ROWS, rows - written)
        with pq.ParquetWriter(folder / f"part-{k:04d}.parquet", pa.Schema.from_pandas(df, preserve_index=False)) as w:
            for chunk_start in range(0, in_file, CHUNK_ROWS):
                size = min(CHUNK_ROWS, in_file - chunk_start)
                table = pa.Table.from_pandas(df.iloc[rng.integers(0, len(df), size)], preserve_index=False)
                w.write_table(table, row_group_size=CHUNK_ROWS)
        written, k = written + in_file, k + 1
    return time.perf_counter() - start


def peak_bytes() -> int:
    """Peak resident memory of this process since it started (``VmHWM``).

    ``ru_maxrss`` would not do: Linux keeps it across ``exec``, so a spawned
    process would report its parent's peak.
    """
    peak = proc_bytes("/proc/self/status", "VmHWM")
    if peak is not None:
        return peak
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # other systems: kilobytes or bytes


def cpu_seconds() -> float:
    """User + system CPU time of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def every_domain_to_learn(schema: Schema) -> Schema:
    """``schema`` with every column's categories left to learn: what the tally pass reads for a run that learns its
    domains (docs/privacy.md §10.7)."""
    return Schema(tuple(Attribute(a.name, "categorical", origin="learn", missing=a.missing, dtype=a.dtype)
                        for a in schema.attributes), schema.missing_values)


def _measure(engine: str, folder: str, workers: int, whole_run: bool) -> dict[str, Any]:
    """One engine on one folder, in this (fresh) process: times and the driver's peak memory."""
    _, schema = load_coded("adult")
    out: dict[str, Any] = {"engine": engine, "idlepeak_bytes": peak_bytes()}
    cluster = client = None
    options: dict[str, Any] = {}
    if engine == "dask":
        distributed = require("distributed", "the scale benchmark's dask engine")

        start = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        client.run(importlib.import_module, "synthdp.engines.dask")  # workers' imports: part of the start-up
        out["cluster_start_s"] = time.perf_counter() - start
        options = {"scheduler": cluster.scheduler_address}
    try:
        cpu = cpu_seconds() + (sum(client.run(cpu_seconds).values()) if client else 0.0)
        start = time.perf_counter()
        data = get_engine(engine, **options).count(folder, schema)
        out["count_s"] = time.perf_counter() - start
        out["count_cpu_s"] = cpu_seconds() + (sum(client.run(cpu_seconds).values()) if client else 0.0) - cpu
        out["rows"], out["distinct_rows"] = data.n, len(data)
        out["countpeak_bytes"] = peak_bytes()
        start = time.perf_counter()
        get_engine(engine, **options).tally(folder, every_domain_to_learn(schema))
        out["tally_s"] = time.perf_counter() - start
        if client is not None:
            out["workerpeak_bytes"] = max(client.run(peak_bytes).values())
        if whole_run:
            start = time.perf_counter()
            generate_synthetic(folder, RUN["query_class"], engine=engine, schema=schema,
                               **options, **{k: v for k, v in RUN.items() if k != "query_class"})
            out["run_s"] = time.perf_counter() - start
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    out["peak_bytes"] = peak_bytes()
    return out


def _measure_child(queue, *args) -> None:
    try:
        queue.put(_measure(*args))
    except Exception as exc:  # reported by the parent
        queue.put({"error": f"{type(exc).__name__}: {exc}"})


def measure(engine: str, folder: Path, workers: int, whole_run: bool) -> dict[str, Any]:
    """:func:`_measure` in a fresh process, so the peak memory is the driver's own."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure_child, args=(queue, engine, str(folder), workers, whole_run))
    proc.start()
    result = queue.get()
    proc.join()
    if "error" in result:
        raise RuntimeError(f"{engine} on {folder}: {result['error']}")
    return result


def breakdown(folder: Path) -> dict[str, float]:
    """Seconds per million rows, on one core, of each step of counting one 1M-row Parquet batch."""
    pq = require("pyarrow.parquet", "the scale benchmark")

    _, schema = load_coded("adult")
    handle = pq.ParquetFile(sorted(folder.glob("*.parquet"))[0])
    encoder = Encoder(schema)
    steps: dict[str, float] = {}

    def timed(step: str, fn):
        start = time.perf_counter()
        out = fn()
        steps[step] = min(steps.get(step, np.inf), time.perf_counter() - start)
        return out

    for _ in range(3):  # best of three: the first pass pays for lazy imports and cold caches
        table = timed("parquet read + decode", lambda: handle.read_row_group(0, columns=list(schema.names)))
        frame = timed("arrow -> pandas", lambda: table.to_pandas(split_blocks=True))
        codes = timed("encode (schema check)", lambda: encoder.encode(frame))
        words = timed("mixed-radix keys", lambda: pack(codes, schema.domain.sizes))
        timed("count keys", lambda: sum_by_key(words, None))
    scale = 1e6 / len(frame)
    return {k: v * scale for k, v in steps.items()}


def plot(records: list[dict[str, Any]], path: Path) -> None:
    require("matplotlib", "the benchmark plots").use("Agg")  # before pyplot is first imported
    plt = require("matplotlib.pyplot", "the benchmark plots")

    fig, ax = plt.subplots(figsize=(6, 4))
    for engine in ("dask", "pandas"):
        mine = [r for r in records if r["engine"] == engine]
        if not mine:
            continue
        rows = [r["rows"] for r in mine]
        ax.plot(rows, [r["count_s"] for r in mine], "o-", label=f"{engine}: counting pass (wall)")
        ax.plot(rows, [r["count_cpu_s"] for r in mine], "^:", label=f"{engine}: counting pass (CPU s, all processes)")
        if all("run_s" in r for r in mine):
            ax.plot(rows, [r["run_s"] for r in mine], "s--", label=f"{engine}: whole run")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows (ADULT-shaped, Parquet)")
    ax.set_ylabel("seconds")
    ax.set_title("Counting pass and whole run against rows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def table(records: list[dict[str, Any]], workers: int) -> str:
    lines = [f"{'engine':<7} {'rows':>11} {'distinct':>9} {'count s':>8} {'Mrows/s':>8} {'Mrows/s/core':>12} "
             f"{'Mrows/cpu-s':>11} {'tally s':>8} {'run s':>7} {'driver peak MB':>14} {'worker peak MB':>14}"]
    for r in records:
        cores = workers if r["engine"] == "dask" else 1
        rate = r["rows"] / r["count_s"] / 1e6
        run = f"{r['run_s']:.1f}" if "run_s" in r else "-"
        worker = f"{r['workerpeak_bytes'] / 2**20:.0f}" if "workerpeak_bytes" in r else "-"
        lines.append(f"{r['engine']:<7} {r['rows']:>11,} {r['distinct_rows']:>9,} {r['count_s']:>8.1f} {rate:>8.2f} "
                     f"{rate / cores:>12.2f} {r['rows'] / r['count_cpu_s'] / 1e6:>11.2f} {r['tally_s']:>8.1f} {run:>7} "
                     f"{r['peak_bytes'] / 2**20:>14.0f} "
                     f"{worker:>14}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench scale", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1e6", help="comma-separated table sizes (default: %(default)s; the "
                        "sweep of docs/benchmarks.md is --rows 1e6,1e7,1e8)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local Dask workers (one thread each)")
    parser.add_argument("--pandas-max", type=float, default=1e7, help="largest table the pandas engine counts")
    parser.add_argument("--no-run", action="store_true", help="time the counting pass only, not a whole release")
    parser.add_argument("--tmp", type=Path, default=None, help="existing folder for the generated Parquet files "
                        "(default: the system's temporary folder)")
    add_out(parser, "results/scale")
    add_quick(parser, "--rows 1e5 --no-run")
    return parser


def run(argv: list[str] | None = None) -> dict:
    args = quick(build_parser().parse_args(argv), rows="1e5", no_run=True)
    try:
        sizes = [int(float(s)) for s in comma_list(args.rows, "--rows")]
    except ValueError:
        raise InputError(f"--rows takes numbers such as 1e6,1e7, got {args.rows!r}") from None
    existing_folder(args.tmp, "--tmp")
    args.output = Path(args.out)
    args.output.mkdir(parents=True, exist_ok=True)
    records, generation = [], {}
    breakdown_s: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=args.tmp, prefix="synthdp-scale-") as tmp:
        for rows in sizes:
            folder = Path(tmp) / f"adult-{rows}"
            generation[rows] = generate(folder, rows)
            size = sum(p.stat().st_size for p in folder.glob("*.parquet"))
            print(f"generated {rows:,} rows ({size / 2**20:.0f} MB of Parquet) in {generation[rows]:.1f} s",
                  flush=True)
            if not breakdown_s:
                breakdown_s = breakdown(folder)
            engines = ["dask"] + (["pandas"] if rows <= args.pandas_max else [])
            for engine in engines:
                record = measure(engine, folder, args.workers, whole_run=not args.no_run)
                record.update(parquet_bytes=size, generation_s=generation[rows])
                records.append(record)
                print(table([record], args.workers).splitlines()[-1], flush=True)
            shutil.rmtree(folder)
    result = {
        "machine": {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "workers": args.workers,
        "whole_run": None if args.no_run else RUN,
        "breakdown_s_per_million_rows_one_core": breakdown_s,
        "records": records,
    }
    (args.output / "scale.json").write_text(json.dumps(result, indent=2) + "\n")
    plot(records, args.output / "scale.png")
    print(table(records, args.workers))
    print("one core, seconds per million rows: " + ", ".join(f"{k} {v:.3f}" for k, v in breakdown_s.items()))
    print(f"wrote {args.output / 'scale.json'} and {args.output / 'scale.png'}")
    return result
