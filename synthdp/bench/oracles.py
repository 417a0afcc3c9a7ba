"""``synthdp bench oracles``: every backend on the standard oracle instances.

For each (backend, query class, player) the table gives the median and
maximum wall time, the share of calls proven optimal, the share that
failed, and the share whose objective equals the best one any backend
found on that instance.  Results go to ``<out>/oracles.json`` and a chart
to ``<out>/oracles.png``.  Backends that cannot be imported are noted as
unavailable; (backend, class) pairs a backend cannot encode are skipped
with a note.

Wall times are of a shared machine: concurrent load inflates them.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from synthdp.bench.options import add_out, add_quick, comma_list, quick
from synthdp.core.errors import InputError
from synthdp.bench.instances import FULL, QUERY_FAMILIES, BenchInstance, standard_instances
from synthdp.core.extras import require
from synthdp.oracles import Limits, Oracle, get_oracle
from synthdp.queries.complement import base_class

DEFAULT_CLASSES = ["marginals3", "workload3", "conjunctions", "parities"]
DEFAULT_BACKENDS = ["exact", "cpsat", "cbc", "maxsat"]


@dataclass
class Run:
    """One oracle call."""

    instance: str
    family: str
    player: str
    backend: str
    repeat: int
    seconds: float
    status: str
    backend_status: str
    objective: int | None
    bound: float | None
    nodes: int | None
    agrees: bool = False


def parse_sizes(text: str) -> list[int]:
    """``"1k,10k,full"`` -> ``[1000, 10000, FULL]``."""
    sizes = []
    for part in comma_list(text, "--sizes"):
        part = part.lower()
        try:
            sizes.append(FULL if part in ("full", "all", "0") else int(float(part[:-1]) * 1000) if part.endswith("k")
                         else int(part))
        except ValueError:
            raise InputError(f"cannot read the size {part!r}: give numbers, 1k style or 'full', e.g. 1k,10k") from None
    return sizes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synthdp bench oracles", description=__doc__.splitlines()[0])
    families = sorted(QUERY_FAMILIES)
    parser.add_argument("--class", dest="classes", default=",".join(DEFAULT_CLASSES),
                        help=f"comma list of {families} (default: %(default)s)")
    parser.add_argument("--backends", default=",".join(DEFAULT_BACKENDS), help="comma list (default: %(default)s)")
    parser.add_argument("--sizes", default="1k",
                        help="real rows of query-player instances, 'full' for all (default: %(default)s; the full "
                             "sweep of docs/benchmarks.md is --sizes 1k,10k,full --data-sizes 100,300 --repeats 3 "
                             "--time-limit 60)")
    parser.add_argument("--data-sizes", default="100",
                        help="weighted queries of data-player instances (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=1, help="calls per instance and backend (default: %(default)s)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per call (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated instances (default: %(default)s)")
    add_out(parser, "results/oracles")
    add_quick(parser, "--sizes 1k --data-sizes 100 --repeats 1 --time-limit 5")
    return parser


def load_backends(names: list[str], notes: list[str]) -> dict[str, Oracle]:
    """The importable backends; the others are noted as unavailable."""
    backends = {}
    for name in names:
        try:
            backends[name] = get_oracle(name)
        except ImportError as exc:
            notes.append(f"{name}: unavailable ({exc})")
    return backends


def call(oracle: Oracle, bench: BenchInstance, limits: Limits) -> tuple[float, object]:
    start = time.perf_counter()
    result = oracle.solve_query(bench.instance, limits) if bench.player == "query" else oracle.solve_data(
        bench.instance, limits)
    return time.perf_counter() - start, result


def run_all(instances: list[BenchInstance], backends: dict[str, Oracle], repeats: int, limits: Limits,
            notes: list[str]) -> list[Run]:
    runs: list[Run] = []
    for bench in instances:
        qc = bench.instance.query_class
        base = base_class(qc)
        for name, oracle in backends.items():
            if not oracle.supports(base):
                note = f"{name}: skipped on {bench.family} ({base.name}): unsupported"
                if note not in notes:
                    notes.append(note)
                continue
            for repeat in range(repeats):
                seconds, result = call(oracle, bench, limits)
                print(f"  {name:<8} {bench.name:<40} {seconds:9.3f}s  {result.status}", flush=True)
                runs.append(Run(bench.name, bench.family, bench.player, name, repeat, seconds, result.status,
                                result.backend_status, result.objective, result.bound, result.nodes))
    mark_agreement(runs)
    return runs


def mark_agreement(runs: list[Run]) -> None:
    """``agrees``: the run's objective is the best any backend found on its instance."""
    best: dict[str, int] = {}
    for run in runs:
        if run.objective is not None:
            pick = min if run.player == "query" else max
            best[run.instance] = run.objective if run.instance not in best else pick(best[run.instance], run.objective)
    for run in runs:
        run.agrees = run.objective is not None and run.objective == best.get(run.instance)


def summarise(runs: list[Run]) -> list[dict]:
    """One row per (backend, family, player)."""
    groups: dict[tuple[str, str, str], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.backend, run.family, run.player), []).append(run)
    rows = []
    for (backend, family, player), group in sorted(groups.items()):
        times = [r.seconds for r in group]
        rows.append({
            "backend": backend, "class": family, "player": player, "runs": len(group),
            "median_s": statistics.median(times), "max_s": max(times),
            "optimal": sum(r.status == "optimal" for r in group) / len(group),
            "failed": sum(r.status == "fail" for r in group) / len(group),
            "agree": sum(r.agrees for r in group) / len(group),
        })
    return rows


def print_table(rows: list[dict], notes: list[str]) -> None:
    header = f"{'backend':<8} {'class':<13} {'player':<6} {'runs':>4} {'median s':>9} {'max s':>9} " \
             f"{'optimal':>8} {'failed':>7} {'agree':>6}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['backend']:<8} {r['class']:<13} {r['player']:<6} {r['runs']:>4} {r['median_s']:>9.4f} "
              f"{r['max_s']:>9.4f} {r['optimal']:>8.0%} {r['failed']:>7.0%} {r['agree']:>6.0%}")
    for note in notes:
        print(f"note: {note}")


def plot(rows: list[dict], path: Path) -> None:
    """Median wall time (bar) and maximum (marker) per (class, player) and backend, log scale."""
    require("matplotlib", "the benchmark plots").use("Agg")  # before pyplot is first imported
    plt = require("matplotlib.pyplot", "the benchmark plots")

    keys = sorted({(r["class"], r["player"]) for r in rows})
    backends = sorted({r["backend"] for r in rows})
    width = 0.8 / max(1, len(backends))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(keys)), 4.0))
    for i, backend in enumerate(backends):
        by_key = {(r["class"], r["player"]): r for r in rows if r["backend"] == backend}
        xs = [k + i * width for k, key in enumerate(keys) if key in by_key]
        ax.bar(xs, [by_key[key]["median_s"] for key in keys if key in by_key], width, label=backend)
        ax.scatter(xs, [by_key[key]["max_s"] for key in keys if key in by_key], marker="_", color="black", s=80)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(keys))])
    ax.set_xticklabels([f"{c}\n{p}" for c, p in keys])
    ax.set_yscale("log")
    ax.set_ylabel("wall time per call [s] (bar: median, tick: max)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(argv: list[str] | None = None) -> dict:
    """Run the benchmark; returns the JSON document it writes."""
    args = quick(build_parser().parse_args(argv), sizes="1k", data_sizes="100", repeats=1, time_limit=5.0)
    classes = comma_list(args.classes, "--class", QUERY_FAMILIES)
    notes: list[str] = []
    backends = load_backends(comma_list(args.backends, "--backends"), notes)
    instances = standard_instances(classes, parse_sizes(args.sizes), parse_sizes(args.data_sizes), args.seed)
    runs = run_all(instances, backends, args.repeats, Limits(time_limit=args.time_limit, seed=args.seed), notes)
    rows = summarise(runs)
    print_table(rows, notes)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    document = {"settings": vars(args), "summary": rows, "notes": notes,
                "runs": [asdict(r) for r in runs]}
    (out / "oracles.json").write_text(json.dumps(document, indent=1, default=_plain))
    if rows:
        plot(rows, out / "oracles.png")
    print(f"results: {out / 'oracles.json'}" + (f", {out / 'oracles.png'}" if rows else ""))
    return document


def _plain(value):
    """JSON fallback for numpy scalars."""
    return value.item() if hasattr(value, "item") else str(value)


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    run(sys.argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
