"""The accuracy benchmark's plumbing: published numbers, one tiny run, the summary table."""

from __future__ import annotations

import pytest

from synthdp.bench.accuracy import SETTINGS, Run, _suite_inputs, markdown, published_fem, run_one, summarise


def test_published_fem_numbers_are_read_from_the_shared_readme(shared_data_dir):
    fem = published_fem("ADULT 3-way x64")
    assert sorted(fem) == [0.1, 0.15, 0.2, 0.25, 0.5, 1.0]
    assert fem[0.1] > fem[1.0] > 0


def test_one_tiny_run_and_the_table(shared_data_dir):
    run = run_one("nltcs", "exponential", 1.0, 0, "auto", dict(SETTINGS, rounds=3, samples_per_round=2))
    assert run.epsilon_spent <= 1.0 and run.rounds == 3 and 0 <= run.max_error <= 1
    rspm = Run("nltcs", "rspm", 1.0, run.delta, 0, 2 * run.max_error, run.mean_tv, 1.0, 3, 6, 0, 1.0, False)
    table = markdown(summarise([run, rspm]))
    assert "| nltcs | exponential | 1 |" in table
    assert "nltcs eps=1: 2.00" in table  # RSPM / exponential ratio
    prsma = Run("nltcs", "prsma-exact", 1.0, run.delta, 0, 3 * run.max_error, run.mean_tv, 1.0, 3, 3, 0, 1.0, False)
    assert "of prsma-exact / exponential mechanism, same budget): nltcs eps=1: 3.00" in markdown(
        summarise([run, rspm, prsma]))


def test_prsma_runs_its_few_rounds_under_replace_one(shared_data_dir):
    run = run_one("nltcs", "prsma-exact", 1.0, 0, "auto", dict(SETTINGS, samples_per_round=2))
    assert run.rounds == 10 and run.epsilon_spent <= 1.0 and 0 <= run.max_error <= 1


def test_categorical_tuning_suites_mirror_the_adult_protocol(shared_data_dir):
    from synthdp.queries.workload import Workload

    for name, k in (("br2000-3x64", 3), ("br2000-5x64", 5)):
        df, schema, qc, sets = _suite_inputs(name)
        assert len(df) == 38000 and len(sets) == len(set(sets)) == 64
        assert all(len(s) == k and list(s) == sorted(s) for s in sets)
        assert isinstance(qc.base, Workload) and [tuple(a) for a in qc.base.marginal_attrs] == sets
        assert _suite_inputs(name)[3] == sets  # a fixed draw, the same on every call


def test_the_table_reports_the_worst_and_median_seed_beside_the_mean():
    runs = [Run("nltcs", "measure", 1.0, 1e-9, seed, error, 0.01, 1.0, 10, 0, 0, 1.0, False)
            for seed, error in enumerate([0.01, 0.05, 0.02, 0.03, 0.04])]
    row, = summarise(runs)
    assert (row["worst_max_error"], row["median_max_error"]) == (0.05, 0.03)
    assert abs(row["mean_max_error"] - 0.03) < 1e-12
    assert "| nltcs | measure | 1 | 0.0500 | 0.0300 | 0.0300 |" in markdown([row])


@pytest.mark.slow
def test_the_pure_measurement_run_spends_epsilon_with_no_delta(shared_data_dir):
    from synthdp.bench.accuracy import MEASURE_PURE

    run = run_one("br2000-3x64", MEASURE_PURE, 1.0, 0, "auto", SETTINGS)
    assert run.player == MEASURE_PURE and run.delta == 0.0 and 0.999999 <= run.epsilon_spent <= 1.0
    assert 0 <= run.max_error < 0.1
