"""What the privacy unit's bound ``k`` costs: accuracy at several ``k`` on a table with many rows per person.

Run ``python -m synthdp.bench.units`` (options: ``--ks 1 2 5 --seeds 3 --epsilon 1``).  The table is
built here: ``persons`` people, each with 1 to 10 visits (uniform), each visit a record of four
categorical attributes that depend on the person (a home region and a habit) and on the visit.  Every
run uses ``privacy_unit="person"`` (docs/privacy.md §10.6), so all rows of a person are protected
together; the error is the mean total-variation distance over all 2-way marginals between the
synthetic table and the *whole* raw table (all rows: the bias of dropping rows beyond ``k`` counts).
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from synthdp import generate_synthetic

REGIONS, HABITS, TIMES, KINDS = ["n", "s", "e", "w"], ["a", "b", "c"], ["am", "pm", "night"], ["x", "y", "z", "v"]
CATEGORIES = {"region": REGIONS, "habit": HABITS, "time": TIMES, "kind": KINDS}


def visits_table(persons: int = 3000, seed: int = 0) -> pd.DataFrame:
    """A public synthetic test table: 1-10 visits per person; heavy visitors differ from light ones."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 11, persons)
    region = rng.integers(0, 4, persons)
    habit = np.minimum(2, (rows - 1) // 4 + rng.integers(0, 2, persons) * (rng.random(persons) < 0.3))
    pid = np.repeat(np.arange(persons), rows)
    r, h = np.repeat(region, rows), np.repeat(habit, rows)
    time = np.where(rng.random(len(pid)) < 0.6, h, rng.integers(0, 3, len(pid)))
    kind = np.where(rng.random(len(pid)) < 0.5, r, rng.integers(0, 4, len(pid)))
    return pd.DataFrame({"person": pid.astype(str), "region": np.array(REGIONS)[r], "habit": np.array(HABITS)[h],
                         "time": np.array(TIMES)[time], "kind": np.array(KINDS)[kind]})


def mean_tv(real: pd.DataFrame, synthetic: pd.DataFrame) -> float:
    """Mean total-variation distance over the 2-way marginals of the attributes of ``CATEGORIES``."""
    out = []
    for a, b in itertools.combinations(CATEGORIES, 2):
        p = real.groupby([a, b]).size() / len(real)
        q = synthetic.groupby([a, b]).size() / len(synthetic)
        p, q = p.align(q, fill_value=0)
        out.append(0.5 * float(np.abs(p - q).sum()))
    return float(np.mean(out))


def run(ks=(1, 2, 5), seeds: int = 3, epsilon: float = 1.0, delta: float = 1e-9, persons: int = 3000) -> pd.DataFrame:
    """Mean TV error (mean and spread over seeds) of ``method='measure'`` at each ``k``."""
    df = visits_table(persons)
    rows = []
    for k in ks:
        errors = [mean_tv(df, generate_synthetic(df, "marginals:2", epsilon=epsilon, delta=delta, random_state=s,
                                                 categories=CATEGORIES, privacy_unit="person", max_rows_per_unit=k,
                                                 progress=False, n_rows=len(df)).data.astype(str))
                  for s in range(seeds)]
        rows.append({"k": k, "mean_tv_2way": float(np.mean(errors)), "std": float(np.std(errors)), "seeds": seeds})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", type=lambda v: v if v == "auto" else int(v), nargs="+", default=[1, 2, 5],
                        help="bounds k to compare; 'auto' chooses k privately")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--persons", type=int, default=3000)
    args = parser.parse_args(argv)
    table = run(args.ks, args.seeds, args.epsilon, persons=args.persons)
    print(f"visits table: {args.persons} persons, 1-10 rows each; epsilon={args.epsilon}, delta=1e-9, "
          "method=measure, marginals:2; error against all raw rows")
    print(table.to_string(index=False, float_format="%.4f"))


if __name__ == "__main__":
    main()
