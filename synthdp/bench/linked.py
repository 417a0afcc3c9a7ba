"""A generated pair of linked tables and the measures of a linked release on it (docs/privacy.md §12;
docs/benchmarks.md, "Two linked tables").

``customers`` (region, segment, age band) and ``orders`` (category, amount): 0 to 8 orders a customer, more for
the ``business`` segment; an order's category depends on its customer's region, its amount on the segment.  The
release is measured against the real pair bounded to ``k`` orders a customer: the TVD of the orders per
customer, of order category x customer region, and of order amount (10 real-quantile bins) x customer segment,
and whether every order's key is a synthetic customer's and the keys are ``1..N``.

Run ``python -m synthdp.bench.linked --seeds 0 1 2``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.api import generate_synthetic
from synthdp.linked.bounding import bound_families
from synthdp.linked.links import Link

__all__ = ["LINK", "PUBLIC", "LinkedScores", "make_pair", "score", "main"]

REGIONS = ("north", "south", "east", "west")
SEGMENTS = ("retail", "business", "premium")
AGE_BANDS = ("18-29", "30-44", "45-59", "60+")
CATEGORIES = ("books", "electronics", "garden", "toys", "food")
#: P(category | region), one row per region.
_CATEGORY_GIVEN_REGION = np.array([[.40, .20, .10, .10, .20], [.10, .40, .20, .10, .20],
                                   [.15, .10, .45, .20, .10], [.10, .15, .10, .45, .20]])
#: Mean log-amount per segment, and each segment's chance of an order in each of 8 tries.
_LOG_AMOUNT = {"retail": 3.0, "business": 4.2, "premium": 5.0}
_ORDER_CHANCE = {"retail": .3, "business": .65, "premium": .35}
LINK = {"orders.customer_id": "customers.customer_id"}
#: The public domain of the pair, per table, as the linked run takes it.
PUBLIC = dict(categories={"customers": {"region": list(REGIONS), "segment": list(SEGMENTS),
                                        "age_band": list(AGE_BANDS)},
                          "orders": {"category": list(CATEGORIES)}},
              bounds={"orders": {"amount": (0.0, 2000.0)}}, decimals={"orders": {"amount": 2}})


def make_pair(seed: int, customers: int = 3000) -> dict[str, pd.DataFrame]:
    """The generated pair, deterministic from ``seed``: customer keys are shuffled integers (not ``1..N``)."""
    rng = np.random.default_rng(seed)
    region = rng.choice(len(REGIONS), customers, p=[.3, .3, .2, .2])
    segment = rng.choice(len(SEGMENTS), customers, p=[.5, .3, .2])
    age = rng.choice(len(AGE_BANDS), customers, p=[.2, .3, .3, .2])
    keys = rng.permutation(customers * 10)[:customers] + 1000
    chance = np.array([_ORDER_CHANCE[s] for s in SEGMENTS])[segment]
    per = rng.binomial(8, chance)
    owner = np.repeat(np.arange(customers), per)
    category = np.array([rng.choice(len(CATEGORIES), p=_CATEGORY_GIVEN_REGION[r]) for r in region[owner]])
    mean = np.array([_LOG_AMOUNT[s] for s in SEGMENTS])[segment[owner]]
    amount = np.clip(np.round(np.exp(rng.normal(mean, 0.6)), 2), 0, 2000)
    parents = pd.DataFrame({"customer_id": keys, "region": np.array(REGIONS)[region],
                            "segment": np.array(SEGMENTS)[segment], "age_band": np.array(AGE_BANDS)[age]})
    orders = pd.DataFrame({"customer_id": keys[owner], "category": np.array(CATEGORIES)[category],
                           "amount": amount}).sample(frac=1, random_state=seed).reset_index(drop=True)
    return {"customers": parents, "orders": orders}


@dataclass(frozen=True)
class LinkedScores:
    """The measures of one release against the real pair bounded to ``k`` orders a customer."""

    orders_per_customer: float
    category_by_region: float
    amount_by_segment: float
    keys_ok: bool
    seconds: float


def _tvd(a: pd.Series, b: pd.Series) -> float:
    """Total variation distance between the empirical laws of ``a`` and ``b``."""
    p, q = a.value_counts(normalize=True), b.value_counts(normalize=True)
    return float(p.sub(q, fill_value=0).abs().sum() / 2)


def _joined(pair: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return pair["orders"].merge(pair["customers"], on="customer_id", how="inner")


def score(real: dict[str, pd.DataFrame], synthetic: dict[str, pd.DataFrame], k: int, seconds: float = 0.0
          ) -> LinkedScores:
    """The measures of ``synthetic`` against ``real`` bounded to ``k`` orders a customer."""
    link = Link("orders", "customer_id", "customers", "customer_id")
    fixed = np.array([1, 2], dtype=np.uint64)
    families = bound_families(real["customers"], real["orders"], link, k, fixed, fixed)
    real_m = pd.Series(families.m)
    real_joined = families.children.join(families.parents.iloc[families.parent_of].reset_index(drop=True))
    customers, orders = synthetic["customers"], synthetic["orders"]
    synth_m = orders.groupby("customer_id").size().reindex(customers["customer_id"], fill_value=0)
    synth_joined = _joined(synthetic)
    edges = np.unique(np.quantile(real_joined["amount"], np.linspace(0, 1, 11)[1:-1]))

    def amount_bins(df: pd.DataFrame) -> pd.Series:
        return pd.Series(np.searchsorted(edges, df["amount"], side="right"), index=df.index).astype(str) \
            + "|" + df["segment"]

    keys_ok = bool(orders["customer_id"].isin(customers["customer_id"]).all()
                   and (customers["customer_id"].to_numpy() == np.arange(1, len(customers) + 1)).all())
    return LinkedScores(_tvd(real_m, pd.Series(synth_m.to_numpy())),
                        _tvd(real_joined["category"] + "|" + real_joined["region"],
                             synth_joined["category"] + "|" + synth_joined["region"]),
                        _tvd(amount_bins(real_joined), amount_bins(synth_joined)), keys_ok, seconds)


def run(seed: int, *, epsilon: float = 1.0, delta: float = 1e-9, k: int = 5) -> LinkedScores:
    """One seeded release of the generated pair (seed ``seed`` for both the data and the run), scored."""
    real = make_pair(seed)
    start = time.perf_counter()
    result = generate_synthetic(real, links=LINK, max_rows_per_unit=k, epsilon=epsilon, delta=delta,
                                random_state=seed, progress=False, **PUBLIC)
    return score(real, result.tables, k, time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    """Print the measures of seeded releases of the generated pair, one line per seed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("-k", type=int, default=5)
    args = parser.parse_args(argv)
    print("seed  orders/customer  category x region  amount x segment  keys  seconds")
    for seed in args.seeds:
        s = run(seed, epsilon=args.epsilon, delta=args.delta, k=args.k)
        print(f"{seed:4d}  {s.orders_per_customer:15.4f}  {s.category_by_region:17.4f}  "
              f"{s.amount_by_segment:16.4f}  {'ok' if s.keys_ok else 'BAD':4s}  {s.seconds:7.1f}")


if __name__ == "__main__":
    main()
