"""generate_synthetic / Synthesizer: privacy bookkeeping, determinism, accuracy trend, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.encoding import Encoder
from synthdp.errors import InputError, SchemaError
from synthdp.evaluate import marginal_errors

FAST = dict(rounds=8, samples_per_round=10, progress=False)


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
    assert len(res.data) == 8 * 10 and list(res.data.columns) == list(df.columns)
    assert rep.query_player == player


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
    from datasets import load_coded

    df, schema = load_coded("nltcs")
    res = synthdp.generate_synthetic(df, "marginals:3", epsilon=1.0, delta=1e-9, schema=schema, random_state=0,
                                     rounds=10, samples_per_round=20, progress=False)
    assert res.data.shape == (200, 16)
    assert set(np.unique(res.data.to_numpy())) <= {0, 1}
    assert _max_error(df, schema, res.data, k=3) < 0.5


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0), "epsilon must be a finite number > 0"),
    (dict(epsilon=-1), "epsilon"),
    (dict(epsilon=math.inf), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon=1, delta=0), "delta must be in"),
    (dict(epsilon=1, delta=1.5), "delta"),
    (dict(epsilon=1, delta=0.01, relation="replace-one"), "larger than 1/n"),  # n is public only here
    (dict(epsilon=1, query_player="magic"), "unknown query player"),
    (dict(epsilon=1, oracle="gurobi"), "unknown oracle"),
    (dict(epsilon=1, rounds=0), "rounds"),
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
        res = synthdp.generate_synthetic(df, "marginals:2", epsilon=5, random_state=0, **FAST)
    assert set(res.data["a"].dropna()) <= {"x", "y"}
    assert res.report.warnings, "reading categories off the data must be reported"
