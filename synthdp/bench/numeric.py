"""Benchmark: real tables with numeric columns, values in and values out (docs/privacy.md §10.3, §10.5).

Two tables, each with public bounds for its numeric columns and public
categories (a code book) for its text columns:

* ``adult``: the raw UCI Adult training file (32,561 rows, 6 numeric columns),
  with the README's bounds;
* ``skewed``: a generated table (50,000 rows, seed 0) with six skewed
  continuous or count columns (log-normal income, a zero-inflated Pareto
  claim amount, exponential waiting times, a balance with a point mass at 0,
  a negative-binomial count, age) and three text columns that depend on them.

Configurations: synthdp's defaults (PrivTree cells, values drawn in the cells),
synthdp with ten equal-width bins (``discretise="equal-width"``), and any peer
whose synthetic tables are found under ``--peers DIR`` as
``DIR/<peer>/<table>-<seed>.csv`` with the seconds in ``<table>-<seed>.json``
(peers such as dpmm run outside this repository; ``--export DIR`` writes each
real table and its public domain, ``<table>.csv`` and ``<table>.domain.json``,
for them).

Metrics (the owner's non-private evaluation, against the real table): per
numeric column the Kolmogorov-Smirnov statistic and the Wasserstein-1
distance divided by the column's public range; the mean total-variation
distance over all 2-way marginals, numeric columns cut into 20 quantile bins
of the real data (for evaluation only); the mean absolute difference of the
numeric columns' Pearson correlations; the wall time.

    synthdp bench numeric [--suite adult,skewed] [--methods privtree,equal-width] [--eps 1] [--delta 1e-9]
                          [--seeds 1] [--peers DIR] [--export DIR] [--out results/numeric] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

import synthdp
from synthdp.bench.options import add_out, add_quick, comma_list, existing_folder, quick
from synthdp.datasets import load_adult_raw
from synthdp.files.csvfile import write_json

#: The README's public bounds of raw Adult's numeric columns (written as integers: integer columns).
ADULT_BOUNDS = {"age": (17, 90), "fnlwgt": (0, 1_500_000), "education-num": (1, 16), "capital-gain": (0, 100_000),
                "capital-loss": (0, 5_000), "hours-per-week": (1, 99)}
#: Public bounds of the generated table's numeric columns (generous, as real public bounds are).
SKEWED_BOUNDS = {"income": (0.0, 10_000_000.0), "claim": (0.0, 1_000_000.0), "wait": (0.0, 1_000.0),
                 "balance": (-100_000.0, 100_000.0), "visits": (0, 500), "age": (0, 120)}
#: Public precision of the generated table's real columns (as they are recorded).
SKEWED_DECIMALS = {"income": 2, "claim": 2, "wait": 3, "balance": 2}
#: Quantile bins of a numeric column in the 2-way TVD (evaluation only).
TVD_BINS = 20


@dataclass(frozen=True)
class Table:
    """A benchmark table: the real rows and its public domain."""

    name: str
    data: pd.DataFrame
    bounds: dict
    categories: dict
    decimals: dict


def skewed_table(n: int = 50_000, seed: int = 0) -> pd.DataFrame:
    """The generated table: six skewed numeric columns and three text columns that depend on them."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(6.0, 7.0, n) + 16), 18, 99).astype(np.int64)
    plan = rng.choice(["basic", "plus", "premium", "family"], n, p=[0.5, 0.25, 0.15, 0.1])
    lift = pd.Series(plan).map({"basic": 0.0, "plus": 0.3, "premium": 0.8, "family": 0.4}).to_numpy()
    income = np.round(np.exp(rng.normal(10.2 + lift + 0.01 * (age - 40), 0.8)), 2)
    has_claim = rng.random(n) < 0.08 + 0.002 * (age - 18)
    claim = np.where(has_claim, np.round((rng.pareto(1.6, n) + 1) * 400, 2), 0.0)
    wait = np.round(rng.exponential(3.0 + 10 * has_claim, n), 3)
    balance = np.where(rng.random(n) < 0.3, 0.0, np.round(rng.normal(500 + 0.02 * income, 3000), 2))
    visits = rng.negative_binomial(2, 0.4 - 0.25 * has_claim, n).astype(np.int64)
    region = rng.choice(["north", "south", "east", "west", "centre", "islands"], n,
                        p=[0.3, 0.25, 0.2, 0.15, 0.07, 0.03])
    smoker = np.where(rng.random(n) < 0.15 + 0.1 * has_claim, "yes", "no")
    df = pd.DataFrame({"age": age, "income": income, "claim": claim, "wait": wait, "balance": balance,
                       "visits": visits, "plan": plan, "region": region, "smoker": smoker})
    for col, (lo, hi) in SKEWED_BOUNDS.items():
        df[col] = df[col].clip(lo, hi)
    return df


def load_table(name: str, rows: int | None = None) -> Table:
    """A benchmark table by name (its first ``rows`` rows), with its public bounds and code book."""
    if name == "adult":

        data = load_adult_raw("train")
        bounds, decimals = ADULT_BOUNDS, {}
    elif name == "skewed":
        data, bounds, decimals = skewed_table(), SKEWED_BOUNDS, SKEWED_DECIMALS
    else:
        raise ValueError(f"unknown table {name!r}; choose adult or skewed")
    # The code book: every category the documentation lists (for these tables, the values of the whole file).
    categories = {c: sorted(data[c].dropna().unique().tolist()) for c in data.columns if c not in bounds}
    data = data if rows is None else data.iloc[:rows].reset_index(drop=True)
    return Table(name, data, dict(bounds), categories, dict(decimals))


def export(table: Table, folder: Path) -> None:
    """Write the real table and its public domain (dpmm's format) for a peer run outside this repository."""
    folder.mkdir(parents=True, exist_ok=True)
    table.data.to_csv(folder / f"{table.name}.csv", index=False)
    domain = {c: {"lower": lo, "upper": hi} for c, (lo, hi) in table.bounds.items()}
    domain.update({c: {"categories": cats} for c, cats in table.categories.items()})
    (folder / f"{table.name}.domain.json").write_text(json.dumps(domain, indent=1, default=str))


# --------------------------------------------------------------------------
# metrics (the owner's evaluation; not private)
# --------------------------------------------------------------------------
def _codes(real: pd.Series, syn: pd.Series, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Common discrete codes: quantile bins of the real column, or labels (missing as its own value)."""
    if numeric:
        r, s = pd.to_numeric(real, errors="coerce").to_numpy(float), pd.to_numeric(syn, errors="coerce").to_numpy(float)
        edges = np.unique(np.nanquantile(r, np.linspace(0, 1, TVD_BINS + 1))[1:-1])
        code = lambda v: np.where(np.isnan(v), len(edges) + 1, np.searchsorted(edges, v, side="right"))  # noqa: E731
        return code(r), code(s)
    labels = {v: i for i, v in enumerate(pd.concat([real, syn]).astype(str).unique())}
    return real.astype(str).map(labels).to_numpy(), syn.astype(str).map(labels).to_numpy()


def evaluate(table: Table, syn: pd.DataFrame) -> dict:
    """KS, Wasserstein over range and correlation error of the numeric columns; mean 2-way TVD."""
    from scipy.stats import ks_2samp, wasserstein_distance

    real = table.data
    numeric = list(table.bounds)
    ks, w1 = [], []
    for col in numeric:
        r, s = real[col].dropna().to_numpy(float), pd.to_numeric(syn[col], errors="coerce").dropna().to_numpy(float)
        if len(s) == 0:
            ks.append(1.0), w1.append(1.0)
            continue
        lo, hi = table.bounds[col]
        ks.append(float(ks_2samp(r, s).statistic))
        w1.append(float(wasserstein_distance(r, s)) / (hi - lo))
    codes = {c: _codes(real[c], syn[c], c in table.bounds) for c in real.columns}
    tvds = []
    for a, b in itertools.combinations(real.columns, 2):
        width = int(max(codes[b][0].max(), codes[b][1].max())) + 1

        def dist(x, y):
            return np.bincount(x * width + y, minlength=0) / len(x)

        p, q = dist(codes[a][0], codes[b][0]), dist(codes[a][1], codes[b][1])
        size = max(len(p), len(q))
        tvds.append(0.5 * float(np.abs(np.pad(p, (0, size - len(p))) - np.pad(q, (0, size - len(q)))).sum()))
    syn_numeric = syn[numeric].apply(pd.to_numeric, errors="coerce").astype(float)
    real_corr, syn_corr = real[numeric].astype(float).corr().to_numpy(), syn_numeric.corr().to_numpy()
    off = ~np.eye(len(numeric), dtype=bool)
    corr = float(np.nanmean(np.abs(real_corr - syn_corr)[off]))
    return {"ks": float(np.mean(ks)), "tvd2": float(np.mean(tvds)), "wasserstein": float(np.mean(w1)),
            "correlation": corr, "ks_by_column": dict(zip(numeric, np.round(ks, 4).tolist()))}


# --------------------------------------------------------------------------
# runs
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One configuration on one table and seed."""

    table: str
    config: str
    seed: int
    seconds: float
    ks: float
    tvd2: float
    wasserstein: float
    correlation: float
    ks_by_column: dict


def synthdp_run(table: Table, *, epsilon: float, delta: float, seed: int,
                discretise: str) -> tuple[pd.DataFrame, float]:
    """synthdp with the table's public bounds and code book; the synthetic table and the seconds."""

    start = time.perf_counter()
    result = synthdp.generate_synthetic(table.data, "marginals:3", epsilon=epsilon, delta=delta, bounds=table.bounds,
                                        categories=table.categories, nullable=list(table.categories), clip=True,
                                        decimals=table.decimals or None,
                                        discretise=discretise, random_state=seed, progress=False)
    return result.data, time.perf_counter() - start


CONFIGS: dict[str, Callable[..., tuple[pd.DataFrame, float]]] = {
    "synthdp (PrivTree cells, default)": lambda t, **kw: synthdp_run(t, discretise="privtree", **kw),
    "synthdp (10 equal-width bins)": lambda t, **kw: synthdp_run(t, discretise="equal-width", **kw),
}


def peer_rows(table: Table, peers: Path, seeds: list[int]) -> list[Row]:
    """Rows of the peers' synthetic tables found under ``peers/<peer>/<table>-<seed>.csv``."""
    rows = []
    for folder in sorted(p for p in peers.iterdir() if p.is_dir()):
        for seed in seeds:
            csv, meta = folder / f"{table.name}-{seed}.csv", folder / f"{table.name}-{seed}.json"
            if csv.exists() and meta.exists():
                syn = pd.read_csv(csv)
                seconds = json.loads(meta.read_text())["seconds"]
                rows.append(Row(table.name, folder.name, seed, seconds, **evaluate(table, syn)))
    return rows


def format_table(rows: list[Row]) -> str:
    """A markdown table of the means over seeds."""
    frame = pd.DataFrame([asdict(r) for r in rows]).drop(columns="ks_by_column")
    means = frame.groupby(["table", "config"], sort=False).mean(numeric_only=True).reset_index()
    lines = ["| table | configuration | mean KS | mean 2-way TVD | Wasserstein / range | correlation error | s |",
             "|---|---|---|---|---|---|---|"]
    for r in means.itertuples():
        lines.append(f"| {r.table} | {r.config} | {r.ks:.3f} | {r.tvd2:.3f} | {r.wasserstein:.4f} | "
                     f"{r.correlation:.3f} | {r.seconds:.0f} |")
    return "\n".join(lines)


#: The synthdp configurations by short name (``--methods``).
METHODS = {"privtree": "synthdp (PrivTree cells, default)", "equal-width": "synthdp (10 equal-width bins)"}
TABLES = ("adult", "skewed")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synthdp bench numeric", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="adult,skewed", help="comma list of tables: adult, skewed (default: %(default)s)")
    p.add_argument("--methods", "--method", dest="methods", default="privtree,equal-width",
                   help="comma list of synthdp configurations: privtree (the default settings), equal-width "
                        "(default: %(default)s)")
    p.add_argument("--eps", type=float, default=1.0, help="total epsilon (default: %(default)s)")
    p.add_argument("--delta", type=float, default=1e-9, help="delta (default: %(default)s)")
    p.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1 (default: %(default)s)")
    p.add_argument("--rows", type=int, default=None, help="keep the first N rows of each table (quick checks)")
    p.add_argument("--peers", help="folder of peers' synthetic tables, <peer>/<table>-<seed>.csv and .json")
    p.add_argument("--export", help="write each real table and its public domain into this folder, then stop")
    add_out(p, "results/numeric")
    add_quick(p, "--suite skewed --methods privtree --seeds 1 --rows 5000")
    return p


def run(argv: list[str] | None = None) -> list[Row]:

    args = quick(build_parser().parse_args(argv), suite="skewed", methods="privtree", seeds=1, rows=5000)
    suite = comma_list(args.suite, "--suite", TABLES)
    methods = comma_list(args.methods, "--methods", METHODS)
    peers = existing_folder(args.peers, "--peers")
    tables = [load_table(name, rows=args.rows) for name in suite]
    if args.export:
        for table in tables:
            export(table, Path(args.export))
        print(f"wrote {[t.name for t in tables]} to {args.export}")
        return []
    seeds = list(range(args.seeds))
    rows: list[Row] = []
    for table in tables:
        for method in methods:
            for seed in seeds:
                syn, seconds = CONFIGS[METHODS[method]](table, epsilon=args.eps, delta=args.delta, seed=seed)
                rows.append(Row(table.name, METHODS[method], seed, seconds, **evaluate(table, syn)))
                print(f"{table.name} {method} seed {seed}: KS {rows[-1].ks:.4f}, 2-way TVD {rows[-1].tvd2:.4f}, "
                      f"{seconds:.0f} s", flush=True)
        if peers is not None:
            rows += peer_rows(table, peers, seeds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json([asdict(r) for r in rows], out / "numeric.json")
    text = format_table(rows)
    (out / "numeric.md").write_text(text + "\n")
    print(text)
    return rows
