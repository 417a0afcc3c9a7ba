"""The plan: every choice from public inputs only, with its reason; the budget checked before any private step."""

from __future__ import annotations

import dataclasses
import warnings
import inspect
from fractions import Fraction

import pytest

import synthdp
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError, SynthDPError
from synthdp.methods.game.method import GamePlan, planned_spends
from synthdp.methods.measure.method import MeasurePlan
from synthdp.plan import Plan, make_plan

FAST = dict(rounds=6, samples_per_round=5, progress=False)


def test_make_plan_never_receives_the_data():
    """The plan's only inputs are the configuration, the public schema, the privately chosen k (released) and, for a
    linked view, its public share of one filter and the columns another view releases (docs/privacy.md §12); once
    the domain is learned it takes only what the domain stage released: its choices cost no privacy."""
    assert list(inspect.signature(make_plan).parameters) == ["config", "schema", "chosen_bound", "view"]
    assert list(inspect.signature(Plan.with_domain).parameters) == ["self", "domain"]


@pytest.mark.parametrize("options", [
    dict(query_class="marginals:2", epsilon=0.1, delta=1e-6, method="game"),
    dict(query_class="conjunctions:2", epsilon=0.5, delta=1e-9, method="game"),
    dict(query_class="marginals:2", epsilon=0.05, method="game"),
    dict(query_class="marginals:2", epsilon=1, delta=1e-7, relation="replace-one", query_player="prsma-exact",
         rounds=2, samples_per_round=5),
])
def test_plan_from_schema_alone_is_the_plan_the_run_reports(demo, options):
    df, schema = demo
    plan = make_plan(SynthesisConfig(schema=schema, **options), schema)
    choices = plan.choices()
    assert all(c["reason"] for c in choices.values()), choices
    assert {"method", "rounds", "samples_per_round", "player", "mode", "query_oracle", "data_oracle", "response",
            "burn_in_rounds"} <= set(choices)
    res = synthdp.generate_synthetic(df, schema=schema, random_state=0, progress=False, **options)
    assert res.report.plan == choices
    game = plan.method_plan
    assert res.report.rounds == game.rounds.value and res.report.query_player == game.player.value
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.method = None  # type: ignore[misc]


def test_planned_spends_are_the_spends(demo):
    """The dry run replays exactly what the players record (else the up-front budget check would be wrong)."""
    df, schema = demo
    for options in [dict(query_class="conjunctions:2", query_player="rspm", respond_to="union"),
                    dict(query_class="conjunctions:2", query_player="rspm", respond_to="round"),
                    dict(query_class="marginals:2", query_player="exponential"),
                    dict(query_class="marginals:2", query_player="noisy-max"),
                    dict(query_class="marginals:2", query_player="prsma-exact", relation="replace-one")]:
        config = SynthesisConfig(epsilon=1, delta=1e-7, schema=schema, random_state=1, **FAST, **options)
        planned = planned_spends(make_plan(config, schema).method_plan)
        ledger = synthdp.api.synthesize(df, config).report.ledger
        assert [(m, e, d, float(c)) for m, e, d, c in planned] == \
            [(x["mechanism"], Fraction(x["epsilon"]), Fraction(x["delta"]), x["clip"]) for x in ledger], options


def test_a_budget_the_run_cannot_keep_is_refused_before_the_data_are_read(demo, monkeypatch):
    """A tiny delta used to make the ledger refuse RSPM at round 26 of 50, after 25 private rounds."""
    df, schema = demo
    monkeypatch.setattr("synthdp.api.build", lambda *a, **k: pytest.fail("the data were read"))
    with pytest.raises(InputError, match="round 26 of 50 would be refused.*Nothing was run"):
        synthdp.generate_synthetic(df, "conjunctions:2", epsilon=1, delta=1e-29, rounds=50, query_player="rspm",
                                   schema=schema, progress=False)


def test_checks_that_need_n_run_only_under_replace_one(demo):
    """delta <= 1/n is checked where n is public; under add/remove nothing may depend on n."""
    df, schema = demo
    small = df.head(2000)
    with pytest.raises(InputError, match="larger than 1/n.*replace-one"):
        synthdp.generate_synthetic(small, "marginals:1", epsilon=1, delta=1e-3, relation="replace-one", schema=schema,
                                   **FAST)
    rep = synthdp.generate_synthetic(small, "marginals:1", epsilon=1, delta=1e-3, schema=schema, random_state=0,
                                     **FAST).report
    assert rep.relation == "add-remove" and not any("delta" in w for w in rep.warnings)


@pytest.mark.parametrize("options, message", [
    (dict(epsilon=360), "epsilon must be at most 100, got 360: above 100, e\\^epsilon promises nothing"),
    (dict(epsilon=1e6), "epsilon must be at most 100, got 1000000.0"),
    (dict(epsilon=0), r"epsilon must be a positive finite number \(the privacy budget"),
    (dict(epsilon=-1), r"epsilon must be a positive finite number \(the privacy budget"),
    (dict(epsilon=1, delta=0.1), "above 0.001, the most synthdp accepts under add-remove"),
])
def test_a_budget_beyond_the_public_ceilings_is_refused_before_the_data_are_read(demo, monkeypatch, options, message):
    """epsilon above 100 and (add/remove, where n is private) delta above 1e-3: fixed public ceilings."""
    df, schema = demo
    monkeypatch.setattr("synthdp.api.build", lambda *a, **k: pytest.fail("the data were read"))
    with pytest.raises(InputError, match=message):
        synthdp.generate_synthetic(df, "marginals:1", schema=schema, **options, **FAST)
    with pytest.raises(InputError, match=message):
        synthdp.Synthesizer("marginals:1", schema=schema, **options, **FAST).fit(df)  # checked by fit, before reading


def test_delta_above_one_over_the_public_n_rows_is_warned_and_reported(demo):
    """Under add/remove the only public size is the caller's n_rows; the warning reaches the report."""
    df, schema = demo
    with pytest.warns(UserWarning, match=r"above 1/n_rows = 0.0002"):
        rep = synthdp.generate_synthetic(df.head(50), "marginals:1", epsilon=1, delta=1e-3, n_rows=5000,
                                         schema=schema, random_state=0, **FAST).report
    assert any("above 1/n_rows" in w for w in rep.warnings)
    assert "warning: delta=0.001 is above 1/n_rows" in rep.summary()


@pytest.mark.parametrize("options, method, why", [
    (dict(query_class="marginals:2", delta=1e-9), "measure", "marginal class with a delta"),
    (dict(query_class="workload:WORKLOAD", delta=1e-9), "measure", "marginal class"),
    (dict(query_class="marginals:2"), "measure", "pure DP, marginal class"),
    (dict(query_class="halfspaces", delta=1e-9), "measure", "most probable records"),
    (dict(query_class="parities:2", delta=1e-9), "measure", "a marginal class"),
    (dict(query_class="marginals:2", delta=1e-9, rounds=5), "game", "game settings given (rounds)"),
])
def test_method_auto_chooses_from_public_inputs_with_its_reason(demo, tmp_path, options, method, why):
    df, schema = demo
    workload = tmp_path / "workload.json"
    workload.write_text('[["region", "education"], ["has_car"]]')
    options = {**options, "query_class": options["query_class"].replace("WORKLOAD", str(workload))}
    plan = make_plan(SynthesisConfig(epsilon=1, schema=schema, **options), schema)
    assert plan.method.name == method and why in plan.method_reason
    assert isinstance(plan, Plan) and isinstance(plan.method_plan, MeasurePlan) == (method == "measure")
    assert isinstance(plan.method_plan, GamePlan) == (method == "game")


def test_method_measure_refuses_what_it_cannot_serve_naming_the_game(demo):
    df, schema = demo
    with pytest.raises(InputError, match="marginal classes only.*method='game'"):
        make_plan(SynthesisConfig(epsilon=1, schema=schema, method="measure", query_class="halfspaces"), schema)
    served = make_plan(SynthesisConfig(epsilon=1, delta=1e-9, schema=schema, method="measure",
                                       query_class="halfspaces"), schema)
    assert served.method_plan.oracle is not None and "not a marginal class" in served.method_plan.marginals.reason
    with pytest.raises(InputError, match=r"\['rounds'\] are settings of the game.*method='game'"):
        make_plan(SynthesisConfig(epsilon=1, delta=1e-9, schema=schema, method="measure", rounds=3), schema)
    with pytest.raises(InputError, match="method 'measure-later' is not available"):
        make_plan(SynthesisConfig(epsilon=1, method="measure-later"), schema)


def test_measure_run_reports_its_plan_ledger_and_measurements(demo):
    df, schema = demo
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9, schema=schema, random_state=0,
                                     n_rows=300, progress=False)
    rep = res.report
    assert rep.method == "measure" and len(res.data) == 300 and list(res.data.columns) == list(df.columns)
    assert rep.plan["rho"]["value"] == rep.rho_budget
    assert Fraction(rep.rho_spent) <= Fraction(rep.rho_budget)
    assert [e["mechanism"] for e in rep.ledger] == ["select-measure-estimate"]
    assert rep.epsilon_spent <= 1 and rep.delta_spent <= 1e-9
    first = [m for m in rep.measurements if m["selected_by"] == "initial"]
    assert len(first) == len(df.columns)  # every 1-way marginal first (docs/privacy.md §8.1)
    cover = [m for m in rep.measurements if m["selected_by"] == "cover"]  # chosen by no mechanism (§8.10)
    assert cover and all(m["selection_epsilon"] is None for m in first + cover)
    assert len(rep.selected_queries) == len(rep.measurements) - len(first) - len(cover)
    assert sum(Fraction(e["rho"]) for e in rep.zcdp_ledger) == Fraction(rep.rho_spent)


def test_huge_requests_are_refused_before_anything_runs(demo):
    df, schema = demo
    with pytest.raises(InputError, match="rounds must be a positive integer of at most"):
        synthdp.generate_synthetic(df, epsilon=1, schema=schema, rounds=100_000_000, progress=False)
    with pytest.raises(InputError, match="n_rows must be a positive integer of at most"):
        synthdp.generate_synthetic(df, epsilon=1, schema=schema, n_rows=10**13, progress=False)
    with pytest.raises(InputError, match=r"random_state \(CLI: --seed\) must be a non-negative integer"):
        synthdp.generate_synthetic(df, epsilon=1, schema=schema, random_state=-1, progress=False)


def test_dead_domain_helpers_are_gone():
    from synthdp.core.domain import Domain

    assert not hasattr(Domain, "project") and not hasattr(Domain, "from_onehot")


@pytest.mark.parametrize("options, message", [
    (dict(method="game", query_player="prsma"), "runs under replace-one neighbours"),
    (dict(method="game", rounds=50, delta=1e-29, query_player="rspm"), "does not fit the budget|noise cap"),
    (dict(relation="replace-one", delta=0.02), "larger than 1/n"),  # n = 100 is public under replace-one
])
def test_a_run_the_plan_refuses_is_refused_before_domains_are_learned(monkeypatch, options, message):
    """With a column whose categories are learned privately (§9), a run the plan refuses draws nothing and
    spends nothing: the plan is checked on placeholder domains before partition selection (§10.1)."""
    import pandas as pd

    from synthdp.mechanisms import partition

    def refuse(*args, **kwargs):
        raise AssertionError("partition selection ran before the plan was checked")

    monkeypatch.setattr(partition, "select_categories", refuse)
    df = pd.DataFrame({"town": list("abcab") * 20, "kind": list("xyxyy") * 20})
    options = {"epsilon": 1, "delta": 1e-6, **options}
    with pytest.raises(InputError, match=message):
        synthdp.generate_synthetic(df, "conjunctions:2", random_state=0, progress=False, **options)


def test_the_delta_rule_reads_public_quantities_only_and_its_boundaries_are_exact():
    from synthdp.core.parameters import MAX_DELTA_ADD_REMOVE, check_delta_ceiling

    assert check_delta_ceiling(MAX_DELTA_ADD_REMOVE, "add-remove") is None
    with pytest.raises(InputError, match="add-remove"):
        check_delta_ceiling(MAX_DELTA_ADD_REMOVE * 1.0001, "add-remove")
    assert check_delta_ceiling(0.5, "replace-one") is None  # checked against the public n once counted (api.build)
    assert check_delta_ceiling(1e-4, "add-remove", n_rows=10_000) is None
    assert "above 1/n_rows" in check_delta_ceiling(1e-4, "add-remove", n_rows=10_001)
    assert check_delta_ceiling(None, "add-remove", n_rows=1) is None


def test_a_domain_too_large_to_count_is_refused_before_any_private_step(monkeypatch):
    """``bins={'x': 1_000_000}`` under marginals:3, every candidate read finely (``max_fine_cells`` past them all;
    by default the largest are read through their coarse twins), cannot be counted in memory: refused with what to
    change, before partition selection, PrivTree or any noise runs."""
    import numpy as np
    import pandas as pd

    import synthdp
    import synthdp.mechanisms.noise as noise

    def no_noise(*args, **kwargs):
        raise AssertionError("a private step ran before the size check")

    monkeypatch.setattr(noise, "discrete_laplace", no_noise)
    monkeypatch.setattr(noise, "discrete_laplace_array", no_noise)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 1_000_000, 100), "y": rng.integers(0, 1000, 100),
                       "z": rng.integers(0, 1000, 100), "t": rng.choice(["a", "b"], 100)})
    with pytest.raises(InputError, match=r"would count [\d,]+ cells .* column 'x' has 1,000,000 values\. Nothing was "
                                         r"released: give 'x' fewer bins \(e\.g\. bins=\{'x': 100\}"):
        synthdp.generate_synthetic(df, "marginals:3", epsilon=1.0, delta=1e-9, bins={"x": 1_000_000, "y": 100},
                                   bounds={"x": (0, 999_999), "y": (0, 999), "z": (0, 999)}, progress=False,
                                   measure_options=synthdp.MeasureOptions(max_fine_cells=2**62))


def test_a_refusal_after_a_private_step_states_what_was_spent(monkeypatch):
    """A value outside its public bounds is refused while the columns are tallied, before any charge, even when
    PrivTree and partition selection are to read them (docs/privacy.md §10.7); a refusal that comes after the
    categories and cells were learned says what the ledger was charged (§10.1)."""
    import numpy as np
    import pandas as pd

    import synthdp.api as api

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 3, 3000).astype(str), "x": rng.uniform(0, 100, 3000)})
    bad = df.copy()
    bad.loc[5, "x"] = 150.0
    with pytest.raises(SynthDPError) as before:
        synthdp.generate_synthetic(bad, "marginals:2", epsilon=1, delta=1e-9, bounds={"x": (0.0, 100.0)},
                                   random_state=1, progress=False)
    assert "value 150.0 in row 5, column 'x' is outside its public bounds" in str(before.value)
    assert "charged" not in str(before.value)

    def refuse(*args, **kwargs):
        raise InputError("the counting pass refused")

    monkeypatch.setattr(api, "build", refuse)  # after learning: the first step that reads the data past the tallies
    with pytest.raises(SynthDPError, match=r"counting pass refused.*after private steps .* charged \(.*\)-DP.*"
                                           r"spends again"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9, bounds={"x": (0.0, 100.0)},
                                   random_state=1, progress=False)


def test_a_fraction_in_a_column_whose_bounds_are_integers_is_refused_with_the_fix():
    """Bounds written as integers declare an integer column (its synthetic values are whole numbers) unless a
    declaration says otherwise: a value with a fraction is refused, naming the row, the column and the fixes,
    instead of being truncated, whether the frame holds it as text (as a CSV is read) or as floats (a frame's dtype
    declares nothing, docs/privacy.md §10.1); declared reals stay real."""
    import pandas as pd

    df = pd.DataFrame({"a": ["u", "v"] * 50, "x": [0.25, 0.5] * 50})
    for frame in (df.astype({"x": object}), df):
        with pytest.raises(SynthDPError, match=r"row 0, column 'x' is not a whole number.*\(0\.0, 1\.0\)"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synthdp.generate_synthetic(frame, "marginals:2", epsilon=1, delta=1e-9, bounds={"x": (0, 1)},
                                           bins={"x": 2}, categories={"a": ["u", "v"]}, random_state=1,
                                           progress=False)
    for declared in (dict(bounds={"x": (0.0, 1.0)}), dict(bounds={"x": (0, 1)}, dtypes={"x": "float64"})):
        out = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9, **declared, bins={"x": 2},
                                         categories={"a": ["u", "v"]}, random_state=1, progress=False)
        assert out.data["x"].dtype.kind == "f"


def _open_table(n: int = 3000, seed: int = 0):
    """A table whose schema leaves every kind of domain open: text categories, bounds and numeric cells."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"city": rng.choice(["north", "south", "east"], n), "grade": rng.choice(["a", "b"], n),
                         "amount": rng.integers(0, 500, n).astype(float), "age": rng.integers(18, 90, n)})


@pytest.mark.parametrize("options", [dict(), dict(method="game", rounds=3, samples_per_round=5)])
def test_one_plan_per_run_and_the_domain_stage_spends_what_it_fixed(monkeypatch, options):
    """make_plan runs once per run, before any private step, and fixes the method's budget: the domain stage
    (categories, bounds, point masses, cells; in the zCDP filter or pure spends ahead of the game) spends exactly
    the planned shares, and the method keeps the rest."""
    import synthdp.api as api

    plans = []

    def counted(*args, **kwargs):
        plans.append(make_plan(*args, **kwargs))
        return plans[-1]

    monkeypatch.setattr(api, "make_plan", counted)
    result = synthdp.generate_synthetic(_open_table(), "marginals:2", epsilon=2.0, delta=1e-9, random_state=0,
                                        progress=False, categorical=["city", "grade"], bounds={"age": (0, 120)},
                                        learn_bounds=["amount"], **options)
    assert len(plans) == 1
    before, after = plans[0], result.plan
    assert (after.epsilon, after.delta, after.inputs.filter_rho, after.inputs.filter_delta) == \
        (before.epsilon, before.delta, before.stage.rho, before.stage.filter_delta)
    assert before.stage.in_filter == (options == {}) and (before.stage.rho > 0) == (options == {})
    assert after.method is before.method and after.query_class is not before.query_class
    assert {"domains", "bounds", "discretised"} <= set(result.report.release.plan)


def test_a_domain_stage_that_spends_other_than_planned_is_refused_before_the_method_runs(monkeypatch):
    """Plan.with_domain compares what the stage spent with what make_plan fixed: trees charged at twice their eps_d
    (a changed cost formula) stop the run before the method's first step."""
    import synthdp.domains as domains
    from synthdp.methods.measure.method import MeasureMethod

    real, ran = domains.discretise, []
    monkeypatch.setattr(domains, "discretise",
                        lambda data, schema, *, epsilon, **kw: real(data, schema, epsilon=2 * epsilon, **kw))
    monkeypatch.setattr(MeasureMethod, "run", lambda *args, **kwargs: ran.append(1))
    with pytest.raises(RuntimeError, match="the domain stage spent"):
        synthdp.generate_synthetic(_open_table(), "marginals:2", epsilon=2.0, delta=1e-9, random_state=0,
                                   progress=False, categorical=["city", "grade"],
                                   bounds={"age": (0, 120), "amount": (0, 500)})
    assert not ran
