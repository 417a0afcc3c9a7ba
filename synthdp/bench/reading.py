"""Benchmark: reading a CSV file for an in-memory run, against the reader that let pandas infer the types.

The raw UCI Adult training file (:func:`synthdp.datasets.data_dir`) is stacked ``--copies`` times (20 copies:
651,220 rows) into a temporary file, and three readers read it:

* ``inferred``: pandas' parser with its type inference (leading spaces skipped, ``?`` missing), the reader
  before every field was read as text (docs/privacy.md §10.1); it parses the numbers as it reads;
* ``text``: synthdp's reader, :func:`synthdp.files.csvfile.read_csv` (pyarrow's parser where its checks pass);
* ``text-pandas``: pandas' parser with every field as text, the reader synthdp falls back to.

Each frame has its text stripped as the in-memory engine does (:func:`synthdp.files.sources.strip_text`):
``read`` times that; ``read+encode`` also encodes it under the public raw Adult schema
(:func:`synthdp.datasets.adult_raw_schema`), where the text readers' numbers are parsed, so that the readers
compare like with like. Every measurement runs in a fresh process (its memory is first touched there, as a
run's is), the readers in turns so that the machine's load falls on all of them alike; the codes of every
reader must be equal. Prints the best CPU and wall seconds of ``--repeats`` and their ratio to ``inferred``,
and writes ``<out>/reading.json``. Target (reported, not asserted): ``text`` within 1.3 times ``inferred``.

    synthdp bench reading [--copies 20] [--repeats 5] [--out results/reading] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from synthdp.bench.options import add_out, add_quick, quick
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.datasets import ADULT_RAW_COLUMNS, adult_raw_schema, data_dir
from synthdp.files.csvfile import read_csv
from synthdp.files.sources import strip_text

#: The readers compared, in the order each round runs them.
READERS = ("inferred", "text", "text-pandas")
#: What each measurement times.
MODES = ("read", "read+encode")


def read(path: Path, reader: str) -> pd.DataFrame:
    """The raw Adult rows of ``path`` as ``reader`` reads them, text stripped as the in-memory engine strips it."""
    names, options = list(ADULT_RAW_COLUMNS), dict(na_values=["?"], keep_default_na=True, skipinitialspace=True)
    if reader == "inferred":
        df = pd.read_csv(path, header=None, names=names, **options)
    elif reader == "text":
        df = read_csv(path, missing=["?"], columns=names)
    else:
        df = pd.read_csv(path, header=None, names=names, dtype=str, **options)
    return strip_text(df)[0]


def measure(path: Path, reader: str, mode: str) -> dict[str, Any]:
    """CPU and wall seconds of one reading (and encoding, for ``read+encode``), and a digest of the codes."""
    import pyarrow.compute  # noqa: F401  (imported before the clock starts, as pandas imports it for text)
    import pyarrow.csv  # noqa: F401

    encoder = Encoder(adult_raw_schema())
    cpu, wall = time.process_time(), time.perf_counter()
    df = read(path, reader)
    codes = encoder.encode(df) if mode == "read+encode" else None
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    digest = hashlib.sha256(codes.tobytes()).hexdigest()[:16] if codes is not None else None
    return {"reader": reader, "mode": mode, "rows": len(df), "cpu_seconds": cpu, "seconds": wall, "codes": digest}


def _child(queue, path: Path, reader: str, mode: str) -> None:
    try:
        queue.put(measure(path, reader, mode))
    except Exception as exc:  # reported by the parent
        queue.put({"reader": reader, "mode": mode, "error": f"{type(exc).__name__}: {exc}"})


def measure_apart(path: Path, reader: str, mode: str) -> dict[str, Any]:
    """:func:`measure` in a fresh process."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, path, reader, mode))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def stacked_adult(folder: Path, copies: int) -> Path:
    """The raw Adult training file written ``copies`` times over into ``folder``; its path."""
    source = data_dir() / "adult-raw.data"
    if not source.is_file():
        raise InputError(f"{source} is missing: the benchmark reads the raw UCI Adult training file")
    data = source.read_bytes()
    path = folder / f"adult-x{copies}.csv"
    path.write_bytes(data * copies)
    return path


def best(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The least CPU and wall seconds of each reader and mode (``"reader mode"``), with their ratios to
    ``inferred``'s; the codes each gave."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        if "error" in r:
            continue
        key = f"{r['reader']} {r['mode']}"
        entry = out.setdefault(key, {"cpu_seconds": r["cpu_seconds"], "seconds": r["seconds"], "codes": r["codes"]})
        entry["cpu_seconds"] = min(entry["cpu_seconds"], r["cpu_seconds"])
        entry["seconds"] = min(entry["seconds"], r["seconds"])
    for key, entry in out.items():
        base = out.get(f"inferred {key.split(' ', 1)[1]}")
        entry["cpu_ratio"] = entry["cpu_seconds"] / base["cpu_seconds"] if base else None
        entry["wall_ratio"] = entry["seconds"] / base["seconds"] if base else None
    return out


def table(summary: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'reader':<12} {'mode':<12} {'CPU s':>7} {'wall s':>7} {'CPU x':>6} {'wall x':>6}"]
    for key, e in summary.items():
        reader, mode = key.split(" ", 1)
        ratios = (f"{e['cpu_ratio']:>6.2f} {e['wall_ratio']:>6.2f}" if e["cpu_ratio"] is not None
                  else f"{'-':>6} {'-':>6}")
        lines.append(f"{reader:<12} {mode:<12} {e['cpu_seconds']:>7.3f} {e['seconds']:>7.3f} {ratios}")
    return "\n".join(lines)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"needs a positive whole number, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench reading", description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=_positive, default=20, help="copies of raw Adult stacked (20: 651,220 rows)")
    parser.add_argument("--repeats", type=_positive, default=5, help="rounds of every reader and mode; the best counts")
    add_out(parser, str(Path("results") / "reading"))
    add_quick(parser, "--copies 2 --repeats 1")
    return parser


def run(argv: list[str] | None = None) -> dict:
    args = quick(build_parser().parse_args(argv), copies=2, repeats=1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    with tempfile.TemporaryDirectory() as folder:
        path = stacked_adult(Path(folder), args.copies)
        for _ in range(args.repeats):
            for mode in MODES:
                for reader in READERS:
                    records.append(measure_apart(path, reader, mode))
    failed = [r for r in records if "error" in r]
    if failed:
        raise RuntimeError(f"a measurement failed: {failed[0]['reader']} {failed[0]['mode']}: {failed[0]['error']}")
    summary = best(records)
    if len({e["codes"] for key, e in summary.items() if key.endswith("read+encode")}) != 1:
        raise RuntimeError(f"the readers' codes differ: {summary}")
    result = {"machine": {"cores": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "load_average": os.getloadavg()},
              "rows": records[0]["rows"], "copies": args.copies, "repeats": args.repeats, "best": summary,
              "records": records}
    target = out / "reading.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{result['rows']:,} rows, best of {args.repeats}")
    print(table(summary))
    print(f"wrote {target}")
    return result
