"""Benchmark: real tables with numeric columns, values in and values out (docs/privacy.md §10.3, §10.5).

Tables, each with public bounds for its numeric columns and public
categories (a code book) for its text columns:

* ``adult``: the raw UCI Adult training file (32,561 rows, 6 numeric columns),
  with the README's bounds;
* ``skewed``: a generated table (50,000 rows, seed 0) with six skewed
  continuous or count columns (log-normal income, a zero-inflated Pareto
  claim amount, exponential waiting times, a balance with a point mass at 0,
  a negative-binomial count, age) and three text columns that depend on them;
* ``dependent``: a generated table (30,000 rows, seed 0) of numbers that move
  together: three lengths of one item, a weight about their product, a price
  about the weight, and two grades that follow the weight and the price;
* ``amounts``: a generated loan table (20,000 rows, seed 0) whose amount is
  0 for about 85% of the rows and a round 1000, 5000 or 10000 for most of
  the rest, beside an income, an age and two text columns;
* ``flights``: a generated flights table (300,000 rows x 20 columns, seed 0)
  of the shape that set the run-time targets: a flight date, an hour and a
  minute, a distance, two delays with a point mass at zero and 14 text
  columns of 2 to 100 values that depend on them;
* ``mixed50``: a generated wide table (20,000 rows x 50 columns, seed 0):
  numbers that move together, zero-inflated and round-valued amounts, text
  columns and a date;
* ``calendar``: a generated table of one row per day of 1969-1988 (7,305 rows):
  the date, its year, month, day of the year and of the month, the weekday and
  a count, values that fill their ranges to the last one;
* ``credit``: a generated credit table (4,454 rows x 14 columns, the
  low-signal regime): skewed amounts, round values, a loan that follows a
  price, a tenure that grows with age, zero-inflated assets and debt;
* ``loans``: a generated loans table (10,000 rows x 55 columns) of numbers of
  very different scales, for the ``learn_bounds`` route.
* ``survey``: a generated survey table (3,000 rows x 12 columns, the
  low-signal regime): six 1-5 answers that follow two related attitudes, an
  age, a household size and a number of children, and a region, sex and
  education that move the answers;
* ``map``: a generated city (50,000 rows): a latitude and a longitude in
  districts of very different sizes and a sprinkle over the public bounding
  box, an hour and three text columns that follow the district;
* ``hump``: a generated table (20,000 rows) whose hours of work rise, then
  fall with age (a curved pair), an income that follows the hours, a tenure
  and two text columns;
* ``sum``: a generated table (30,000 rows) whose arrival delay is the
  departure delay plus a small noise, both with a point mass at 0, beside a
  distance, an hour and two text columns.

Configurations: synthdp's defaults (PrivTree cells, point masses kept as cells
of their own, values drawn in the cells), the same without point masses
(``no-point-masses``, docs/privacy.md §11.2), synthdp with ten equal-width bins
(``discretise="equal-width"``), synthdp without the copula that draws numeric
columns that move together (``no-copula``, docs/privacy.md §8.12), a bootstrap of the real rows (``bootstrap``:
the floor a sample of the real table itself reaches, not private), and any
peer whose synthetic tables are found under ``--peers DIR`` as
``DIR/<peer>/<table>-<seed>.csv`` with the seconds in ``<table>-<seed>.json``
(peers such as dpmm run outside this repository; ``--export DIR`` writes each
real table and its public domain, ``<table>.csv`` and ``<table>.domain.json``,
for them).

Metrics (the owner's non-private evaluation, against the real table): per
numeric column the Kolmogorov-Smirnov statistic (mean and max over the
columns) and the Wasserstein-1 distance divided by the column's public range;
the mean total-variation distance over all 2-way marginals, numeric columns
cut into 20 quantile bins of the real data (for evaluation only), and its
mean over the pairs of two text, one numeric and two numeric columns; the mean
and the largest absolute difference of the numeric columns' Pearson
correlations, the largest of their Spearman correlations; the 2-way TVD of
each of the table's key numeric pairs (:data:`KEY_PAIRS`: a map's
coordinates, a curved pair, a sum) on the same 20 x 20 grid of real quantiles; the share of rows
at each of the table's point masses (a value many rows hold: 0, a round
amount), real and synthetic; the wall time; the peak resident memory of the
benchmark process when the run ended (``VmHWM``,
:func:`synthdp.bench.scale.peak_bytes`: a high-water mark that includes the
tables loaded, so run one table and one configuration per process to read a
run's own peak).

    synthdp bench numeric [--suite adult,skewed,dependent,amounts] [--methods privtree,equal-width,bootstrap]
                          [--eps 1] [--delta 1e-9]
                          [--seeds 1] [--peers DIR] [--export DIR] [--out results/numeric] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

import synthdp
from synthdp.bench.options import add_out, add_quick, comma_list, existing_folder, quick
from synthdp.bench.scale import peak_bytes
from synthdp.datasets import load_adult_raw
from synthdp.files.csvfile import write_json
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.settings import MeasureOptions

#: The README's public bounds of raw Adult's numeric columns (written as integers: integer columns).
ADULT_BOUNDS = {"age": (17, 90), "fnlwgt": (0, 1_500_000), "education-num": (1, 16), "capital-gain": (0, 100_000),
                "capital-loss": (0, 5_000), "hours-per-week": (1, 99)}
#: Public bounds of the generated table's numeric columns (generous, as real public bounds are).
SKEWED_BOUNDS = {"income": (0.0, 10_000_000.0), "claim": (0.0, 1_000_000.0), "wait": (0.0, 1_000.0),
                 "balance": (-100_000.0, 100_000.0), "visits": (0, 500), "age": (0, 120)}
#: Public precision of the generated table's real columns (as they are recorded).
SKEWED_DECIMALS = {"income": 2, "claim": 2, "wait": 3, "balance": 2}
#: Public bounds and precision of the dependent table's numeric columns.
DEPENDENT_BOUNDS = {"length": (0.0, 500.0), "width": (0.0, 500.0), "height": (0.0, 500.0),
                    "weight": (0.0, 20_000.0), "price": (0.0, 50_000.0)}
DEPENDENT_DECIMALS = {"length": 1, "width": 1, "height": 1, "weight": 2, "price": 2}
#: Public bounds and precision of the loan table's numeric columns (the amount and the age are integers).
AMOUNTS_BOUNDS = {"amount": (0, 100_000), "income": (0.0, 1_000_000.0), "age": (18, 100)}
AMOUNTS_DECIMALS = {"income": 2}
#: Public bounds of the flights table's numeric columns (dates for the flight date) and its precision.
FLIGHTS_BOUNDS = {"date": ("2013-01-01", "2013-12-31"), "hour": (0, 23), "minute": (0, 59), "distance": (0, 5_000),
                  "dep_delay": (-60, 1_500), "arr_delay": (-90, 1_500)}
#: Public bounds and precision of the wide mixed table's numeric columns (and its date).
MIXED50_BOUNDS = {"opened": ("2000-01-01", "2024-12-31"), "age": (18, 100),
                  **{f"size{i}": (0.0, 1_000.0) for i in range(6)}, **{f"amount{i}": (0, 100_000) for i in range(5)},
                  **{f"rate{i}": (0.0, 100.0) for i in range(4)}, **{f"count{i}": (0, 200) for i in range(4)}}
MIXED50_DECIMALS = {**{f"size{i}": 1 for i in range(6)}, **{f"rate{i}": 2 for i in range(4)}}
#: The values whose share of rows the benchmark reports, per table (the tables' point masses).
POINT_MASSES = {"adult": {"capital-gain": (0,), "capital-loss": (0,), "hours-per-week": (40,)},
                "skewed": {"claim": (0.0,), "balance": (0.0,)},
                "amounts": {"amount": (0, 1000, 5000, 10000)},
                "flights": {"dep_delay": (0,), "arr_delay": (0,)},
                "mixed50": {"amount0": (0, 1000, 5000), "amount1": (0,)}}
#: Quantile bins of a numeric column in the 2-way TVD (evaluation only).
TVD_BINS = 20
#: The numeric pairs whose joint shape the benchmark reports alone, per table (their 2-way TVD on the
#: ``TVD_BINS`` x ``TVD_BINS`` grid of the real quantiles): a map's coordinates, a curved pair, a sum.
KEY_PAIRS = {"map": (("lat", "lon"),), "hump": (("age", "hours"),), "sum": (("dep_delay", "arr_delay"),),
             "adult": (("age", "hours-per-week"),), "flights": (("dep_delay", "arr_delay"),)}


@dataclass(frozen=True)
class Table:
    """A benchmark table: the real rows and its public domain."""

    name: str
    data: pd.DataFrame
    bounds: dict
    categories: dict
    decimals: dict
    #: The written form of each datetime column (its public precision: whole days here).
    datetimes: dict = field(default_factory=dict)
    #: Numeric columns that may be missing (a real table's; text columns always may).
    nullable: tuple = ()


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


def dependent_table(n: int = 30_000, seed: int = 0) -> pd.DataFrame:
    """The generated table of numbers that move together: lengths of one item, its weight and price, two grades.

    The three lengths share one log-normal size (Spearman about 0.97 between
    them), the weight is about their product and the price about the weight,
    so a synthesiser that keeps each column alone but not their joint shape
    shows it in the 2-way TVD and the correlation errors.
    """
    rng = np.random.default_rng(seed)
    size = np.exp(rng.normal(3.5, 0.3, n))
    length = np.round(size * np.exp(rng.normal(0.0, 0.08, n)), 1)
    width = np.round(0.6 * size * np.exp(rng.normal(0.0, 0.08, n)), 1)
    height = np.round(0.3 * size * np.exp(rng.normal(0.0, 0.12, n)), 1)
    weight = np.round(length * width * height / 1000 * np.exp(rng.normal(0.0, 0.1, n)), 2)
    price = np.round(12.0 * weight * np.exp(rng.normal(0.0, 0.15, n)) + 5.0, 2)
    grade = np.where(weight > np.quantile(weight, 0.8), "heavy", np.where(weight > np.quantile(weight, 0.3), "medium",
                                                                          "light"))
    flip = rng.random(n) < 0.1
    grade = np.where(flip, rng.choice(["light", "medium", "heavy"], n), grade)
    tier = np.where(price / np.maximum(weight, 0.01) > 12.5, "premium", "standard")
    df = pd.DataFrame({"length": length, "width": width, "height": height, "weight": weight, "price": price,
                       "grade": grade, "tier": tier})
    for col, (lo, hi) in DEPENDENT_BOUNDS.items():
        df[col] = df[col].clip(lo, hi)
    return df


def amounts_table(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """The generated loan table: an amount that is 0 for about 85% of the rows and round for most of the rest."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    purpose = rng.choice(["car", "home", "study", "other"], n, p=[0.3, 0.3, 0.15, 0.25])
    income = np.round(np.exp(rng.normal(10.4 + 0.005 * (age - 40), 0.6)), 2)
    borrows = rng.random(n) < 0.1 + 0.05 * (purpose == "home")
    round_amount = rng.choice([1000, 5000, 10000], n, p=[0.3, 0.45, 0.25])
    other_amount = np.clip(np.round(np.exp(rng.normal(8.5, 0.8, n))), 1, 100_000)
    amount = np.where(borrows, np.where(rng.random(n) < 0.7, round_amount, other_amount), 0).astype(np.int64)
    status = np.where(borrows, rng.choice(["current", "late", "paid"], n, p=[0.6, 0.1, 0.3]), "none")
    return pd.DataFrame({"amount": amount, "income": income, "age": age.astype(np.int64), "purpose": purpose,
                         "status": status})


def _labels(prefix: str, count: int) -> np.ndarray:
    """``count`` text values ``prefix00``, ``prefix01``, ... (a code book)."""
    return np.array([f"{prefix}{i:02d}" for i in range(count)])


def _skewed_choice(rng: np.random.Generator, labels: np.ndarray, n: int, shape: float = 1.1) -> np.ndarray:
    """``n`` draws of ``labels`` with Zipf-like shares (the first most frequent), as airports and carriers are."""
    weights = 1.0 / np.arange(1, len(labels) + 1) ** shape
    return labels[rng.choice(len(labels), n, p=weights / weights.sum())]


def flights_table(n: int = 300_000, seed: int = 0) -> pd.DataFrame:
    """The generated flights table: 20 columns, a date, hour and minute, a distance, two delays, 14 text columns.

    The delays are 0 for about a fifth of the flights (a point mass), late
    flights cluster in the evening and by carrier, the arrival delay follows
    the departure delay; the route fixes the distance band and the text
    columns (2 to 100 values) hang off the carrier, the airports and the
    delay, as in the public flights data this table stands for.
    """
    rng = np.random.default_rng(seed)
    carrier = _skewed_choice(rng, _labels("C", 16), n, 0.8)
    origin = _skewed_choice(rng, _labels("A", 100), n)
    dest = _skewed_choice(rng, _labels("A", 100), n)
    day = rng.integers(0, 365, n)
    date = pd.Timestamp("2013-01-01") + pd.to_timedelta(day, unit="D")
    hour = np.clip(np.round(rng.normal(13, 4.5, n)), 5, 23).astype(np.int64)
    minute = (rng.integers(0, 12, n) * 5).astype(np.int64)
    route = (pd.Series(origin).str[1:].astype(int).to_numpy() * 7 + pd.Series(dest).str[1:].astype(int).to_numpy())
    distance = np.clip(np.round(200 + (route % 97) * 25 + rng.normal(0, 30, n)), 50, 4_983).astype(np.int64)
    lateness = 0.1 * (hour - 13) + (pd.Series(carrier).str[1:].astype(int).to_numpy() % 5) * 0.15
    on_time = rng.random(n) < 0.22
    dep_delay = np.where(on_time, 0, np.round(rng.exponential(12 * np.exp(lateness), n) - 6)).astype(np.int64)
    arr_delay = np.where(on_time & (rng.random(n) < 0.8), 0,
                         np.round(dep_delay + rng.normal(-5, 12, n))).astype(np.int64)
    late = dep_delay > 15
    df = pd.DataFrame({
        "date": date, "hour": hour, "minute": minute, "distance": distance, "dep_delay": dep_delay,
        "arr_delay": arr_delay, "carrier": carrier, "origin": origin, "dest": dest,
        "weekday": date.day_name().to_numpy(),
        "season": np.array(["winter", "spring", "summer", "autumn"])[(date.month.to_numpy() % 12) // 3],
        "cancelled": np.where(rng.random(n) < 0.02 + 0.03 * late, "yes", "no"),
        "diverted": np.where(rng.random(n) < 0.005, "yes", "no"),
        "aircraft": _skewed_choice(rng, _labels("T", 40), n, 0.7),
        "delay_cause": np.where(late, rng.choice(["carrier", "weather", "nas", "security", "late_aircraft"], n,
                                                 p=[0.3, 0.1, 0.3, 0.02, 0.28]), "none"),
        "terminal": _skewed_choice(rng, _labels("T", 9), n, 0.5),
        "gate": _skewed_choice(rng, _labels("G", 60), n, 0.3),
        "distance_band": np.array(["short", "medium", "long"])[np.digitize(distance, [800, 2_000])],
        "part_of_day": np.array(["morning", "afternoon", "evening"])[np.digitize(hour, [12, 18])],
        "tail_maker": np.where(pd.Series(carrier).str[1:].astype(int).to_numpy() % 3 == 0,
                               rng.choice(["boeing", "airbus", "embraer"], n, p=[0.6, 0.3, 0.1]),
                               rng.choice(["boeing", "airbus", "embraer"], n, p=[0.3, 0.6, 0.1])),
    })
    for col, (lo, hi) in FLIGHTS_BOUNDS.items():
        if col != "date":
            df[col] = df[col].clip(lo, hi)
    return df


def mixed50_table(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """The generated wide table: 50 columns, 19 numbers (sizes that move together, zero-inflated and round
    amounts, rates, counts), an age, a date and 29 text columns (2 to 40 values), some following the numbers."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(6.0, 7.0, n) + 16), 18, 99).astype(np.int64)
    scale = np.exp(rng.normal(4.0, 0.5, n))
    columns: dict[str, np.ndarray] = {
        "opened": (pd.Timestamp("2000-01-01") + pd.to_timedelta(rng.integers(0, 9_000, n), unit="D")).to_numpy(),
        "age": age}
    for i in range(6):  # sizes that move together
        columns[f"size{i}"] = np.clip(np.round(scale * (1 + 0.2 * i) * np.exp(rng.normal(0, 0.1, n)), 1), 0, 1_000)
    round_amount = rng.choice([1000, 5000], n, p=[0.6, 0.4])
    for i in range(5):  # zero-inflated; the first two mostly round
        has = rng.random(n) < 0.15 + 0.05 * i
        other = np.clip(np.round(np.exp(rng.normal(7.5 + 0.3 * i, 0.9, n))), 1, 100_000)
        value = np.where(rng.random(n) < (0.7 if i < 2 else 0.0), round_amount, other)
        columns[f"amount{i}"] = np.where(has, value, 0).astype(np.int64)
    for i in range(4):
        columns[f"rate{i}"] = np.round(np.clip(rng.beta(2, 5, n) * 100 + 0.1 * (age - 40) * (i % 2), 0, 100), 2)
    for i in range(4):
        columns[f"count{i}"] = np.minimum(rng.poisson(1 + columns["size0"] / 100 * (i + 1)), 200).astype(np.int64)
    for i in range(29):  # text columns; every third follows a size or an amount
        values = _labels(f"v{i}_", 2 + (i * 7) % 39)
        drawn = _skewed_choice(rng, values, n, 0.6)
        if i % 3 == 0:
            follows = columns[f"size{i % 6}"] if i % 2 else columns[f"amount{i % 5}"] + 1.0
            ranks = np.argsort(np.argsort(follows)) * len(values) // n
            drawn = np.where(rng.random(n) < 0.6, values[np.minimum(ranks, len(values) - 1)], drawn)
        columns[f"text{i}"] = drawn
    return pd.DataFrame(columns)


#: Public bounds of the calendar table's numeric columns (its date's are the years it covers).
CALENDAR_BOUNDS = {"date": ("1969-01-01", "1988-12-31"), "year": (1969, 1988), "month": (1, 12),
                   "day_of_year": (1, 366), "day": (1, 31), "births": (0, 20_000)}
#: Public bounds and precision of the credit table's numeric columns (much wider than the data, as public bounds are).
CREDIT_BOUNDS = {"age": (18, 100), "tenure": (0, 60), "income": (0, 1_000), "price": (0, 20_000),
                 "loan": (0, 10_000), "assets": (0, 500_000), "debt": (0, 100_000), "term": (0, 120),
                 "expenses": (0, 500)}
#: Public bounds of the loans table's numeric columns (for the routes that are given them; ``learn_bounds`` is not).
LOANS_BOUNDS = {"loan_amount": (0, 50_000), "installment": (0, 20_000), "total_credit_limit": (0, 2_000_000),
                "months": (0, 200), "years_of_service": (0, 50), "debt": (-50_000, 50_000),
                "interest_rate": (0.0, 40.0), "annual_income": (0, 1_000_000), "open_accounts": (0, 60),
                "inquiries": (0, 30), "utilisation": (0.0, 150.0)}
LOANS_DECIMALS = {"interest_rate": 2, "utilisation": 1}


def calendar_table(seed: int = 0) -> pd.DataFrame:
    """The generated calendar table: one row per day of 1969-1988 (7,305 rows), the date, its year, month, day of
    the year, day of the month, weekday, and a count of births that varies with the weekday and the season.

    Its values fill their ranges to the last one (day 31, the last year), so a synthesiser that loses the ends of
    a range shows it here.
    """
    rng = np.random.default_rng(seed)
    date = pd.date_range("1969-01-01", "1988-12-31", freq="D")
    weekday = date.day_name().to_numpy()
    season = np.cos(2 * np.pi * (date.dayofyear.to_numpy() - 250) / 365.25)
    trend = (date.year.to_numpy() - 1969) * 60.0
    mean = 9_000 + trend + 400 * season - 1_500 * np.isin(weekday, ["Saturday", "Sunday"])
    births = rng.poisson(mean).astype(np.int64)
    return pd.DataFrame({"date": date, "year": date.year.to_numpy().astype(np.int64),
                         "month": date.month.to_numpy().astype(np.int64),
                         "day_of_year": date.dayofyear.to_numpy().astype(np.int64),
                         "day": date.day.to_numpy().astype(np.int64), "weekday": weekday, "births": births})


def credit_table(n: int = 4_454, seed: int = 0) -> pd.DataFrame:
    """The generated credit table (4,454 rows x 14 columns): skewed amounts, round values and related pairs.

    ``loan`` follows ``price`` (Pearson about .75) and is rounded to 50 with 30% of rows exactly 1000;
    ``tenure`` grows with ``age``; ``assets`` is zero for 35% of rows and ``debt`` for 80%; ``term`` takes five
    round values and ``expenses`` four, plus a tail; five small text columns.
    """
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.normal(37, 11, n)), 18, 70).astype(np.int64)
    tenure = np.clip(np.round(rng.gamma(1.2, 6.0, n) * (age - 16) / 25), 0, 60).astype(np.int64)
    income = np.round(rng.lognormal(4.9, 0.5, n)).astype(np.int64)
    price = np.round(rng.lognormal(7.2, 0.4, n)).astype(np.int64)
    loan = np.round(price * rng.uniform(0.5, 0.9, n) / 50) * 50
    loan = np.where(rng.random(n) < 0.3, 1000, loan).astype(np.int64)
    assets = np.where(rng.random(n) < 0.35, 0, np.round(rng.lognormal(8.5, 1.0, n))).astype(np.int64)
    debt = np.where(rng.random(n) < 0.8, 0, np.round(rng.lognormal(7.5, 0.8, n))).astype(np.int64)
    term = rng.choice([12, 24, 36, 48, 60], n, p=[0.1, 0.2, 0.3, 0.2, 0.2]).astype(np.int64)
    expenses = np.where(rng.random(n) < 0.8, rng.choice([35, 45, 60, 75], n),
                        np.round(75 + rng.gamma(2.0, 10.0, n))).astype(np.int64)
    status = np.where(debt > 0, rng.choice(["good", "bad"], n, p=[0.5, 0.5]),
                      rng.choice(["good", "bad"], n, p=[0.8, 0.2]))
    return pd.DataFrame({
        "age": age, "tenure": tenure, "income": np.minimum(income, 1_000), "price": np.minimum(price, 20_000),
        "loan": np.minimum(loan, 10_000), "assets": np.minimum(assets, 500_000), "debt": np.minimum(debt, 100_000),
        "term": term, "expenses": np.minimum(expenses, 500), "status": status,
        "home": rng.choice(["rent", "owner", "parents", "other"], n, p=[0.3, 0.45, 0.2, 0.05]),
        "marital": rng.choice(["single", "married", "widowed", "separated"], n, p=[0.3, 0.55, 0.05, 0.1]),
        "records": np.where(rng.random(n) < 0.17, "yes", "no"),
        "job": np.where(age < 25, rng.choice(["partime", "fixed", "freelance"], n),
                        rng.choice(["fixed", "freelance", "partime", "others"], n, p=[0.6, 0.2, 0.15, 0.05]))})


def loans_table(n: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """The generated loans table (10,000 rows x 55 columns) for the ``learn_bounds`` route: eleven numbers of
    very different scales (an amount in the thousands, an installment in the hundreds, a credit limit in the
    hundreds of thousands, whole months 2..128, years of service 0..40 with many small values, a debt of either
    sign that is mostly 0, a rate, an income, counts, a utilisation) and 44 text columns of 2 to 12 values."""
    rng = np.random.default_rng(seed)
    loan_amount = np.clip(np.round(rng.lognormal(9.3, 0.6, n) / 25) * 25, 1_000, 40_000).astype(np.int64)
    rate = np.round(np.clip(rng.normal(12.5, 4.5, n), 5.3, 30.9), 2)
    months = rng.choice([12, 24, 36, 48, 60, 72, 84, 96, 120, 128], n,
                        p=[0.05, 0.1, 0.35, 0.1, 0.25, 0.05, 0.03, 0.03, 0.02, 0.02])
    months = np.where(rng.random(n) < 0.1, rng.integers(2, 129, n), months).astype(np.int64)
    installment = np.round(loan_amount * (rate / 1200) / (1 - (1 + rate / 1200) ** -months), 2)
    columns: dict[str, np.ndarray] = {
        "loan_amount": loan_amount, "installment": installment,
        "total_credit_limit": np.clip(np.round(rng.lognormal(11.8, 0.9, n)), 0, 2_000_000).astype(np.int64),
        "months": months,
        "years_of_service": np.clip(np.round(rng.exponential(5.0, n)), 0, 40).astype(np.int64),
        "debt": np.where(rng.random(n) < 0.75, 0, np.round(rng.normal(2_000, 6_000, n))).astype(np.int64),
        "interest_rate": rate,
        "annual_income": np.clip(np.round(rng.lognormal(11.1, 0.55, n), -2), 0, 1_000_000).astype(np.int64),
        "open_accounts": np.clip(rng.poisson(11, n), 0, 60).astype(np.int64),
        "inquiries": np.clip(rng.poisson(1.2, n), 0, 30).astype(np.int64),
        "utilisation": np.round(np.clip(rng.beta(2, 3, n) * 110, 0, 150), 1)}
    for i in range(44):
        columns[f"text{i}"] = _skewed_choice(rng, _labels(f"t{i}_", 2 + i % 11), n, 0.7)
    return pd.DataFrame(columns)


#: Public bounds of the survey table's numeric columns: the age of an adult, a household and its children, the
#: six questions' 1-5 answer scale.
SURVEY_BOUNDS = {"age": (18, 100), "household": (1, 12), "children": (0, 6), **{f"q{i}": (1, 5) for i in range(1, 7)}}
#: The survey's public code book (its questionnaire's answer lists).
SURVEY_CATEGORIES = {"region": ["north", "south", "east", "west", "capital"], "sex": ["female", "male"],
                     "education": ["primary", "secondary", "vocational", "degree"]}


def _likert(rng: np.random.Generator, attitude: np.ndarray, shift: float) -> np.ndarray:
    """A 1-5 answer: the attitude plus the question's own noise, cut at four public thresholds."""
    return (np.digitize(attitude + shift + rng.normal(0.0, 0.7, len(attitude)), [-1.5, -0.5, 0.5, 1.5]) + 1
            ).astype(np.int64)


def survey_table(n: int = 3_000, seed: int = 0) -> pd.DataFrame:
    """The generated survey table (3,000 rows x 12 columns): small integers that move together, and categories.

    Two related attitudes drive six 1-5 answers (q1-q3 the first, q4-q6 the second; Spearman about .6 within a
    block, .2 across); the education and the region move the first attitude and the age the second; the
    number of children (0-6) is highest at ages 30-50 and the household size is at least one more than it.
    """
    rng = np.random.default_rng(seed)
    region = rng.choice(SURVEY_CATEGORIES["region"], n, p=[0.25, 0.2, 0.2, 0.2, 0.15])
    sex = rng.choice(SURVEY_CATEGORIES["sex"], n, p=[0.52, 0.48])
    age = np.clip(np.round(rng.normal(47, 16, n)), 18, 95).astype(np.int64)
    schooling = rng.choice(4, n, p=[0.15, 0.4, 0.25, 0.2])
    education = np.array(SURVEY_CATEGORIES["education"])[schooling]
    children = np.minimum(rng.poisson(np.where((age >= 30) & (age <= 50), 1.8, 0.4) * (1.2 - 0.1 * schooling)),
                          6).astype(np.int64)
    adults = 1 + (rng.random(n) < 0.6) + (rng.random(n) < 0.1)
    household = np.minimum(adults + children, 12).astype(np.int64)
    shared = rng.normal(0.0, 1.0, n)
    trust = 0.4 * (schooling - 1.5) + 0.5 * (region == "capital") + 0.6 * shared + 0.7 * rng.normal(0.0, 1.0, n)
    content = 0.02 * (age - 47) + 0.2 * (sex == "female") + 0.6 * shared + 0.7 * rng.normal(0.0, 1.0, n)
    answers = {f"q{i + 1}": _likert(rng, trust, shift) for i, shift in enumerate((0.0, 0.4, -0.3))}
    answers.update({f"q{i + 4}": _likert(rng, content, shift) for i, shift in enumerate((0.5, 0.0, -0.6))})
    return pd.DataFrame({"age": age, "household": household, "children": children, **answers, "region": region,
                         "sex": sex, "education": education})


#: Public bounds of the map table: a city's published bounding box (degrees), and an hour of the day.
MAP_BOUNDS = {"lat": (41.60, 42.05), "lon": (-87.95, -87.50), "hour": (0, 23)}
MAP_DECIMALS = {"lat": 5, "lon": 5}
#: The map's districts: centre (lat, lon), spread (degrees, along lat and lon), correlation, share of the rows.
MAP_DISTRICTS = (((41.88, -87.63), (0.010, 0.008), 0.0, 0.30), ((41.95, -87.66), (0.020, 0.012), 0.6, 0.18),
                 ((41.78, -87.62), (0.025, 0.030), -0.3, 0.14), ((41.75, -87.70), (0.030, 0.020), 0.0, 0.10),
                 ((41.99, -87.80), (0.006, 0.006), 0.0, 0.08), ((41.70, -87.58), (0.012, 0.035), 0.8, 0.06),
                 ((41.83, -87.75), (0.008, 0.025), 0.0, 0.05), ((41.92, -87.89), (0.004, 0.004), 0.0, 0.03),
                 ((41.65, -87.90), (0.015, 0.010), 0.0, 0.02))
#: The share of the map's rows spread uniformly over the bounding box (district "outside").
MAP_SPRINKLE = 0.04


def map_table(n: int = 50_000, seed: int = 0) -> pd.DataFrame:
    """The generated map table (50,000 rows): police stops in a city, a latitude and a longitude that lie in
    districts of very different sizes and spreads (some elongated along a street) plus a sprinkle over the public
    bounding box, an hour, and three text columns (the district, the reason, the outcome) that follow the district.

    The pair is not monotone (its Spearman correlation is near 0), so a synthesiser that keeps each coordinate and
    a correlation but not the joint shape spreads the points over the box.
    """
    rng = np.random.default_rng(seed)
    shares = np.array([d[3] for d in MAP_DISTRICTS])
    district = rng.choice(len(MAP_DISTRICTS) + 1, n, p=[*(shares * (1 - MAP_SPRINKLE) / shares.sum()), MAP_SPRINKLE])
    lat, lon = np.empty(n), np.empty(n)
    for k, ((clat, clon), (slat, slon), r, _) in enumerate(MAP_DISTRICTS):
        rows = np.flatnonzero(district == k)
        z = rng.standard_normal((2, len(rows)))
        lat[rows] = clat + slat * z[0]
        lon[rows] = clon + slon * (r * z[0] + np.sqrt(1 - r * r) * z[1])
    out = district == len(MAP_DISTRICTS)
    lat[out] = rng.uniform(*MAP_BOUNDS["lat"], out.sum())
    lon[out] = rng.uniform(*MAP_BOUNDS["lon"], out.sum())
    names = np.array([f"D{k + 1}" for k in range(len(MAP_DISTRICTS))] + ["outside"])
    hour = np.clip(np.round(rng.normal(15 + (district % 3) * 2, 4.5, n)), 0, 23).astype(np.int64)
    reasons = np.array(["speeding", "equipment", "registration", "moving", "suspicious"])
    lean = np.stack([rng.dirichlet(np.ones(len(reasons)) * 0.8) for _ in names])
    reason = reasons[(rng.random(n)[:, None] > np.cumsum(lean[district], axis=1)).sum(axis=1).clip(0, 4)]
    outcome = np.where(rng.random(n) < 0.15 + 0.05 * (district % 4), "citation",
                       np.where(rng.random(n) < 0.1, "arrest", "warning"))
    df = pd.DataFrame({"lat": np.round(lat, 5), "lon": np.round(lon, 5), "hour": hour, "district": names[district],
                       "reason": reason, "outcome": outcome})
    for col, (lo, hi) in MAP_BOUNDS.items():
        df[col] = df[col].clip(lo, hi)
    return df


#: Public bounds and precision of the hump table: an age, the hours worked, an income, the years in the job.
HUMP_BOUNDS = {"age": (16, 90), "hours": (0.0, 100.0), "income": (0.0, 500_000.0), "tenure": (0, 60)}
HUMP_DECIMALS = {"hours": 1, "income": 0}


def hump_table(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """The generated hump table (20,000 rows): the hours worked rise with age, then fall (a curved pair whose
    Pearson correlation is near 0), an income that follows the hours, the years in the job (below the age) and
    two text columns.  A copula reads the curved pair as weak or monotone and flattens the hump."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.uniform(17, 85, n)), 16, 90).astype(np.int64)
    peak = 8.0 + 35.0 * np.exp(-(((age - 51.0) / 17.0) ** 2))
    hours = np.clip(np.round(peak + rng.normal(0, 4.0, n), 1), 0, 100)
    income = np.clip(np.round(np.exp(rng.normal(8.0 + 0.06 * hours, 0.4))), 0, 500_000)
    tenure = np.minimum(np.round(rng.uniform(0, 1, n) ** 2 * (age - 16)), 60).astype(np.int64)
    sector = rng.choice(["private", "public", "self"], n, p=[0.6, 0.25, 0.15])
    retired = np.where(age >= 65, np.where(rng.random(n) < 0.8, "yes", "no"), np.where(rng.random(n) < 0.02, "yes",
                                                                                         "no"))
    return pd.DataFrame({"age": age, "hours": hours, "income": income, "tenure": tenure, "sector": sector,
                         "retired": retired})


#: Public bounds of the sum table: two delays in minutes, a distance, and the hour.
SUM_BOUNDS = {"dep_delay": (-60, 1_500), "arr_delay": (-90, 1_500), "distance": (0, 5_000), "hour": (0, 23)}


def sum_table(n: int = 30_000, seed: int = 0) -> pd.DataFrame:
    """The generated sum table (30,000 rows): an arrival delay that is the departure delay plus a small noise (a
    sum, not a copula: Pearson near 0.97), both with a point mass at 0 and an exponential tail, a distance, an
    hour and two text columns."""
    rng = np.random.default_rng(seed)
    hour = np.clip(np.round(rng.normal(13, 4.5, n)), 5, 23).astype(np.int64)
    on_time = rng.random(n) < 0.25
    dep_delay = np.where(on_time, 0, np.round(rng.exponential(15 * np.exp(0.08 * (hour - 13)), n) - 5))
    arr_delay = np.where(on_time & (rng.random(n) < 0.7), 0, np.round(dep_delay + rng.normal(-3, 6, n)))
    distance = np.clip(np.round(rng.lognormal(6.6, 0.6, n)), 50, 5_000).astype(np.int64)
    carrier = _skewed_choice(rng, _labels("C", 10), n, 0.8)
    late = np.where(arr_delay > 15, "late", "on time")
    df = pd.DataFrame({"dep_delay": dep_delay.astype(np.int64), "arr_delay": arr_delay.astype(np.int64),
                       "distance": distance, "hour": hour, "carrier": carrier, "status": late})
    for col, (lo, hi) in SUM_BOUNDS.items():
        df[col] = df[col].clip(lo, hi)
    return df


def load_table(name: str, rows: int | None = None) -> Table:
    """A benchmark table by name (its first ``rows`` rows), with its public bounds and code book."""
    if name == "adult":

        data = load_adult_raw("train")
        bounds, decimals = ADULT_BOUNDS, {}
    elif name == "skewed":
        data, bounds, decimals = skewed_table(), SKEWED_BOUNDS, SKEWED_DECIMALS
    elif name == "dependent":
        data, bounds, decimals = dependent_table(), DEPENDENT_BOUNDS, DEPENDENT_DECIMALS
    elif name == "amounts":
        data, bounds, decimals = amounts_table(), AMOUNTS_BOUNDS, AMOUNTS_DECIMALS
    elif name == "flights":
        data, bounds, decimals = flights_table(), FLIGHTS_BOUNDS, {}
    elif name == "mixed50":
        data, bounds, decimals = mixed50_table(), MIXED50_BOUNDS, MIXED50_DECIMALS
    elif name == "calendar":
        data, bounds, decimals = calendar_table(), CALENDAR_BOUNDS, {}
    elif name == "credit":
        data, bounds, decimals = credit_table(), CREDIT_BOUNDS, {}
    elif name == "loans":
        data, bounds, decimals = loans_table(), LOANS_BOUNDS, LOANS_DECIMALS
    elif name == "survey":
        data, bounds, decimals = survey_table(), SURVEY_BOUNDS, {}
    elif name == "map":
        data, bounds, decimals = map_table(), MAP_BOUNDS, MAP_DECIMALS
    elif name == "hump":
        data, bounds, decimals = hump_table(), HUMP_BOUNDS, HUMP_DECIMALS
    elif name == "sum":
        data, bounds, decimals = sum_table(), SUM_BOUNDS, {}
    else:
        raise ValueError(f"unknown table {name!r}; choose one of {', '.join(TABLES)}")
    datetimes = {c: "%Y-%m-%d" for c in data.columns if pd.api.types.is_datetime64_any_dtype(data[c])}
    # The code book: every category the documentation lists (for these tables, the values of the whole file).
    categories = {c: sorted(data[c].dropna().unique().tolist()) for c in data.columns if c not in bounds}
    data = data if rows is None else data.iloc[:rows].reset_index(drop=True)
    return Table(name, data, dict(bounds), categories, dict(decimals), datetimes)


def export(tables: Sequence[Table], folder: Path) -> None:
    """Write each real table and its public domain (dpmm's format) for a peer run outside this repository."""
    folder.mkdir(parents=True, exist_ok=True)
    for table in tables:
        table.data.to_csv(folder / f"{table.name}.csv", index=False)
        domain = {c: {"lower": lo, "upper": hi} for c, (lo, hi) in table.bounds.items()}
        domain.update({c: {"categories": cats} for c, cats in table.categories.items()})
        (folder / f"{table.name}.domain.json").write_text(json.dumps(domain, indent=1, default=str))
    print(f"wrote {[t.name for t in tables]} to {folder}")


# --------------------------------------------------------------------------
# metrics (the owner's evaluation; not private)
# --------------------------------------------------------------------------
def as_numbers(values: pd.Series) -> pd.Series:
    """A numeric column as floats, a datetime column (or dates written as text) as days since 1970; NaN if neither."""
    if pd.api.types.is_datetime64_any_dtype(values):
        return (values - pd.Timestamp(0, tz=getattr(values.dt, "tz", None))).dt.total_seconds() / 86_400
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.isna().all() and values.notna().any():
        return as_numbers(pd.to_datetime(values, errors="coerce"))
    return numbers.astype(float)


def _range(bounds: tuple) -> float:
    """The width of a column's public bounds, in the units of :func:`as_numbers`."""
    lo, hi = as_numbers(pd.Series(list(bounds)))
    return float(hi - lo)


def _codes(real: pd.Series, syn: pd.Series, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Common discrete codes: quantile bins of the real column, or labels (missing as its own value)."""
    if numeric:
        r, s = as_numbers(real).to_numpy(float), as_numbers(syn).to_numpy(float)
        edges = np.unique(np.nanquantile(r, np.linspace(0, 1, TVD_BINS + 1))[1:-1])
        code = lambda v: np.where(np.isnan(v), len(edges) + 1, np.searchsorted(edges, v, side="right"))  # noqa: E731
        return code(r), code(s)
    labels = {v: i for i, v in enumerate(pd.concat([real, syn]).astype(str).unique())}
    return real.astype(str).map(labels).to_numpy(), syn.astype(str).map(labels).to_numpy()


def _correlation_errors(real: pd.DataFrame, syn: pd.DataFrame, method: str) -> np.ndarray:
    """The absolute differences of the pairwise correlations (``method``: pearson or spearman), off the diagonal."""
    real_corr, syn_corr = real.corr(method=method).to_numpy(), syn.corr(method=method).to_numpy()
    return np.abs(real_corr - syn_corr)[~np.eye(len(real.columns), dtype=bool)]


def point_mass_shares(table: Table, syn: pd.DataFrame) -> dict[str, list[float]]:
    """For each point mass of the table (:data:`POINT_MASSES`), ``[real share, synthetic share]`` of the rows."""
    shares = {}
    for col, values in POINT_MASSES.get(table.name, {}).items():
        real, fake = as_numbers(table.data[col]).to_numpy(float), as_numbers(syn[col]).to_numpy(float)
        for value in values:
            shares[f"{col}={value:g}"] = [round(float(np.mean(real == value)), 4),
                                          round(float(np.mean(fake == value)), 4)]
    return shares


#: A pair of columns by how many of the two are numeric: where a synthesiser loses its 2-way TVD (a model that
#: measures few pairs keeps the independent ones exact, one that measures many pays their noise).
PAIR_KINDS = ("text-text", "numeric-text", "numeric-numeric")


def evaluate(table: Table, syn: pd.DataFrame) -> dict:
    """KS, Wasserstein over range, correlation errors and point-mass shares of the numeric columns; mean 2-way TVD,
    over every pair and by :data:`PAIR_KINDS`, and the 2-way TVD of each of the table's :data:`KEY_PAIRS`."""
    from scipy.stats import ks_2samp, wasserstein_distance

    real = table.data
    numeric = list(table.bounds)
    ks, w1 = [], []
    for col in numeric:
        r, s = as_numbers(real[col]).dropna().to_numpy(float), as_numbers(syn[col]).dropna().to_numpy(float)
        if len(s) == 0:
            ks.append(1.0), w1.append(1.0)
            continue
        ks.append(float(ks_2samp(r, s).statistic))
        w1.append(float(wasserstein_distance(r, s)) / _range(table.bounds[col]))
    codes = {c: _codes(real[c], syn[c], c in table.bounds) for c in real.columns}
    pairs = list(itertools.combinations(real.columns, 2))
    tvds = [_pair_tvd(codes[a], codes[b]) for a, b in pairs]
    kinds = [PAIR_KINDS[(a in table.bounds) + (b in table.bounds)] for a, b in pairs]
    by_pair = dict(zip(pairs, tvds))
    key_pairs = {f"{a}~{b}": by_pair[a, b] if (a, b) in by_pair else by_pair[b, a]
                 for a, b in KEY_PAIRS.get(table.name, ()) if a in real.columns and b in real.columns}
    syn_numeric, real_numeric = syn[numeric].apply(as_numbers), real[numeric].apply(as_numbers)
    pearson = _correlation_errors(real_numeric, syn_numeric, "pearson")
    spearman = _correlation_errors(real_numeric, syn_numeric, "spearman")
    by_kind = {kind: float(np.mean([t for t, k in zip(tvds, kinds) if k == kind])) if kind in kinds else float("nan")
               for kind in PAIR_KINDS}
    return {"ks": float(np.mean(ks)), "ks_max": float(np.max(ks)), "tvd2": float(np.mean(tvds)),
            "tvd2_by_kind": by_kind,
            "wasserstein": float(np.mean(w1)), "correlation": float(np.nanmean(pearson)),
            "pearson_max": float(np.nanmax(pearson)), "spearman_max": float(np.nanmax(spearman)),
            "ks_by_column": dict(zip(numeric, np.round(ks, 4).tolist())),
            "point_masses": point_mass_shares(table, syn), "pair_tvd": key_pairs}


def _pair_tvd(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """The total variation distance of two columns' joint distribution, real against synthetic, on their common
    codes (:func:`_codes`: for numeric columns the real quantile bins)."""
    width = int(max(b[0].max(), b[1].max())) + 1
    p, q = (np.bincount(x * width + y) / len(x) for x, y in ((a[0], b[0]), (a[1], b[1])))
    size = max(len(p), len(q))
    return 0.5 * float(np.abs(np.pad(p, (0, size - len(p))) - np.pad(q, (0, size - len(q)))).sum())


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
    ks_max: float
    tvd2: float
    wasserstein: float
    correlation: float
    pearson_max: float
    spearman_max: float
    ks_by_column: dict
    point_masses: dict
    #: The mean 2-way TVD of the pairs of each of :data:`PAIR_KINDS` (NaN when the table has none).
    tvd2_by_kind: dict
    #: Peak resident memory of the benchmark process when the row was measured, MB (NaN for a peer's row).
    peak_mb: float = float("nan")
    #: The 2-way TVD of each of the table's :data:`KEY_PAIRS`, by ``"a~b"``.
    pair_tvd: dict = field(default_factory=dict)


def synthdp_run(table: Table, *, epsilon: float, delta: float, seed: int, discretise: str,
                point_masses: bool = True, measure_options: MeasureOptions | None = None,
                cells_from_total: bool = False) -> tuple[pd.DataFrame, float]:
    """synthdp with the table's public bounds and code book; the synthetic table and the seconds."""

    start = time.perf_counter()
    result = synthdp.generate_synthetic(table.data, "marginals:3", epsilon=epsilon, delta=delta, bounds=table.bounds,
                                        categories=table.categories, nullable=[*table.categories, *table.nullable],
                                        clip=True,
                                        decimals=table.decimals or None, datetimes=table.datetimes or None,
                                        discretise=discretise, point_masses=point_masses,
                                        cells_from_total=cells_from_total, random_state=seed,
                                        measure_options=measure_options, progress=False)
    return result.data, time.perf_counter() - start


def bootstrap_run(table: Table, *, epsilon: float, delta: float, seed: int) -> tuple[pd.DataFrame, float]:
    """A bootstrap sample of the real rows (as many as the table has): the floor of the metrics, not private."""
    start = time.perf_counter()
    rows = np.random.default_rng(seed).integers(0, len(table.data), len(table.data))
    return table.data.iloc[rows].reset_index(drop=True), time.perf_counter() - start


CONFIGS: dict[str, Callable[..., tuple[pd.DataFrame, float]]] = {
    "synthdp (PrivTree cells, default)": lambda t, **kw: synthdp_run(t, discretise="privtree", **kw),
    "synthdp (PrivTree cells, no point masses)": lambda t, **kw: synthdp_run(t, discretise="privtree",
                                                                             point_masses=False, **kw),
    "synthdp (PrivTree cells, threshold from a noisy total)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", cells_from_total=True, **kw),
    "synthdp (10 equal-width bins)": lambda t, **kw: synthdp_run(t, discretise="equal-width", **kw),
    "synthdp (PrivTree cells, no copula)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", measure_options=MeasureOptions(numeric_support="model"), **kw),
    "synthdp (PrivTree cells, copula of untested readings)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", measure_options=MeasureOptions(copula_keep_from=0.0), **kw),
    "synthdp (PrivTree cells, loose-pair test at 3 errors, 0.4 explained)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", measure_options=MeasureOptions(related_significance=3.0, related_explained=0.4),
        **kw),
    "synthdp (PrivTree cells, tail cut only where the block shows no mass)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", measure_options=MeasureOptions(estimator=EstimatorSettings(tail_mass_sds=1.0)),
        **kw),
    "synthdp (PrivTree cells, one-way marginals measured once)": lambda t, **kw: synthdp_run(
        t, discretise="privtree", measure_options=MeasureOptions(one_way_share=Fraction(0)), **kw),
    "bootstrap of the real rows (floor, not private)": bootstrap_run,
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
    frame = pd.DataFrame([asdict(r) for r in rows]).drop(columns=["ks_by_column", "point_masses", "tvd2_by_kind",
                                                                  "pair_tvd"])
    means = frame.groupby(["table", "config"], sort=False).mean(numeric_only=True).reset_index()
    lines = ["| table | configuration | mean KS | max KS | mean 2-way TVD | Wasserstein / range | correlation error | "
             "max Pearson error | max Spearman error | s | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in means.itertuples():
        lines.append(f"| {r.table} | {r.config} | {r.ks:.3f} | {r.ks_max:.3f} | {r.tvd2:.3f} | {r.wasserstein:.4f} | "
                     f"{r.correlation:.3f} | {r.pearson_max:.3f} | {r.spearman_max:.3f} | {r.seconds:.0f} | "
                     f"{r.peak_mb:.0f} |")
    kinds = pd.DataFrame([{"table": r.table, "config": r.config, **r.tvd2_by_kind} for r in rows])
    kinds = kinds.groupby(["table", "config"], sort=False).mean().reset_index()
    lines += ["", "| table | configuration | " + " | ".join(f"2-way TVD, {k} pairs" for k in PAIR_KINDS) + " |",
              "|---|---|" + "---|" * len(PAIR_KINDS)]
    for r in kinds.itertuples(index=False):
        lines.append(f"| {r.table} | {r.config} | " + " | ".join("-" if np.isnan(v) else f"{v:.3f}" for v in r[2:])
                     + " |")
    keyed = [r for r in rows if r.pair_tvd]
    if keyed:
        lines += ["", f"| table | configuration | seed | 2-way TVD of a pair ({TVD_BINS} x {TVD_BINS} real quantiles) | "
                      "KS of its columns |", "|---|---|---|---|---|"]
        for r in keyed:
            pairs = ", ".join(f"{key} {tvd:.3f}" for key, tvd in r.pair_tvd.items())
            ks = ", ".join(f"{c} {r.ks_by_column[c]:.3f}" for key in r.pair_tvd for c in key.split("~"))
            lines.append(f"| {r.table} | {r.config} | {r.seed} | {pairs} | {ks} |")
    masses = [r for r in rows if r.point_masses]
    if masses:
        lines += ["", "| table | configuration | seed | point mass: real share / synthetic share |",
                  "|---|---|---|---|"]
        for r in masses:
            shares = ", ".join(f"{key} {real:.3f} / {fake:.3f}" for key, (real, fake) in r.point_masses.items())
            lines.append(f"| {r.table} | {r.config} | {r.seed} | {shares} |")
    return "\n".join(lines)


#: The synthdp configurations by short name (``--methods``).
METHODS = {"privtree": "synthdp (PrivTree cells, default)",
           "no-point-masses": "synthdp (PrivTree cells, no point masses)",
           "cells-from-total": "synthdp (PrivTree cells, threshold from a noisy total)",
           "equal-width": "synthdp (10 equal-width bins)",
           "no-copula": "synthdp (PrivTree cells, no copula)",
           "untested-copula": "synthdp (PrivTree cells, copula of untested readings)",
           "loose-copula": "synthdp (PrivTree cells, loose-pair test at 3 errors, 0.4 explained)",
           "tail-mass": "synthdp (PrivTree cells, tail cut only where the block shows no mass)",
           "one-ways-once": "synthdp (PrivTree cells, one-way marginals measured once)",
           "bootstrap": "bootstrap of the real rows (floor, not private)"}
TABLES = ("adult", "skewed", "dependent", "amounts", "flights", "mixed50", "calendar", "credit", "loans", "survey",
          "map", "hump", "sum")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="synthdp bench numeric", description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="adult,skewed,dependent,amounts",
                   help=f"comma list of tables: {', '.join(TABLES)} "
                        "(default: %(default)s)")
    p.add_argument("--methods", "--method", dest="methods", default="privtree,equal-width,bootstrap",
                   help="comma list of configurations: privtree (synthdp's default settings), no-point-masses "
                        "(the same without point masses, docs/privacy.md §11.2), cells-from-total (PrivTree's "
                        "threshold from a noisy total, docs/privacy.md §13), equal-width, no-copula (the "
                        "support drawn as the model draws it, docs/privacy.md §8.12), untested-copula (the copula's "
                        "matrix keeping every reading, also those that pass no test: the rule before this release, "
                        "docs/privacy.md §8.12), loose-copula (its loose-pair test at 3 errors and 0.4 explained), "
                        "tail-mass (the tail cut only where the block shows no mass, docs/privacy.md §8.7), "
                        "one-ways-once (the one-way marginals never measured again, docs/privacy.md §13), "
                        "bootstrap (a bootstrap of the real rows: the floor, not private) (default: %(default)s)")
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
        export(tables, Path(args.export))
        return []
    seeds = list(range(args.seeds))
    rows: list[Row] = []
    for table in tables:
        for method in methods:
            for seed in seeds:
                syn, seconds = CONFIGS[METHODS[method]](table, epsilon=args.eps, delta=args.delta, seed=seed)
                peak = peak_bytes() / 2**20  # before the evaluation, which is not part of the run
                rows.append(Row(table.name, METHODS[method], seed, seconds, **evaluate(table, syn), peak_mb=peak))
                r = rows[-1]
                print(f"{table.name} {method} seed {seed}: KS {r.ks:.4f} (max {r.ks_max:.4f}), 2-way TVD "
                      f"{r.tvd2:.4f}, Pearson error max {r.pearson_max:.3f}, Spearman error max "
                      f"{r.spearman_max:.3f}, {seconds:.0f} s, peak {peak:.0f} MB"
                      + "".join(f", {k} TVD {tvd:.3f}" for k, tvd in r.pair_tvd.items())
                      + "".join(f", {k} {a:.3f}/{b:.3f}" for k, (a, b) in r.point_masses.items()), flush=True)
        if peers is not None:
            rows += peer_rows(table, peers, seeds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_json([asdict(r) for r in rows], out / "numeric.json")
    text = format_table(rows)
    (out / "numeric.md").write_text(text + "\n")
    print(text)
    return rows
