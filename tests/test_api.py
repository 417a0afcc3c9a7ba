"""generate_synthetic / Synthesizer: privacy bookkeeping, determinism, accuracy trend, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Schema
from synthdp.evaluation.marginals import marginal_errors
from synthdp.methods.game import method as game_method

FAST = dict(rounds=8, samples_per_round=10, progress=False)


def test_rounds_follow_from_the_per_round_budget(demo):
    """Without ``rounds``, T is the largest count whose per-round budget stays >= epsilon_per_round."""
    from fractions import Fraction

    from synthdp.accounting.ledger import ROUNDS_SLACK, per_round_epsilon

    df, schema = demo
    for eps, eps0 in [(0.05, 0.01), (0.5, 0.02)]:
        rep = synthdp.generate_synthetic(df, "marginals:2", epsilon=eps, delta=1e-6, schema=schema, random_state=1,
                                         epsilon_per_round=eps0, burn_in=0, samples_per_round=5,
                                         progress=False).report
        T, target = rep.rounds, Fraction(str(eps0)) * (1 - ROUNDS_SLACK)
        assert per_round_epsilon(Fraction(str(eps)), Fraction(1, 10**6), T) >= target
        assert per_round_epsilon(Fraction(str(eps)), Fraction(1, 10**6), T + 1) < target
        assert Fraction(rep.epsilon_per_round) >= target and rep.epsilon_spent <= eps + 1e-12
    small = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.02, delta=1e-6, schema=schema, random_state=1,
                                       samples_per_round=5, progress=False).report
    large = synthdp.generate_synthetic(df, "marginals:2", epsilon=5, delta=1e-6, schema=schema, random_state=1,
                                       samples_per_round=5, progress=False).report
    # Basic composition wins at this budget: T = floor(0.02 / DEFAULT_EPSILON_PER_ROUND).
    assert small.rounds == int(Fraction("0.02") / Fraction(str(game_method.DEFAULT_EPSILON_PER_ROUND)))
    assert large.rounds == game_method.DEFAULT_MAX_ROUNDS


def test_samples_per_round_double_when_the_round_cap_applies(demo):
    """N is DEFAULT_SAMPLES unless the default rule's rounds were cut by the cap; an explicit N always wins."""
    from fractions import Fraction

    from synthdp.methods.game.method import CAPPED_SAMPLES, DEFAULT_MAX_ROUNDS, DEFAULT_SAMPLES, game_length
    from synthdp.queries.spec import parse_query_class

    qc = parse_query_class("marginals:2", demo[1].domain)
    delta = Fraction(1, 10**6)
    assert game_length(Fraction(5), delta, qc) == (DEFAULT_MAX_ROUNDS, CAPPED_SAMPLES)
    assert game_length(Fraction(5), delta, qc, samples_per_round=7) == (DEFAULT_MAX_ROUNDS, 7)
    T, N = game_length(Fraction(1, 10), delta, qc)
    assert T < DEFAULT_MAX_ROUNDS and N == DEFAULT_SAMPLES
    # Rounds given or chosen through epsilon_per_round are never "capped", even when there are many.
    assert game_length(Fraction(5), delta, qc, rounds=DEFAULT_MAX_ROUNDS) == (DEFAULT_MAX_ROUNDS, DEFAULT_SAMPLES)
    T, N = game_length(Fraction(5), delta, qc, epsilon_per_round=0.001)
    assert T > DEFAULT_MAX_ROUNDS and N == DEFAULT_SAMPLES
    # The report states the N actually played.
    rep = synthdp.generate_synthetic(demo[0], "marginals:2", epsilon=5, delta=1e-6, schema=demo[1], random_state=1,
                                     rounds=2, progress=False).report
    assert rep.samples_per_round == DEFAULT_SAMPLES


def _max_error(df, schema, synthetic, k=2):
    import itertools

    enc = Encoder(schema)
    real, syn = enc.to_aggregated(df), enc.to_aggregated(synthetic)
    sets = list(itertools.combinations(range(len(schema.domain)), k))
    return marginal_errors(real, syn, sets).max_error


@pytest.mark.parametrize("player", ["exponential", "rspm", "noisy-max"])
def test_report_budget_comes_from_ledger_and_never_exceeds(demo, player):
    df, schema = demo
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.8, delta=1e-6, schema=schema, random_state=3,
                                     query_player=player, **FAST)
    rep = res.report
    assert rep.epsilon_spent <= 0.8 + 1e-12 and rep.delta_spent <= 1e-6
    assert len(rep.ledger) == rep.rounds == 8
    # Basic composition of the ledger's own events bounds the reported total.
    assert rep.epsilon_spent <= sum(float(__import__("fractions").Fraction(e["epsilon"])) for e in rep.ledger) + 1e-12
    # eps0 = 0.1 per round: "auto" answers the union, which keeps every round's plays.
    assert rep.respond_to == "union" and rep.burn_in_rounds == 0
    assert len(res.data) == 8 * 10 and list(res.data.columns) == list(df.columns)
    assert rep.query_player == player


def test_wide_conjunctions_get_sharper_default_rounds():
    from synthdp.core.domain import Domain
    from synthdp.methods.game.method import DEFAULT_EPSILON_PER_ROUND, WIDE_EPSILON_PER_ROUND, default_epsilon_per_round
    from synthdp.queries.spec import parse_query_class

    domain = Domain.from_sizes({f"a{i}": 3 for i in range(6)})
    assert default_epsilon_per_round(parse_query_class("marginals:3", domain)) == DEFAULT_EPSILON_PER_ROUND
    assert default_epsilon_per_round(parse_query_class("marginals:5", domain)) == WIDE_EPSILON_PER_ROUND
    assert default_epsilon_per_round(parse_query_class("parities:2", domain)) == DEFAULT_EPSILON_PER_ROUND


def test_auto_response_and_burn_in_follow_the_per_round_budget(demo):
    df, schema = demo
    few = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.02, delta=1e-6, schema=schema, random_state=2,
                                     rounds=8, samples_per_round=5, progress=False)
    assert few.report.respond_to == "round" and few.report.burn_in_rounds == 2  # eps0 = 0.0025 < 0.006
    assert len(few.data) == (8 - 2) * 5
    forced = synthdp.generate_synthetic(df, "marginals:2", epsilon=0.02, delta=1e-6, schema=schema, random_state=2,
                                        rounds=8, samples_per_round=5, respond_to="union", burn_in=0.5,
                                        progress=False)
    assert forced.report.respond_to == "union" and len(forced.data) == (8 - 4) * 5


def test_same_seed_same_output_and_no_global_rng(demo):
    df, schema = demo
    np.random.seed(1)
    a = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, random_state=11, **FAST).data
    np.random.seed(2)
    b = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, random_state=11, **FAST).data
    c = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, random_state=12, **FAST).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_error_falls_as_epsilon_grows(demo):
    """Seeded and averaged over seeds; the gap is large, so the margin is safe but the test can fail."""
    df, schema = demo
    opts = dict(rounds=30, samples_per_round=20, progress=False, schema=schema, query_player="exponential")
    low = np.mean([_max_error(df, schema, synthdp.generate_synthetic(df, "marginals:2", epsilon=0.02,
                                                                     random_state=s, **opts).data) for s in range(3)])
    high = np.mean([_max_error(df, schema, synthdp.generate_synthetic(df, "marginals:2", epsilon=20,
                                                                      random_state=s, **opts).data) for s in range(3)])
    assert high < 0.75 * low, (low, high)


def test_synthesizer_fit_sample(demo):
    df, schema = demo
    synth = synthdp.Synthesizer("marginals:2", epsilon=1.0, random_state=0, schema=schema, **FAST).fit(df)
    out = synth.sample(33, random_state=0)
    assert len(out) == 33 and list(out.columns) == list(df.columns)
    assert synth.report_.epsilon_spent <= 1.0


def test_nltcs_end_to_end(shared_data_dir):
    from synthdp.datasets import load_coded

    df, schema = load_coded("nltcs")
    res = synthdp.generate_synthetic(df, "marginals:3", epsilon=1.0, delta=1e-9, schema=schema, random_state=0,
                                     rounds=10, samples_per_round=20, progress=False)
    assert res.data.shape == (10 * 20, 16)  # eps0 = 0.1: the union response, no burn-in
    assert set(np.unique(res.data.to_numpy())) <= {0, 1}
    assert _max_error(df, schema, res.data, k=3) < 0.5


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0), r"epsilon must be a positive finite number \(the privacy budget"),
    (dict(epsilon=-1), "epsilon"),
    (dict(epsilon=math.inf), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon=1, delta=-1e-9), "delta must be in"),
    (dict(epsilon=1, delta=1.5), "delta"),
    (dict(epsilon=1, delta=0.01, relation="replace-one"), "larger than 1/n"),  # n is public only here
    (dict(epsilon=1, query_player="magic"), "unknown query player"),
    (dict(epsilon=1, oracle="gurobi"), "unknown oracle"),
    (dict(epsilon=1, rounds=0), "rounds"),
    (dict(epsilon=1, rounds=5, epsilon_per_round=0.01), "not both"),
    (dict(epsilon=1, epsilon_per_round=2), "epsilon_per_round must be in"),
    (dict(epsilon=1, burn_in=1.0), "burn_in must be a fraction"),
])
def test_bad_parameters(demo, kwargs, match):
    df, schema = demo
    with pytest.raises(InputError, match=match):
        synthdp.generate_synthetic(df, "marginals:2", schema=schema, progress=False, **kwargs)


def test_bad_query_spec_and_unencodable_class(demo):
    df, schema = demo
    with pytest.raises(InputError, match="marginals"):
        synthdp.generate_synthetic(df, "everything:7", epsilon=1, schema=schema, progress=False)
    with pytest.raises(InputError, match="cannot encode"):
        synthdp.generate_synthetic(df, "parities:2", epsilon=1, delta=1e-9, schema=schema, progress=False,
                                   query_player="rspm", oracle="exact")
    with pytest.raises(InputError, match="needs delta > 0"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1, schema=schema, progress=False, query_player="rspm")


def test_bad_data():
    with pytest.raises(InputError, match="empty"):
        synthdp.generate_synthetic(pd.DataFrame(), epsilon=1, progress=False)
    df = pd.DataFrame({"age": [20.5, 30.1, 40.2], "sex": ["F", "M", "F"]})
    with pytest.raises(SchemaError, match="age"):
        synthdp.generate_synthetic(df, "marginals:1", epsilon=1, progress=False)
    with pytest.raises(SchemaError, match="nope"):
        synthdp.generate_synthetic(df, "marginals:1", epsilon=1, progress=False, bounds={"nope": (0, 1)})


def test_nan_becomes_its_own_category():
    df = pd.DataFrame({"a": ["x", None, "y", "x"] * 10, "b": ["u", "v", None, "v"] * 10})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = synthdp.generate_synthetic(df, "marginals:2", epsilon=5, random_state=0, unsafe_public_categories=True,
                                         **FAST)
    assert set(res.data["a"].dropna()) <= {"x", "y"}
    assert res.report.warnings, "reading categories off the data must be reported"


def test_domains_without_public_categories_are_learned_and_paid_for():
    """No public categories: partition selection learns them ahead of the game, within the one budget."""
    df = pd.DataFrame({"a": ["x", None, "y", "x"] * 100, "b": ["u", "v", None, "v"] * 100})
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=5, delta=1e-6, random_state=0, **FAST)
    rep = res.report
    assert rep.plan["domains"]["value"] == ["a", "b"] and "partition selection" in rep.plan["domains"]["reason"]
    ahead = [e for e in rep.ledger if e["ahead"]]
    assert len(ahead) == 2 and rep.ledger[:2] == ahead and rep.epsilon_spent <= 5 and rep.delta_spent <= 1e-6
    assert set(res.data["a"].dropna()) <= {"x", "y"}
    with pytest.raises(InputError, match="needs delta > 0"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=5, random_state=0, **FAST)


def test_prsma_exact_spends_prsma_budget_with_one_call_per_round(demo, monkeypatch):
    """``prsma-exact``: PRSMA's (eps*, delta*) per round in the ledger, one unlimited query-oracle call per round."""
    from fractions import Fraction

    import synthdp.mechanisms.prsma as prsma_module
    from synthdp.accounting.ledger import prsma_per_round
    from synthdp.oracles.base import NO_LIMITS

    calls = []
    solve = prsma_module.perturbed_solve

    def counted(instance, lam, oracle, limits, rng, *, noise_cap):
        calls.append(limits)
        return solve(instance, lam, oracle, limits, rng, noise_cap=noise_cap)

    monkeypatch.setattr(prsma_module, "perturbed_solve", counted)
    df, schema = demo
    opts = dict(epsilon=1, delta=1e-7, relation="replace-one", query_player="prsma-exact", samples_per_round=5,
                schema=schema, random_state=0, progress=False)
    rep = synthdp.generate_synthetic(df, "marginals:2", rounds=2, **opts).report
    assert rep.query_player == "prsma-exact" and rep.mode == "P, exact-oracle law"
    assert calls == [NO_LIMITS, NO_LIMITS]  # no round output bottom with this seed
    delta = Fraction(1e-7)  # a float delta is kept at its exact binary value (accounting.as_delta)
    budget = prsma_per_round(Fraction(1), delta, 2)
    assert [(e["mechanism"], Fraction(e["epsilon"]), Fraction(e["delta"])) for e in rep.ledger] == \
        [("prsma", budget.epsilon, budget.delta)] * 2
    assert all(e["note"].endswith("exact-oracle law") and e["relation"] == "replace-one" for e in rep.ledger)
    assert rep.epsilon_spent <= 1 and rep.delta_spent <= 1e-7
    with pytest.raises(InputError, match=r"K > n.*pass rounds=16 or fewer"):
        synthdp.generate_synthetic(df, "marginals:2", rounds=300, **opts)
    with pytest.raises(InputError, match="replace-one"):
        synthdp.generate_synthetic(df, "marginals:2", rounds=2, **dict(opts, relation="add-remove"))


def test_each_call_is_a_new_release_and_says_so(demo):
    """A second fit warns that it spends again; the docstrings and the summary say that a call is a release."""
    df, schema = demo
    synth = synthdp.Synthesizer("marginals:1", epsilon=1, delta=1e-6, schema=schema, random_state=0, progress=False)
    synth.fit(df.head(200))
    with pytest.warns(UserWarning, match="new release that spends the budget again"):
        synth.fit(df.head(200))
    assert "each run is a new release" in synth.report_.summary()
    for doc in (synthdp.generate_synthetic.__doc__, synthdp.Synthesizer.fit.__doc__):
        assert "new release" in " ".join(doc.split()) and "sample" in doc


def test_generate_synthetic_docstring_describes_both_methods_and_every_parameter():
    import inspect

    doc = synthdp.generate_synthetic.__doc__
    assert "select-measure-estimate" in doc and "synthetic-data game" in doc
    missing = [p for p in inspect.signature(synthdp.generate_synthetic).parameters if f"``{p}" not in doc]
    assert missing == [], missing


class _EngineThatBoundsAsItCounts:
    """A counting engine of another name that leaves the rows whole and bounds units on each pass (as a cluster
    does): the driver must run it through the engine protocol alone."""

    name = "counts-as-it-bounds"
    needs_public_schema = False

    def __init__(self):
        from synthdp.engines.pandas import PandasEngine
        self.inner, self.passes = PandasEngine(), []

    def read(self, source):
        return self.inner.read(source)

    def prepare(self, source, bounding=None):
        from synthdp.engines.rows import Rows
        prepared = self.inner.prepare(source)
        return Rows(prepared.source, bounding, prepared.stripped)

    def tally(self, source, schema, bounding=None):
        self.passes.append(("tally", bounding is not None))
        return self.inner.tally(source, schema, bounding=bounding)

    def count(self, source, schema, bounding=None):
        self.passes.append(("count", bounding is not None))
        return self.inner.count(source, schema, bounding=bounding)


def test_an_engine_that_bounds_units_on_each_pass_gives_the_release_of_bounding_when_read():
    """The driver reads, bounds, tallies and counts through the engine protocol only (no test of the engine's
    name): an engine that keeps at most k rows per unit on each pass, rather than once when the rows are read,
    gives the same release and table for the same seed (the same rows kept, docs/privacy.md §10.6)."""
    from synthdp.api import synthesize
    from synthdp.config import SynthesisConfig

    rng = np.random.default_rng(0)
    n = 6000
    df = pd.DataFrame({"person": rng.integers(0, 2000, n).astype(str), "city": rng.choice(["a", "b", " c"], n),
                       "age": rng.integers(18, 90, n)})
    schema = Schema.from_dataframe(df.drop(columns=["person"]), categories={"city": ["a", "b", "c"]},
                                           learn_bounds=["age"])  # public: the engine need not hold the rows
    options = dict(query_class="marginals:2", epsilon=2.0, delta=1e-9, random_state=0, progress=False,
                   privacy_unit="person", max_rows_per_unit=2, schema=schema)
    engine = _EngineThatBoundsAsItCounts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = synthesize(df, SynthesisConfig(**options))
        passes = synthesize(df, SynthesisConfig(**options), engine=engine)
    assert engine.passes == [("tally", True), ("count", True)]
    assert passes.report.release.to_dict() == whole.report.release.to_dict()
    pd.testing.assert_frame_equal(passes.data, whole.data)


def _rare_grades(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """Grades 1..5 and two values too rare for partition selection to keep (0.2% of the rows), nothing missing."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"grade": rng.choice(["1", "2", "3", "4", "5", "x", "y"], n,
                                             p=[.3, .3, .2, .1, .098, .001, .001]),
                         "zip": rng.choice(["12345", "23456"], n)})


def test_the_release_states_where_values_outside_the_learned_categories_go():
    run = dict(epsilon=1.0, delta=1e-9, random_state=0, progress=False)
    plain = synthdp.generate_synthetic(_rare_grades(), **run)
    assert "values outside the learned categories come back missing (other='other'" in plain.report.summary()
    labelled = synthdp.generate_synthetic(_rare_grades(), **run, other="other")
    assert "come back as the public label 'other'" in labelled.report.plan["domains"]["reason"]
    assert labelled.schema["grade"].categories == ("1", "2", "3", "4", "5", "other")
    assert not labelled.schema["grade"].missing and not labelled.data.isna().any().any()  # none had missing values
    counted = synthdp.generate_synthetic(_rare_grades(), **run, other="other", method="game", rounds=2)
    assert counted.schema["grade"].categories[-1] == "other"
    real = Encoder(labelled.schema).encode(_rare_grades())[:, 0]  # the rows the model counts
    assert (real == labelled.schema["grade"].code_of["other"]).sum() == 10  # x and y: 'other', no longer missing
    assert not (real == labelled.schema["grade"].missing_code).any()


def test_with_an_other_label_a_learned_column_is_missing_only_as_declared():
    df = _rare_grades()
    df.loc[[3, 9], "grade"] = None
    refused = r"column 'grade' has a missing value in row 3.*nullable=\['grade'\]"
    with pytest.raises(SchemaError, match=refused) as caught:
        synthdp.generate_synthetic(df, epsilon=1.0, delta=1e-9, progress=False, other="other")
    assert "This refusal came after" not in str(caught.value)
    result = synthdp.generate_synthetic(df, epsilon=1.0, delta=1e-9, random_state=0, progress=False, other="other",
                                        nullable=["grade"])
    assert result.schema["grade"].missing and not result.schema["zip"].missing


def test_an_other_label_that_does_not_read_in_the_declared_type_is_refused_before_any_charge():
    with pytest.raises(SchemaError, match="other label 'other' of column 'grade' cannot be read as .* int64") as caught:
        synthdp.generate_synthetic(_rare_grades(), epsilon=1.0, delta=1e-9, progress=False, other="other",
                                   dtypes={"grade": "int64"})
    assert "This refusal came after" not in str(caught.value)
