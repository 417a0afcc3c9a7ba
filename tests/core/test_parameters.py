"""One boundary for the user's parameters: the rule table, the epsilon/delta rule, the relation enum, Synthesizer."""

from __future__ import annotations

import inspect
import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.api import NotFittedError, Synthesizer, generate_synthetic
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.parameters import RULES, Relation, check
from synthdp.accounting.ledger import Ledger, as_delta, as_epsilon, check_relation

FAST = dict(rounds=4, samples_per_round=5, progress=False)


@pytest.mark.parametrize("name, value", [
    ("epsilon", True), ("epsilon", float("nan")), ("epsilon", math.inf), ("epsilon", -1), ("epsilon", 0),
    ("epsilon", "1"), ("delta", 1.0), ("delta", np.nan), ("delta", -1e-9),
    ("random_state", -1), ("random_state", 1.5), ("random_state", True),
    ("n_rows", 10**13), ("n_rows", 0), ("n_rows", 1e3),
    ("rounds", 100_000_000), ("rounds", 0), ("samples_per_round", 0), ("burn_in", 1.0),
    ("relation", "neighbours"), ("respond_to", "both"), ("ftpl_noise", "gaussian"), ("numeric", "float"),
    ("missing", "?"), ("method", ""), ("method", 3), ("time_limit", 0),
])
def test_every_bad_value_is_refused_with_its_name(name, value):
    with pytest.raises(InputError) as err:
        check(name, value)
    shown = "query player" if name == "query_player" else name
    assert shown in str(err.value) and repr(value) in str(err.value)


@pytest.mark.parametrize("name, value", [
    ("epsilon", np.float32(1)), ("epsilon", np.int64(2)), ("epsilon", Fraction(1, 3)), ("delta", np.float64(1e-9)),
    ("delta", None), ("random_state", np.int64(7)), ("random_state", 0), ("n_rows", 10**6), ("rounds", 100_000),
    ("relation", Relation.REPLACE_ONE), ("relation", "add-remove"), ("missing", ["?", "NA"]),
])
def test_good_values_pass(name, value):
    assert check(name, value) is value


def test_the_api_the_synthesizer_and_the_game_use_the_table(demo, monkeypatch):
    """Each caller refuses through the one table: a changed rule message shows up in all three."""
    from synthdp.core import parameters
    from synthdp.methods.game.algorithm import FTPLDataPlayer, OracleStats
    from synthdp.oracles import Limits, get_oracle
    from synthdp.queries.spec import parse_query_class

    monkeypatch.setitem(RULES, "ftpl_noise", parameters.Rule(RULES["ftpl_noise"].test, "MARK {name}"))
    df, schema = demo
    with pytest.raises(InputError, match="MARK ftpl_noise"):
        generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, ftpl_noise="x", **FAST)
    with pytest.raises(InputError, match="MARK ftpl_noise"):
        Synthesizer("marginals:2", epsilon=1, ftpl_noise="x").fit(df)
    qc = parse_query_class("marginals:1", schema.domain)
    with pytest.raises(InputError, match="MARK ftpl_noise"):
        FTPLDataPlayer(qc, get_oracle("exact"), resolution=10, scale=1.0, rng=np.random.default_rng(0),
                       limits=Limits(), stats=OracleStats(), noise="x")


def test_numpy_epsilon_runs_and_equals_the_float(demo):
    df, schema = demo
    a = generate_synthetic(df, "marginals:2", epsilon=np.float32(1), schema=schema, random_state=3, **FAST)
    b = generate_synthetic(df, "marginals:2", epsilon=1.0, schema=schema, random_state=3, **FAST)
    pd.testing.assert_frame_equal(a.data, b.data)


def test_one_rule_epsilon_down_on_its_grid_delta_exact_and_never_zero():
    assert as_epsilon(0.3) == Fraction(299999, 10**6)  # the float 0.3 lies below 3/10: rounded down
    assert as_epsilon(0.05) == Fraction(1, 20) and as_epsilon(Fraction(1, 3)) == Fraction(1, 3)
    assert as_epsilon(np.float32(0.5)) == Fraction(1, 2) and as_epsilon(np.int64(2)) == 2
    for d in (1e-6, 1e-9, 4e-19, 1e-30, 5e-324):
        assert 0 < as_delta(d) <= Fraction(d) and float(as_delta(d)) == d
    for bad in (True, np.bool_(True), float("nan"), math.inf, -0.5, "0.1", None):
        with pytest.raises(InputError, match="epsilon"):
            as_epsilon(bad)
    with pytest.raises(InputError, match="Fraction"):
        as_epsilon(1e-7)  # would round to 0: refused, with the way out


def test_tiny_delta_reaches_the_ledger_exactly(demo):
    df, schema = demo
    rep = generate_synthetic(df, "marginals:2", epsilon=1, delta=4e-19, schema=schema, random_state=0, **FAST).report
    assert rep.delta_budget == 4e-19
    assert Ledger(Fraction(1), as_delta(4e-19)).delta_budget == Fraction(4e-19)


def test_relation_is_one_str_enum():
    assert Relation("add-remove") is Relation.ADD_REMOVE and Relation.ADD_REMOVE == "add-remove"
    assert f"{Relation.REPLACE_ONE}" == "replace-one" and json.dumps(Relation.REPLACE_ONE) == '"replace-one"'
    assert check_relation("replace-one") is Relation.REPLACE_ONE
    from synthdp.accounting import ledger as accounting

    assert accounting.RELATIONS == tuple(Relation) and accounting.ADD_REMOVE is Relation.ADD_REMOVE
    with pytest.raises(InputError, match="relation"):
        check_relation("swap")


def test_signatures_of_api_synthesizer_and_config_agree():
    """One parameter list: generate_synthetic, Synthesizer and SynthesisConfig name the same parameters."""
    api = [p for p in inspect.signature(generate_synthetic).parameters if p != "df"]
    init = list(inspect.signature(Synthesizer.__init__).parameters)[1:]
    assert sorted(api) == sorted(init) == sorted(SynthesisConfig.names())
    defaults = {n: p.default for n, p in inspect.signature(generate_synthetic).parameters.items() if n != "df"}
    assert {n: p.default for n, p in inspect.signature(Synthesizer.__init__).parameters.items()
            if n != "self"} == defaults
    assert all(getattr(SynthesisConfig(epsilon=1), n) == d for n, d in defaults.items() if n != "epsilon")


def test_synthesizer_stores_parameters_as_given_and_fit_checks_them_before_reading():
    """scikit-learn: __init__ and set_params store what they are given; fit refuses a bad value before it reads
    anything (the table named here does not exist, and the refusal is about the parameter)."""
    bad = Synthesizer(epsilon=-1, random_state="x")
    assert bad.epsilon == -1 and bad.random_state == "x"
    with pytest.raises(InputError, match="epsilon must be a positive"):
        bad.fit("no-such-file.csv")
    with pytest.raises(InputError, match="random_state"):
        Synthesizer(epsilon=1, random_state=-1).fit("no-such-file.csv")
    s = Synthesizer("marginals:2", epsilon=1, rounds=5)
    with pytest.raises(InputError, match="unknown parameter 'epsilons'; did you mean 'epsilon'"):
        s.set_params(epsilons=1)
    assert s.epsilon == 1  # a refused set_params changes nothing
    s.set_params(epsilon_per_round=0.1)
    with pytest.raises(InputError, match="not both"):
        s.fit("no-such-file.csv")
    assert s.set_params(epsilon=2, rounds=None) is s and s.get_params()["epsilon"] == 2
    assert s.config().epsilon_per_round == 0.1


def test_synthesizer_get_params_clone_and_fitted_attributes(demo):
    df, schema = demo
    s = Synthesizer("marginals:2", epsilon=1.0, schema=schema, random_state=0, **FAST)
    clone = Synthesizer(**s.get_params())
    assert clone.get_params() == s.get_params()
    with pytest.raises(NotFittedError, match="not fitted"):
        s.sample(3)
    assert not hasattr(s, "report_")
    s.fit(df)
    assert s.schema_ is schema and s.plan_.method_plan.rounds.value == 4 and s.report_.epsilon_spent <= 1
    assert len(s.sample(7, random_state=1)) == 7
    with pytest.raises(InputError, match="n_rows"):
        s.sample(-1)
    assert "epsilon=1.0" in repr(s) and "rounds=4" in repr(s)


def test_missing_tokens_and_spaces_in_python_as_in_the_cli():
    """' ?' and ' Federal-gov' (raw UCI Adult read without skipping spaces): stripped, with a message; '?' missing."""
    df = pd.DataFrame({"w": [" Federal-gov", " ?", "Private", " Private"] * 25, "s": ["a", "b"] * 50})
    cats = {"w": ["Federal-gov", "Private"], "s": ["a", "b"]}
    with pytest.warns(UserWarning, match=r"stripped surrounding spaces.*\['w'\]"):
        res = generate_synthetic(df, "marginals:1", epsilon=1, categories=cats, nullable=["w"], missing=["?"],
                                 random_state=0, **FAST)
    assert set(res.data["w"].dropna()) <= {"Federal-gov", "Private"}
    assert "stripped" not in json.dumps(res.report.to_dict())  # which columns had spaces is read off the data
    assert any("stripped" in n for n in res.report.diagnostics.notes)
    assert df["w"].iloc[0] == " Federal-gov"  # the caller's frame is not modified


def test_default_path_imports_no_optional_package():
    """Plotting and the CBC/MaxSAT backends are extras: a default generation never imports them."""
    import subprocess
    import sys

    code = ("import sys, synthdp, synthdp.cli\n"
            "from synthdp.datasets.demo import demo_dataframe, demo_schema\n"
            "synthdp.generate_synthetic(demo_dataframe(n=500), 'conjunctions:2', epsilon=1, delta=1e-9, "
            "schema=demo_schema(), query_player='rspm', rounds=2, samples_per_round=3, progress=False)\n"
            "print(sorted(m for m in ('matplotlib', 'pulp', 'pysat') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("module, purpose, extra", [("matplotlib", "plotting", "plot"),
                                                    ("pulp", "the cbc oracle", "solvers"),
                                                    ("pysat.examples.rc2", "the maxsat oracle", "solvers")])
def test_a_missing_extra_says_what_to_install(monkeypatch, module, purpose, extra):
    import sys

    from synthdp.core.extras import require

    for name in [module.split(".")[0], module]:  # what an absent package looks like to import, imported or not
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(InputError, match=rf"{purpose} needs the optional package .*synthdp\[{extra}\]"):
        require(module, purpose)
