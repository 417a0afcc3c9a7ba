"""Privacy units: contribution bounding and sensitivities for ``k`` rows (docs/privacy.md §10.6)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp import generate_synthetic
from synthdp.core.errors import InputError
from synthdp.mechanisms import gaussian
from synthdp.accounting.ledger import Ledger
from synthdp.mechanisms.partition import select_categories, threshold, unit_threshold
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import rspm
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.mechanisms.units import bound_frame, bounding_key, keep_mask
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.oracles.brute import BruteForceOracle
from tests.mechanisms.test_rspm import CLOSED_INSTANCE

KEY = np.array([0x1234, 0x5678], dtype=np.uint64)
CATEGORIES = {"a": ["x", "y", "z"], "b": ["p", "q"]}


def visits(units: int = 200, seed: int = 0, max_rows: int = 8) -> pd.DataFrame:
    """A table with 1..max_rows rows per person."""
    rng = np.random.default_rng(seed)
    pid = np.repeat([f"person-{i:05d}" for i in range(units)], rng.integers(1, max_rows + 1, units))
    return pd.DataFrame({"pid": pid, "a": rng.choice(CATEGORIES["a"], len(pid)),
                         "b": rng.choice(CATEGORIES["b"], len(pid))})


# --------------------------------------------------------------------------
# bounding (Lemma 10.60)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 5])
def test_a_unit_keeps_exactly_min_rows_k(k):
    df = visits().assign(row=lambda d: np.arange(len(d)))
    out = bound_frame(df, "pid", k, KEY)
    assert "pid" not in out.columns
    kept = df.set_index("row").loc[out["row"], "pid"].value_counts()
    held = df["pid"].value_counts()
    assert (kept == np.minimum(held.loc[kept.index], k)).all()
    assert set(kept.index) == set(held.index)  # every unit keeps at least one row
    assert out["row"].is_unique and out["row"].is_monotonic_increasing  # rows of the input, in input order


def test_bounding_is_local_to_each_unit():
    """Adding a unit anywhere (its rows interleaved) changes no other unit's kept rows, for a fixed key."""
    df = visits(seed=1).assign(row=lambda d: np.arange(len(d)))
    before = set(bound_frame(df, "pid", 3, KEY)["row"])
    intruder = pd.DataFrame({"pid": ["person-new"] * 9, "a": "x", "b": "p", "row": -1})
    mixed = pd.concat([df.iloc[:40], intruder.iloc[:4], df.iloc[40:300], intruder.iloc[4:], df.iloc[300:]])
    after = bound_frame(mixed.reset_index(drop=True), "pid", 3, KEY)
    assert (after["row"] == -1).sum() == 3
    assert set(after["row"][after["row"] >= 0]) == before


def test_bounding_choice_is_uniform_within_a_unit():
    """Over keys, each of a unit's 6 rows is kept with probability k/6 (accuracy, not privacy)."""
    groups, ids, positions = np.zeros(6, np.int64), np.full(6, 99, np.uint64), np.arange(6)
    rng = PrivateRandom(5)
    hits = sum(keep_mask(groups, ids, positions, 2, bounding_key(rng)) for _ in range(3000))
    assert np.all(np.abs(hits / 3000 - 2 / 6) < 0.04)


def test_units_are_their_text_and_a_missing_unit_is_named():
    df = pd.DataFrame({"pid": ["007", "7", "7"], "a": ["x", "y", "z"]})
    assert len(bound_frame(df, "pid", 1, KEY)) == 2
    with pytest.raises(InputError, match="'pid' is missing at data row 1"):
        bound_frame(pd.DataFrame({"pid": ["u", None], "a": ["x", "y"]}), "pid", 1, KEY)
    with pytest.raises(InputError, match="'who' is not in the data"):
        bound_frame(df, "who", 1, KEY)


# --------------------------------------------------------------------------
# sensitivities for k rows (Lemma 10.62): the mechanisms read k off the ledger
# --------------------------------------------------------------------------
def test_exponential_mechanism_audit_at_k3():
    """Two scores 0 and 6 at eps=2: with k=3 the odds are e^{eps 6 / (2 k)} = e^2, not e^6 (sensitivity left at 1)."""
    rng, picks = PrivateRandom(11), []
    ledger = ZcdpLedger(Fraction(10**6), contribution_bound=3)
    for _ in range(4000):
        picks.append(exponential_mechanism(np.array([0, 6]), epsilon=Fraction(2), sensitivity=1, rng=rng,
                                           ledger=ledger, relation="add-remove"))
    share = np.mean(picks)
    expected = math.exp(2) / (1 + math.exp(2))  # 0.881; sensitivity 1 would give 0.9975
    assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / 4000)
    assert ledger.events[0].note.startswith("eps=2") or ledger.events[0].rho == Fraction(1, 2)


def test_rspm_shift_constant_grows_with_k():
    for k in (1, 4):
        ledger = Ledger(Fraction(10), Fraction(1, 10**9), contribution_bound=k)
        result = rspm(CLOSED_INSTANCE, epsilon=Fraction(1), sensitivity=2, oracle=BruteForceOracle(),
                      rng=PrivateRandom(3), ledger=ledger)
        assert result.c == 2 * k + 1 and result.lam == Fraction(1, result.m * (2 * k + 1))
        assert ledger.events[0].epsilon == 1  # the same charge, now for one unit of k rows


def test_partition_threshold_for_units_against_an_independent_computation():
    """tau = k + j, j least with t^j/(1+t) <= delta_p / k at rate eps_p / k; a new value held by k rows is rare."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    for eps_p, delta_p in [(Fraction(1, 10), Fraction(1, 10**8)), (Fraction(1, 2), Fraction(1, 10**6))]:
        assert unit_threshold(eps_p, delta_p, 1) == (eps_p, threshold(eps_p, delta_p))
        for k in (2, 3, 5):
            rate, tau = unit_threshold(eps_p, delta_p, k)
            assert rate == eps_p / k
            t = (-Decimal(rate.numerator) / Decimal(rate.denominator)).exp()

            def tail(j):  # P[Z >= j], Z ~ DLap(rate)
                return t**j / (1 + t)

            j = tau - k
            assert k * tail(j) <= Decimal(delta_p.numerator) / Decimal(delta_p.denominator) < k * tail(j - 1)


def test_partition_selection_draws_at_the_unit_rate(monkeypatch):
    """The noise rate asked of the sampler is eps_p / k and the release rule is c + Z >= tau (Theorem 10.63)."""
    from synthdp.mechanisms import partition

    asked = []
    monkeypatch.setattr(partition, "discrete_laplace", lambda s, t, rng: asked.append(Fraction(s, t)) or 0)
    ledger = Ledger(Fraction(1), Fraction(1, 10**6), contribution_bound=4)
    eps_p, delta_p = Fraction(1, 10), Fraction(1, 10**8)
    rate, tau = unit_threshold(eps_p, delta_p, 4)
    out = select_categories({"hi": tau, "lo": tau - 1}, epsilon=eps_p, delta=delta_p, rng=PrivateRandom(0),
                            ledger=ledger, column="c")
    assert out == ("hi",) and set(asked) == {eps_p / 4}
    assert (ledger.events[0].epsilon, ledger.events[0].delta) == (eps_p, delta_p)


@pytest.mark.parametrize("query_class", ["marginals:2", "conjunctions:2"])  # the second has record rounds
def test_gaussian_charges_k_squared_over_two_sigma2(monkeypatch, query_class):
    """Every Gaussian measurement of a run at k=3 is charged 9/(2 sigma2) (marginals, add/remove), and the noise
    drawn uses that sigma2: the charge matches the noise (a sensitivity left at 1 charges 1/(2 sigma2))."""
    from synthdp.methods.measure import state

    drawn = []
    real = gaussian.discrete_gaussian_array
    monkeypatch.setattr(state, "discrete_gaussian_array",
                        lambda size, sigma2, rng: drawn.append(sigma2) or real(size, sigma2, rng))
    result = generate_synthetic(visits(), query_class, epsilon=1, delta=1e-6, random_state=2, progress=False,
                                categories=CATEGORIES, privacy_unit="pid", max_rows_per_unit=3, n_rows=100,
                                method="measure")
    gaussians = [e for e in result.report.zcdp_ledger if e["mechanism"] == "gaussian"]
    assert len(gaussians) == len(drawn) >= 2
    for event, sigma2 in zip(gaussians, drawn):
        assert Fraction(event["rho"]) == Fraction(9) / (2 * sigma2)
    assert sum(Fraction(e["rho"]) for e in result.report.zcdp_ledger) <= Fraction(result.report.rho_budget)


# --------------------------------------------------------------------------
# the whole run
# --------------------------------------------------------------------------
PAID = {"measurements", "selected_queries", "rounds", "zcdp_ledger", "rho_spent"}


@pytest.mark.parametrize("method", ["measure", "game"])
def test_neighbouring_tables_differ_by_one_units_rows(method):
    """D and D plus one unit with more than k rows, same seed: every released field not paid for is identical."""
    df = visits(units=400, seed=3)  # enough rows for the learned categories' threshold at k = 2
    person = pd.DataFrame({"pid": ["person-extra"] * 7, "a": ["z"] * 7, "b": ["q"] * 7})
    options = dict(epsilon=1, delta=1e-6, random_state=4, progress=False, privacy_unit="pid", max_rows_per_unit=2,
                   n_rows=80, method=method, **({"rounds": 3} if method == "game" else {}))
    one = generate_synthetic(df, "marginals:2", **options).report.release.to_dict()
    two = generate_synthetic(pd.concat([person, df], ignore_index=True), "marginals:2", **options)
    two = two.report.release.to_dict()
    assert {k: v for k, v in one.items() if k not in PAID} == {k: v for k, v in two.items() if k not in PAID}
    assert one["privacy_unit"] == "pid" and one["max_rows_per_unit"] == 2


def test_the_unit_column_is_never_released(tmp_path):
    df = visits(units=60, seed=6)
    result = generate_synthetic(df, "marginals:2", epsilon=2, delta=1e-6, random_state=1, progress=False,
                                privacy_unit="pid", max_rows_per_unit=4, categories=CATEGORIES)
    assert "pid" not in result.data.columns
    text = json.dumps(result.report.to_dict(), default=str) + result.data.to_csv()
    assert "person-" not in text
    assert "privacy unit: column 'pid'" in result.report.summary()
    assert "not stated with a privacy unit" in result.report.summary()  # rows of one unit are not independent


def test_cli_privacy_unit(tmp_path):
    from synthdp.cli import main

    src, out, report = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "r.json"
    df = visits(units=1000, seed=7)  # enough rows for the learned categories' threshold at every k (smaller: refused)
    df["pid"] = df["pid"].str.replace("person-", "00")  # numeric-looking units stay text
    df.to_csv(src, index=False)
    assert main(["generate", str(src), "-o", str(out), "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
                 "--queries", "marginals:2", "--privacy-unit", "pid", "--max-rows-per-unit", "2", "-q",
                 "--report", str(report)]) == 0
    assert list(pd.read_csv(out).columns) == ["a", "b"]
    assert json.loads(report.read_text())["max_rows_per_unit"] == 2
    out.unlink()
    report.unlink()
    assert main(["generate", str(src), "-o", str(out), "--epsilon", "1", "--delta", "1e-6", "--seed", "1",
                 "--queries", "marginals:2", "--privacy-unit", "pid", "--max-rows-per-unit", "auto", "-q",
                 "--report", str(report)]) == 0
    assert json.loads(report.read_text())["plan"]["max_rows_per_unit"]["reason"].startswith("chosen privately")


@pytest.mark.parametrize("options, message", [
    (dict(privacy_unit="pid"), "needs max_rows_per_unit"),
    (dict(max_rows_per_unit=2), "needs privacy_unit"),
    (dict(privacy_unit="pid", max_rows_per_unit=0), "max_rows_per_unit"),
    (dict(privacy_unit="pid", max_rows_per_unit=2, relation="replace-one"), "relation='add-remove'"),
    (dict(privacy_unit="pid", max_rows_per_unit=2, query_player="prsma"), "PRSMA"),
])
def test_refusals_before_anything_runs(options, message):
    with pytest.raises(InputError, match=message):
        generate_synthetic(visits(units=10), "marginals:2", epsilon=1, delta=1e-6, progress=False, **options)


def test_tuning_scores_with_k_rows(monkeypatch):
    """Random stopping with a unit: each run bounds its own rows, the score's noise rate is eps_s / (k N_out)."""
    from synthdp.tuning import score as score_module
    from synthdp.tuning import stopping, tune

    asked, rates = [], []
    monkeypatch.setattr(stopping, "private_score", lambda error, eps_s, n_out, rng, k=1: asked.append(
        (eps_s, n_out, k)) or score_module.private_score(error, eps_s, n_out, rng, k))
    monkeypatch.setattr(score_module, "discrete_laplace", lambda s, t, rng: rates.append(Fraction(s, t)) or 0)
    result = tune(visits(units=80), "marginals:2", [{"method": "measure"}, {"method": "game", "rounds": 3}],
                  epsilon=1, delta=1e-6, n_out=30, eval_workload="marginals:1", random_state=1, privacy_unit="pid",
                  max_rows_per_unit=3, categories=CATEGORIES, target_failure=0.5)
    assert asked and {(n, k) for _, n, k in asked} == {(30, 3)}
    assert rates == [Fraction(eps_s) / (3 * 30) for eps_s, _, _ in asked]  # the noise drawn, at eps_s / (k N_out)
    assert "pid" not in result.data.columns and result.report.epsilon_spent <= 1
    assert (result.report.privacy_unit, result.report.max_rows_per_unit) == ("pid", 3)
    assert "privacy unit: column 'pid'" in result.report.summary()
    with pytest.raises(InputError, match="must be common"):
        tune(visits(units=10), "marginals:2", [{"max_rows_per_unit": 5}], epsilon=1, delta=1e-6, n_out=10,
             eval_workload="marginals:1", categories=CATEGORIES, privacy_unit="pid", max_rows_per_unit=2)


def test_accuracy_first_statistic_sensitivity_grows_with_k():
    from synthdp.tuning.accuracy_first import plan_accuracy_first

    one, five = (plan_accuracy_first(Fraction(1, 4), Fraction(10), Fraction(1), Fraction(0), 20, "add-remove", k)
                 for k in (1, 5))
    assert five.sensitivity == 5 * one.sensitivity == 5 * (1 + 4) * 20
    assert five.threshold_rate == one.threshold_rate / 5 and five.level_rate == one.level_rate / 5


def test_a_schema_holding_the_unit_column_is_refused():
    from synthdp.core.schema import Schema

    schema = Schema.from_dataframe(visits(units=10), categorical=["pid", "a", "b"], unsafe_public_categories=True)
    with pytest.raises(InputError, match="must not be in the schema"):
        generate_synthetic(visits(units=10), "marginals:2", epsilon=1, delta=1e-6, progress=False, schema=schema,
                           privacy_unit="pid", max_rows_per_unit=2)


def test_the_tuners_score_the_bounded_table():
    """The table the scores read holds at most k rows per unit (else Err's sensitivity is unbounded)."""
    from synthdp.tuning.runs import Runner

    df = visits(units=50, seed=8)
    runner = Runner.prepare(df, "marginals:2", relation="add-remove", n_out=10, rng=PrivateRandom(0),
                            common=dict(categories=CATEGORIES, privacy_unit="pid", max_rows_per_unit=2))
    assert runner.real.n == np.minimum(df["pid"].value_counts(), 2).sum() and runner.contribution_bound == 2
    assert runner.df is df  # each run bounds the raw table itself, with its own key


def test_record_rounds_measure_one_count_with_sensitivity_k():
    """Record rounds (a class beyond marginals): the chosen record's count is charged k^2 / (2 sigma2) too."""
    from dataclasses import replace

    from synthdp.config import SynthesisConfig
    from synthdp.core.encoding import Encoder
    from synthdp.core.schema import Schema
    from synthdp.methods.measure.algorithm import measure
    from synthdp.plan import make_plan

    df = visits().drop(columns="pid")
    schema = Schema.from_dataframe(df, categories=CATEGORIES)
    plan = make_plan(SynthesisConfig(epsilon=1, delta=1e-6, query_class="halfspaces", method="measure"), schema)
    options = replace(plan.method_plan.options, record_every=1, record_after=0, max_rounds=3)
    ledger = ZcdpLedger(Fraction(1, 10), plan.method_plan.clip_budget, contribution_bound=3)
    result = measure(Encoder(schema).to_aggregated(df), plan.query_class, budget=Fraction(1, 10),
                     relation="add-remove", ledger=ledger, rng=PrivateRandom(1), options=options,
                     oracle=plan.method_plan.oracle.value, progress=False)
    assert [m.selected_by for m in result.measurements].count("record") >= 2
    charged = [e.rho for e in ledger.events if e.mechanism == "gaussian"]
    assert charged == [m.rho for m in result.measurements]
    for m in result.measurements:  # the sigma2 the noise was drawn with, and its charge
        assert m.rho == Fraction(9) / (2 * m.sigma2), m


# --------------------------------------------------------------------------
# choosing k privately (Proposition 10.64)
# --------------------------------------------------------------------------
def test_rows_per_unit_score_and_its_sensitivity_by_brute_force():
    from synthdp.mechanisms.units import rows_per_unit_scores

    rng = np.random.default_rng(0)
    for quantile in (Fraction(9, 10), Fraction(1, 2), Fraction(1, 3)):
        a, b = quantile.numerator, quantile.denominator
        for _ in range(30):
            rows = rng.integers(1, 12, rng.integers(1, 40))
            scores = rows_per_unit_scores(rows, 10, quantile)
            capped = np.minimum(rows, 10)  # the largest k stands for "10 or more" (Proposition 10.64)
            expected = [-abs(b * int((capped <= k).sum()) - a * len(rows)) for k in range(1, 11)]
            assert scores.tolist() == expected
            for m in (1, 5, 11, 40):  # one more unit, with m rows
                moved = np.abs(rows_per_unit_scores(np.r_[rows, m], 10, quantile) - scores).max()
                assert moved <= max(a, b - a)


def test_auto_k_takes_the_largest_k_when_every_unit_has_more_rows():
    """Every unit holds more rows than ``AUTO_MAX_ROWS``: ``k`` is the largest candidate, not a uniform draw over
    1..32 (the score was flat there: a table of about 187 rows per unit got k=6 and lost 97% of its rows)."""
    from synthdp.mechanisms.units import AUTO_MAX_ROWS, choose_rows_per_unit, rows_per_unit

    rng = np.random.default_rng(5)
    pid = np.repeat([f"p{i}" for i in range(2000)], rng.integers(40, 60, 2000))
    rows = rows_per_unit(pd.DataFrame({"pid": pid}), "pid")
    chosen = [choose_rows_per_unit(rows, epsilon=Fraction(1, 20), rng=PrivateRandom(seed), relation="add-remove",
                                   ledger=Ledger(Fraction(1), Fraction(0))).k for seed in range(20)]
    assert set(chosen) == {AUTO_MAX_ROWS}, chosen
    fewer = [choose_rows_per_unit(rows, epsilon=Fraction(1, 20), rng=PrivateRandom(seed), relation="add-remove",
                                  ledger=Ledger(Fraction(1), Fraction(0)), candidates=(1, 2, 5)).k
             for seed in range(20)]
    assert set(fewer) == {5}, fewer  # the largest candidate stands for "5 or more"


def test_auto_k_is_charged_ahead_and_reported(monkeypatch):
    from synthdp.mechanisms import units

    asked = []
    real = units.exponential_mechanism
    monkeypatch.setattr(units, "exponential_mechanism",
                        lambda scores, **kw: asked.append((scores, kw["sensitivity"], kw["ledger"])) or real(scores, **kw))
    df = visits(units=400, seed=12)
    result = generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-6, random_state=3, progress=False,
                                categories=CATEGORIES, privacy_unit="pid", max_rows_per_unit="auto", n_rows=50)
    (scores, sensitivity, ledger), = asked
    rows = df["pid"].value_counts().to_numpy()
    assert sensitivity == 9 and scores.tolist() == units.rows_per_unit_scores(rows, units.AUTO_MAX_ROWS,
                                                                               Fraction(9, 10)).tolist()
    first = result.report.ledger[0]
    assert first["ahead"] and Fraction(first["epsilon"]) == Fraction(1, 20) and "rows per unit" in first["note"]
    k = result.report.max_rows_per_unit
    assert isinstance(k, int) and 1 <= k <= units.AUTO_MAX_ROWS and ledger.contribution_bound == k
    assert result.report.plan["max_rows_per_unit"]["value"] == k
    assert result.report.epsilon_spent <= 1


def test_the_bound_is_fixed_before_any_spend_that_reads_it():
    from synthdp.core.errors import PrivacyError

    ledger = Ledger(Fraction(1), Fraction(0))
    exponential_mechanism(np.array([0, 1]), epsilon=Fraction(1, 10), sensitivity=1, rng=PrivateRandom(0),
                          ledger=ledger, relation="add-remove", label="select")
    with pytest.raises(PrivacyError, match="before any spend"):
        ledger.bound_contributions(3)


@pytest.fixture
def ledgers(monkeypatch):
    """The ledgers the runs of :mod:`synthdp.api` build, to read what each was charged."""
    from synthdp import api

    made = []

    class Recorded(Ledger):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(api, "Ledger", Recorded)
    return made


AUTO = dict(epsilon=1, delta=1e-6, random_state=0, progress=False, privacy_unit="pid", max_rows_per_unit="auto")


def refused_uncharged(ledgers, df, query_class="marginals:2", **options) -> str:
    """The refusal of an ``"auto"`` run, which must come with nothing charged (the ledger empty, no charge named)."""
    with pytest.raises(InputError) as caught:
        generate_synthetic(df, query_class, **{**AUTO, **options})
    (ledger,) = ledgers
    message = str(caught.value)
    assert ledger.events == [] and "charged (" not in message, message
    return message


@pytest.mark.parametrize("query_class", ["bogus:3", "marginals:2:x"])
def test_auto_k_refuses_a_query_class_before_choosing_k(ledgers, query_class):
    """The class is planned at every candidate k before the choice of k, the run's first charge: it was refused
    after it, "charged (0.05, 0)-DP"."""
    message = refused_uncharged(ledgers, visits(), query_class, categories=CATEGORIES)
    assert f"query class spec {query_class!r}" in message


def many_rows_each(units: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """``units`` units of ``rows`` rows each, a number ``x`` in every row."""
    rng = np.random.default_rng(seed)
    n = units * rows
    return pd.DataFrame({"pid": np.repeat([f"u{i}" for i in range(units)], rows), "a": rng.choice(CATEGORIES["a"], n),
                         "b": rng.choice(CATEGORIES["b"], n), "x": rng.uniform(0, 100, n)})


@pytest.mark.parametrize("df, options, expected", [
    (visits(units=10), dict(), "the table has 10 rows"),  # 36 rows, below every threshold
    # 1200 rows pass the smallest threshold (113) and fit at no k: bounding at k keeps 60 k rows
    (many_rows_each(60, 20).drop(columns="x"), dict(), "the table has 60 rows"),
    (many_rows_each(60, 20).drop(columns="x"), dict(method="game"), "the table has 60 rows"),
    (many_rows_each(60, 20), dict(categories=CATEGORIES, learn_bounds=["x"]), "holds fewer ('x' 60)"),
])
def test_auto_k_refuses_a_table_below_the_size_thresholds_before_choosing_k(ledgers, df, options, expected):
    """The domain stage's size checks, at every candidate k with the rows bounding keeps there, before the choice:
    they were made at the drawn k only, after its charge."""
    message = refused_uncharged(ledgers, df, **options)
    assert expected in message and "counts at max_rows_per_unit=1," in message, message
    assert "may draw any k in 1..32" in message


def test_auto_k_refuses_a_table_that_fits_only_the_smaller_k(ledgers):
    """The learned categories fit at k <= 15 and not above, where the choice lands with probability 0.62 (a run
    then was charged and refused): refused before the choice, at the first k that does not fit."""
    message = refused_uncharged(ledgers, visits(units=400, seed=7))
    assert "about 1965 rows" in message and "the table has 1861 rows" in message, message
    assert "counts at max_rows_per_unit=16," in message


@pytest.mark.parametrize("k", [1, 3, 32])
def test_the_joint_selection_reaches_its_threshold_by_one_tail_sum(k):
    """The size check of every candidate reads ``reaches`` (one tail sum), the domain stage the threshold itself."""
    from synthdp.mechanisms.partition import joint_selection

    selection = joint_selection(rho=Fraction(1, 50), delta=Fraction(1, 10**7), columns=2, contribution_bound=k)
    tau = selection.threshold
    assert [selection.reaches(rows) for rows in (0, k, tau - 1, tau, tau + 1, 10 * tau)] == [False] * 3 + [True] * 3


def test_auto_k_ranges_over_the_k_whose_plan_passes(monkeypatch):
    """A plan refused at k > 4 (public inputs only): the choice ranges over 1..4, the largest standing for "4 or
    more", and says so."""
    from synthdp import plan as plan_module
    from synthdp.mechanisms import units

    real_plan, asked = plan_module.make_plan, []

    def plan_up_to_4(config, schema, **kwargs):
        if config.contribution_bound > 4:
            raise InputError("refused above 4")
        return real_plan(config, schema, **kwargs)

    real_choice = units.exponential_mechanism
    monkeypatch.setattr(plan_module, "make_plan", plan_up_to_4)
    monkeypatch.setattr(units, "exponential_mechanism",
                        lambda scores, **kw: asked.append(scores) or real_choice(scores, **kw))
    df = visits(units=400, seed=12)
    result = generate_synthetic(df, "marginals:2", categories=CATEGORIES, n_rows=50, **AUTO)
    (scores,) = asked
    held = df["pid"].value_counts().to_numpy()
    assert scores.tolist() == units.rows_per_unit_scores(held, 4, Fraction(9, 10)).tolist()
    choice = result.report.plan["max_rows_per_unit"]
    assert 1 <= choice["value"] <= 4 and "over 1..4 (the k of 1..32 whose plan passes)" in choice["reason"]
    assert "k in 1..4" in result.report.ledger[0]["note"]


@pytest.mark.parametrize("options", [dict(engine="dask"), dict()])
def test_auto_k_refusals(options):
    if options:
        with pytest.raises(InputError, match="give a public k"):
            generate_synthetic(visits(units=10), "marginals:2", epsilon=1, delta=1e-6, progress=False,
                               privacy_unit="pid", max_rows_per_unit="auto", **options)
        return
    from synthdp.tuning import tune

    with pytest.raises(InputError, match="give a public k"):
        tune(visits(units=10), "marginals:2", [{}], epsilon=1, delta=1e-6, n_out=10, eval_workload="marginals:1",
             privacy_unit="pid", max_rows_per_unit="auto", categories=CATEGORIES)
