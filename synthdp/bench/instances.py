"""Standard oracle instances for benchmarks: the game's objectives on the shared datasets.

*Query player* (docs/privacy.md §4.1 step 2): the objective
``-N n_x(D) + n N_x(P)`` of ``n`` real rows ``D`` against ``N`` synthetic
rows ``P``, plus integer noise on the separator coordinates at the scale
RSPM uses, ``m (2N + 1) / eps0``.  The synthetic rows are drawn from the
product of the real one-way marginals, what the data player produces in
early rounds.

*Data player* (docs/privacy.md §4.3): ``max_x sum_t V c_t q_t(x) + sum_j xi_j x_j``
over a history of queries (each picked ``c_t`` times, some of them
complements) with FTPL noise of scale ``b V``, ``b = sqrt(2 T (1 + 1/V))``.

The noise here is float-based integer noise (a difference of geometrics):
fine for benchmarks, which are not a privacy path.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from synthdp.datasets.benchmarks import load_coded
from synthdp.oracles.base import DataInstance, QueryInstance
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import Not, base_class
from synthdp.queries.conjunctions import Conjunction
from synthdp.queries.spec import parse_query_class
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain

log = logging.getLogger(__name__)

#: Benchmark class name -> (dataset, query class spec) of its query-player instances.
QUERY_FAMILIES: dict[str, list[tuple[str, str]]] = {
    "marginals3": [("adult", "marginals:3")],
    "workload3": [("adult", "workload:adult_3way_64")],
    "conjunctions": [("nltcs", "conjunctions"), ("acs", "conjunctions")],
    "parities": [("nltcs", "parities"), ("acs", "parities")],
    "halfspaces": [("nltcs", "halfspaces:1")],
}
#: Benchmark class name -> (dataset, spec) of its data-player instances.
DATA_FAMILIES: dict[str, list[tuple[str, str]]] = {
    "marginals3": [("adult", "marginals:3")],
    "workload3": [("adult", "workload:adult_3way_64")],
}
FULL = 0


@dataclass(frozen=True)
class GameSettings:
    """Game parameters that set the scale of the objectives' coefficients."""

    synthetic_rows: int = 300
    eps0: float = 0.1
    rounds: int = 100
    resolution: int = 10
    history: int = 100


@dataclass(frozen=True)
class BenchInstance:
    """One named oracle instance."""

    name: str
    family: str
    player: str
    dataset: str
    size: int
    instance: QueryInstance | DataInstance


def integer_laplace(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Integer noise with ``P(k) ~ exp(-|k| / scale)`` as a difference of two geometrics."""
    p = -math.expm1(-1.0 / scale)
    return (rng.geometric(p, size) - rng.geometric(p, size)).astype(np.int64)


@lru_cache(maxsize=None)
def load_dataset(name: str) -> AggregatedData:
    """A shared coded dataset (``$SYNTHDP_DATA_DIR`` overrides its folder) as aggregated rows."""
    frame, schema = load_coded(name)
    return AggregatedData.from_codes(schema.domain, frame.to_numpy(dtype=np.int64))


def subsample(data: AggregatedData, rows: int, rng: np.random.Generator) -> AggregatedData:
    """``rows`` records drawn without replacement (all of them for ``rows`` = 0 or more than ``n``)."""
    if rows == FULL or rows >= data.n:
        return data
    records = data.expand()
    return AggregatedData.from_codes(data.domain, records[rng.choice(len(records), rows, replace=False)])


def product_sample(data: AggregatedData, rows: int, rng: np.random.Generator) -> np.ndarray:
    """``rows`` records from the product of the one-way marginals of ``data``."""
    columns = [rng.choice(size, rows, p=data.marginal((a,)) / data.n) for a, size in enumerate(data.domain.sizes)]
    return np.stack(columns, axis=1).astype(np.int64)


def query_instance(query_class: QueryClass, real: AggregatedData, settings: GameSettings,
                   rng: np.random.Generator) -> QueryInstance:
    """The round objective ``-N n_x(D) + n N_x(P)`` plus RSPM-scale separator noise."""
    big_n = settings.synthetic_rows
    synthetic = AggregatedData.from_codes(real.domain, product_sample(real, big_n, rng))
    codes, weights = real.combine(synthetic, -big_n, real.n)
    m = query_class.separator().m
    noise = integer_laplace(rng, m * (2 * big_n + 1) / settings.eps0, m)
    return QueryInstance.build(query_class, codes, weights, noise)


def data_instance(query_class: QueryClass, n_queries: int, settings: GameSettings,
                  rng: np.random.Generator) -> DataInstance:
    """A history of ``n_queries`` distinct queries (multiplicities 1..3, a quarter complemented) with FTPL noise."""
    base = base_class(query_class)
    queries = sample_queries(base, n_queries, rng)
    if base is not query_class:  # complement-closed: a quarter of the queries complemented
        queries = [Not(q) if flip else q for q, flip in zip(queries, rng.random(len(queries)) < 0.25)]
    weights = settings.resolution * rng.integers(1, 4, len(queries))
    b = math.sqrt(2 * settings.rounds * (1 + 1 / settings.resolution))
    rho = integer_laplace(rng, b * settings.resolution, len(query_class.dual_separator()))
    return DataInstance.build(query_class, queries, weights, rho)


def sample_queries(query_class: QueryClass, count: int, rng: np.random.Generator) -> list:
    """``count`` distinct marginal cells: a random attribute set of the class, then a random cell."""
    domain: Domain = query_class.domain
    sets = getattr(query_class, "marginal_attrs", None)
    width = getattr(query_class, "max_width", 3)
    chosen: set = set()
    while len(chosen) < count:
        attrs = sets[rng.integers(len(sets))] if sets else tuple(sorted(rng.choice(len(domain), width, replace=False)))
        chosen.add(Conjunction(tuple((int(a), int(rng.integers(domain.sizes[a]))) for a in attrs)))
    return sorted(chosen)


def standard_instances(families: list[str], sizes: list[int], data_sizes: list[int], seed: int,
                       settings: GameSettings = GameSettings()) -> list[BenchInstance]:
    """Query-player instances per (family, dataset, row count) and data-player ones per query count."""
    out: list[BenchInstance] = []
    for family in families:
        for dataset, spec in QUERY_FAMILIES[family]:
            real = load_dataset(dataset)
            query_class = parse_query_class(spec, real.domain)
            for size in sizes:
                rng = np.random.default_rng([seed, size])
                sample = subsample(real, size, rng)
                out.append(BenchInstance(f"{family}/{dataset}/query/{sample.n}", family, "query", dataset, sample.n,
                                         query_instance(query_class, sample, settings, rng)))
        for dataset, spec in DATA_FAMILIES.get(family, []):
            query_class = parse_query_class(spec, load_dataset(dataset).domain)
            for count in data_sizes:
                rng = np.random.default_rng([seed, count, 1])
                out.append(BenchInstance(f"{family}/{dataset}/data/{count}q", family, "data", dataset, count,
                                         data_instance(query_class, count, settings, rng)))
    log.info("built %d benchmark instances", len(out))
    return out
