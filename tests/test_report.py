"""The report's two parts: the release (publishable) and the diagnostics (never published)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

import synthdp
from synthdp.core.errors import PrivacyError
from synthdp.report import DO_NOT_PUBLISH

FAST = dict(rounds=6, samples_per_round=5, progress=False)
#: Words of measured quantities: none may appear among the release's field names.
MEASURED = ("second", "time", "calls", "failure", "nodes", "unproven", "stats")


def _keys(obj, prefix=""):
    """Every key of a nested JSON-like value, with its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{prefix}{k}"
            yield from _keys(v, f"{prefix}{k}.")
    elif isinstance(obj, list):
        for v in obj:
            yield from _keys(v, prefix)


def test_release_holds_no_measured_quantity_and_diagnostics_are_marked(demo):
    df, schema = demo
    rep = synthdp.generate_synthetic(df, "conjunctions:2", epsilon=1, delta=1e-9, schema=schema, random_state=0,
                                     query_player="rspm", **FAST).report
    release = rep.to_dict()
    json.dumps(release)
    assert not [k for k in _keys(release) if any(w in k.split(".")[-1] for w in MEASURED)]
    diagnostics = rep.diagnostics.to_dict()
    assert diagnostics["warning"] == DO_NOT_PUBLISH and "oracle_stats" in diagnostics and diagnostics["seconds"] > 0
    assert rep.diagnostics.summary().startswith("DO NOT PUBLISH")
    with pytest.raises(AttributeError):
        rep.seconds  # noqa: B018 - the run time is a diagnostic, not an attribute of the release


def test_summary_prints_no_timing_and_explains_what_it_shows(demo):
    df, schema = demo
    rep = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.05, schema=schema, random_state=0, **FAST).report
    text = rep.summary()
    assert not re.search(r"\d s\b|seconds|calls|failed", text), text
    assert "oracle -" not in text and "mode -" not in text and "no query oracle" in text
    assert "a-priori bound: vacuous" in text  # B >= 1 says nothing: said so, not printed as a bound
    assert f"wrote {rep.rows_written} rows" in text


@pytest.mark.parametrize("options, neighbour", [
    (dict(query_class="marginals:2", epsilon=0.5, delta=1e-6), "add"),
    (dict(query_class="conjunctions:2", epsilon=1, delta=1e-9, query_player="rspm"), "add"),
    (dict(query_class="marginals:2", epsilon=1, delta=1e-7, relation="replace-one", query_player="prsma-exact",
          rounds=2, samples_per_round=5, progress=False), "replace"),
])
def test_release_of_neighbouring_data_differs_only_in_paid_outputs(demo, options, neighbour):
    """D and a neighbour (one more record, or one replaced under PRSMA), same seed: every released field is equal
    except the private selections, which the ledger paid for; times and counts are not in the release."""
    df, schema = demo
    row = df.iloc[[0]].copy()
    other = (pd.concat([df, row], ignore_index=True) if neighbour == "add"
             else pd.concat([df.iloc[1:], df.iloc[[len(df) - 1]]], ignore_index=True))
    options = {**FAST, **options}
    a = synthdp.generate_synthetic(df, schema=schema, random_state=5, **options).report
    b = synthdp.generate_synthetic(other, schema=schema, random_state=5, **options).report
    ra, rb = a.to_dict(), b.to_dict()
    assert set(ra) == set(rb)
    paid = {"selected_queries"}
    for field in set(ra) - paid:
        assert ra[field] == rb[field], field
    assert not [k for k in _keys(ra) if any(w in k.split(".")[-1] for w in MEASURED)]


def test_mode_e_fail_message_does_not_quote_the_solver(demo, monkeypatch):
    """A Mode E FAIL abandons the release; the error must not carry the solver's message (the noisy objective)."""
    import synthdp.mechanisms.rspm as rspm_module
    from synthdp.oracles.base import FAIL, OracleResult

    def failing(instance, lam, oracle, limits, rng, *, noise_cap):
        result = OracleResult(FAIL, None, None, None, oracle.name, "UNKNOWN", 0.0, 1,
                              "best noisy objective -1234567 after 1 node")
        return rspm_module.NoisySolve(None, result, 0, 0, False)

    monkeypatch.setattr(rspm_module, "perturbed_solve", failing)
    df, schema = demo
    with pytest.raises(PrivacyError) as err:
        synthdp.generate_synthetic(df, "conjunctions:2", epsilon=1, delta=1e-9, schema=schema, random_state=0,
                                   query_player="rspm", **FAST)
    assert "FAIL in Mode E" in str(err.value) and "1234567" not in str(err.value)


def test_debug_lines_that_show_n_are_marked_private(caplog):
    """n is private under add/remove: any log line that prints it must say PRIVATE."""
    import logging

    from synthdp.datasets.demo import demo_dataframe, demo_schema

    n = 3217
    caplog.set_level(logging.DEBUG, logger="synthdp")
    synthdp.generate_synthetic(demo_dataframe(n=n), "conjunctions:2", epsilon=1, delta=1e-9, schema=demo_schema(),
                               random_state=0, query_player="rspm", **FAST)
    showing = [r.getMessage() for r in caplog.records if re.search(rf"\b{n}\b", r.getMessage())]
    assert showing and all(m.startswith("PRIVATE") for m in showing), showing


@pytest.mark.parametrize("epsilon, vacuous", [(0.02, False), (1.0, True)])
def test_population_statement_comes_from_the_release_alone(demo, epsilon, vacuous):
    """The transfer theorem's statement (docs/privacy.md §5) reads only the spent budget and the relation."""
    from synthdp.transfer import population_statement

    df, schema = demo
    rep = synthdp.generate_synthetic(df, "marginals:1", epsilon=epsilon, delta=1e-9, schema=schema, random_state=0,
                                     progress=False).report
    got = rep.population(0.01)
    assert got == population_statement(rep.epsilon_spent, rep.delta_spent, sample_error=0.01, sample_failure=0.05,
                                       failure=0.1, relation="add-remove")
    assert got.vacuous == vacuous and got.population_error > 0.01 + (2 * epsilon if not vacuous else 0)
    lines = [line for line in rep.summary().splitlines() if line.startswith("population")]
    assert len(lines) == (0 if vacuous else 1), lines  # printed only when it says something


def test_summary_says_which_method_ran_and_why_when_time_limit_chose_the_game(tmp_path, capsys):
    """--time-limit is a game setting: under --method auto it picks the game, and the summary says so."""
    from synthdp.cli import main
    from synthdp.datasets.demo import demo_dataframe

    demo_dataframe(n=300).to_csv(tmp_path / "in.csv", index=False)
    argv = ["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--epsilon", "1", "--delta",
            "1e-6", "--queries", "marginals:1", "--unsafe-public-categories", "--seed", "0", "-q"]
    assert main([*argv, "--time-limit", "5", "--samples-per-round", "5"]) == 0
    out = capsys.readouterr().out
    assert "method game: game settings given (samples_per_round, time_limit), so auto chose the game" in out, out
    assert main(argv) == 0
    assert "method measure: a marginal class with a delta" in capsys.readouterr().out


def test_texts_print_rho_and_epsilon_as_floats_and_the_json_keeps_them_exact(demo, caplog):
    """Log lines, ledger notes and the summary show decimals; the release's exact fields stay exact fractions."""
    from fractions import Fraction

    df, schema = demo
    with caplog.at_level("INFO", logger="synthdp"):
        rep = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-6, schema=schema, random_state=0,
                                         progress=False).report
    texts = [r.getMessage() for r in caplog.records]
    texts += [e["note"] for e in rep.ledger + rep.zcdp_ledger] + [rep.summary()]
    assert texts and not [t for t in texts if re.search(r"\d{7,}/\d", t)], texts
    assert Fraction(rep.rho_budget) == Fraction(rep.plan["rho"]["value"])  # exact, not rounded
    assert Fraction(rep.rho_spent) <= Fraction(rep.rho_budget)
    exact = decimals_beside_exact_values(json.loads(json.dumps(rep.to_dict())))
    assert {"rho_budget", "rho_spent", "epsilon", "delta", "rho", "sigma2", "value"} <= exact  # at every depth


def decimals_beside_exact_values(obj) -> set[str]:
    """Check that every exact value ``"KEY": "p/q"`` of ``obj`` has ``"KEY_decimal"`` beside it, its nearest float,
    and no other key ends in ``_decimal``; return the keys of the exact values."""
    from fractions import Fraction

    found: set[str] = set()
    if isinstance(obj, list):
        for item in obj:
            found |= decimals_beside_exact_values(item)
    elif isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, str) and re.fullmatch(r"-?\d+(/\d+)?", value):
                assert obj[f"{key}_decimal"] == float(Fraction(value)), (key, value)
                found.add(key)
            elif key.endswith("_decimal"):
                assert key[:-len("_decimal")] in obj, key
            found |= decimals_beside_exact_values(value)
    return found


def test_with_decimals_on_a_small_case():
    from synthdp.report import with_decimals

    given = {"rho": "1/20", "n": 3, "note": "rho=1/20 of the budget", "events": [{"delta": "0", "x": None}]}
    assert with_decimals(given) == {"rho": "1/20", "rho_decimal": 0.05, "n": 3, "note": "rho=1/20 of the budget",
                                    "events": [{"delta": "0", "delta_decimal": 0.0, "x": None}]}
    assert list(with_decimals(given)) == ["rho", "rho_decimal", "n", "note", "events"]  # each beside its value


@pytest.mark.parametrize("options, rows, why", [
    (dict(method="game", rounds=8, samples_per_round=5, burn_in=0.25), 30, "(8 - 2) rounds x 5 samples, not the input"),
    (dict(method="game", rounds=8, samples_per_round=5, n_rows=77), 77, "n_rows given by the caller"),
    (dict(method="measure"), None, "noisy total count"),
])
def test_summary_says_how_many_rows_were_written_and_why(demo, options, rows, why):
    """The game's output size is its plays, not n (private under add/remove); the summary says so."""
    df, schema = demo
    rep = synthdp.generate_synthetic(df, "marginals:1", epsilon=1, delta=1e-6, schema=schema, random_state=0,
                                     progress=False, **options).report
    line = next(line for line in rep.summary().splitlines() if line.startswith("wrote"))
    assert why in line and line.startswith(f"wrote {rep.rows_written} rows:"), line
    assert rows is None or rep.rows_written == rows
