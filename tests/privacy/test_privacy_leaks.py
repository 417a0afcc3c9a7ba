"""Nothing data-dependent may leave the game outside the accounted mechanisms (privacy audit).

PRSMA's per-piece failure flags ``f_i`` are released only through the noisy
count test (docs/privacy.md §3.2 steps 3-5).  The game's oracle
statistics go into the published report and the progress bar, so they must
not carry PRSMA's failure count or its (failure-dependent) number of calls.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from synthdp.oracles import get_oracle
from adversarial_oracle import AdversarialOracle, fails_on_record
from synthdp.oracles.base import Limits
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions
from synthdp.accounting.ledger import Ledger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.methods.game.algorithm import FTPLDataPlayer, OracleStats, play_game
from synthdp.methods.game.players import PRSMAPlayer
from synthdp.mechanisms.randomness import PrivateRandom

DOMAIN = Domain(("a",), (3,))
QC = ComplementClosed(Conjunctions.marginals(DOMAIN, 1))


def _published_query_stats(codes: list[list[int]]) -> dict:
    """The query-oracle statistics a one-round PRSMA game hands to the report (K = 3, R = 322)."""
    eps, delta = Fraction(40), Fraction(1, 2)  # generous, so that K * R stays small
    rng = PrivateRandom(0)
    oracle = AdversarialOracle(fail=fails_on_record([2]))  # stateless, aimed at the holder of record 2
    player = PRSMAPlayer(QC, oracle, eps, delta, rng, Ledger(eps, delta), Limits(), 10**4)
    data_player = FTPLDataPlayer(QC, get_oracle("brute"), resolution=10, scale=1.0, rng=rng.numpy_generator(),
                                 limits=Limits(), stats=OracleStats())
    real = AggregatedData.from_codes(DOMAIN, np.array(codes))
    result = play_game(real, rounds=1, samples_per_round=2, query_player=player, data_player=data_player,
                       progress=False)
    return {name: (s.calls, s.failures) for name, s in result.query_stats.items()}


def test_prsma_failure_flags_do_not_reach_the_report():
    with_target = _published_query_stats([[0], [1], [0], [1], [0], [1], [0], [1], [2]])
    neighbour = _published_query_stats([[0], [1], [0], [1], [0], [1], [0], [1], [0]])
    # Before the fix: {'adversarial': (645, 1)} against {'adversarial': (966, 0)}, i.e. the exact f.
    assert with_target == neighbour
    assert all(failures == 0 for _, failures in with_target.values())


def test_add_remove_delta_check_does_not_reveal_n(demo):
    """Under add/remove n is private (docs/privacy.md §4.1): no abort and no message may depend on it."""
    import synthdp

    df, schema = demo
    big = 1.5 / len(df)  # above 1/n, below 1
    res = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=big, schema=schema, random_state=0,
                                     rounds=2, samples_per_round=3, progress=False, query_player="exponential")
    assert res.report.delta_spent <= big


def _neighbouring_tables() -> tuple["pd.DataFrame", "pd.DataFrame"]:
    """D (300 rows, integer columns) and D plus one record whose entries are all missing."""
    import pandas as pd

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(17, 91, 300), "kids": rng.integers(0, 4, 300),
                          "city": rng.choice(["Oslo", "Rome"], 300)})
    neighbour = pd.concat([table, pd.DataFrame({"age": [np.nan], "kids": [np.nan], "city": [None]})],
                          ignore_index=True)
    assert str(table["kids"].dtype) == "int64" and str(neighbour["kids"].dtype) == "float64"
    return table, neighbour


def test_output_types_do_not_depend_on_a_missing_entry():
    """The missing-entry leak: D and D plus one record with missing entries, same seed, public schema options: every
    released field is the same (values, dtypes, CSV text, the release report). Before the fix the output type
    came from pandas' dtype of the private column (``2`` against ``2.0``)."""
    import pandas as pd

    import synthdp

    options = dict(bounds={"age": (17, 90)}, categories={"kids": [0, 1, 2, 3], "city": ["Oslo", "Rome"]},
                   nullable=["age", "kids", "city"], epsilon=1.0, delta=1e-6, random_state=3, rounds=4,
                   samples_per_round=5, progress=False, query_player="exponential")
    for numeric in ("label", "uniform"):
        first, second = (synthdp.generate_synthetic(d, "marginals:2", numeric=numeric, **options)
                         for d in _neighbouring_tables())
        pd.testing.assert_frame_equal(first.data, second.data)
        assert first.data.to_csv(index=False) == second.data.to_csv(index=False)
        assert first.report.to_dict() == second.report.to_dict()
        assert str(first.data["kids"].dtype) == "Int64"


def test_a_new_value_in_one_record_leaves_the_release_unchanged():
    """The rare-value leak, docs/privacy.md §9: D and D plus one record holding a value no other record has, same
    seed, domains learned by partition selection. The new value is encoded as missing before the game sees the
    data, so it never reaches the output; its own release is the rare event (probability at most delta_p; here
    its noise draw, the last of its column, falls short). Every released field is compared."""
    import pandas as pd

    import synthdp

    rng = np.random.default_rng(1)
    table = pd.DataFrame({"city": rng.choice(["Oslo", "Rome", "Lima"], 3000, p=[0.5, 0.3, 0.2]),
                          "kids": rng.integers(0, 3, 3000)})
    neighbour = pd.concat([table, pd.DataFrame({"city": ["Zurich"], "kids": [1]})], ignore_index=True)
    options = dict(categories={"kids": [0, 1, 2]}, epsilon=1.0, delta=1e-6, random_state=5, rounds=3,
                   samples_per_round=5, progress=False, query_player="exponential")
    first, second = (synthdp.generate_synthetic(d, "marginals:2", **options) for d in (table, neighbour))
    assert first.report.plan["domains"]["value"] == ["city"]
    assert [e["mechanism"] for e in first.report.ledger][:1] == ["partition-selection"]
    assert "Zurich" not in set(second.data["city"].dropna())
    pd.testing.assert_frame_equal(first.data, second.data)
    assert first.data.to_csv(index=False) == second.data.to_csv(index=False)
    assert first.report.to_dict() == second.report.to_dict()


def test_reading_categories_off_the_data_is_an_explicit_opt_in_marked_in_the_release():
    """An ID-like column: by default nothing of it is released; with the unsafe opt-in its values are, and the
    release says the run is NOT differentially private."""
    import pandas as pd

    import synthdp

    table = pd.DataFrame({"id": [f"p{i}" for i in range(400)], "kids": [i % 3 for i in range(400)]})
    options = dict(categories={"kids": [0, 1, 2]}, epsilon=1.0, delta=1e-6, random_state=0, rounds=2,
                   samples_per_round=5, progress=False, query_player="exponential")
    private = synthdp.generate_synthetic(table, "marginals:1", **options)
    assert private.data["id"].isna().all() and not any("NOT DIFFERENTIALLY" in w for w in private.report.warnings)
    with pytest.warns(Warning, match="NOT DIFFERENTIALLY PRIVATE"):
        unsafe = synthdp.generate_synthetic(table, "marginals:1", unsafe_public_categories=True, max_categories=400,
                                            **options)
    assert set(unsafe.data["id"]) <= set(table["id"]) and unsafe.data["id"].notna().all()
    assert any(w.startswith("NOT DIFFERENTIALLY PRIVATE") for w in unsafe.report.to_dict()["warnings"])


def test_cli_learns_domains_by_default_and_names_the_unsafe_opt_in(tmp_path, capsys):
    import pandas as pd

    from synthdp.cli import main

    source = tmp_path / "in.csv"
    pd.DataFrame({"id": [f"p{i}" for i in range(400)], "kids": [i % 3 for i in range(400)]}).to_csv(source, index=False)
    common = [str(source), "--epsilon", "1", "--categorical", "kids", "--queries", "marginals:1", "--rounds", "2",
              "--seed", "0", "-q"]
    assert main(["generate", *common, "-o", str(tmp_path / "private.csv"), "--delta", "1e-6"]) == 0
    assert pd.read_csv(tmp_path / "private.csv")["id"].isna().all()
    assert main(["generate", *common, "-o", str(tmp_path / "pure.csv")]) == 2
    assert "needs delta > 0" in capsys.readouterr().err and not (tmp_path / "pure.csv").exists()
    assert main(["generate", *common, "-o", str(tmp_path / "unsafe.csv"), "--unsafe-public-categories",
                 "--max-categories", "400"]) == 0
    assert "warning: NOT DIFFERENTIALLY PRIVATE" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "unsafe.csv")["id"].str.startswith("p").all()


@pytest.mark.parametrize("method", ["measure", "game"])
def test_no_raw_private_value_reaches_the_report_the_logs_or_the_warnings(caplog, recwarn, method):
    """docs/privacy.md §10.1: the release report and the logs (at INFO, above the CLI's default WARNING) never
    quote a raw private value: not a value one record holds in a learned column, not a numeric value (only bins
    of the public bounds), not the spaces stripped off a text value."""
    import logging

    import pandas as pd

    import synthdp

    rng = np.random.default_rng(2)
    table = pd.DataFrame({"city": rng.choice(["Oslo", "Rome"], 800), "age": rng.integers(20, 60, 800).astype(float),
                          "kids": rng.integers(0, 3, 800)})
    table.loc[3] = ["Zxqvine", 61.73, 1]
    table.loc[4, "city"] = "  Rome  "
    game = dict(rounds=3, samples_per_round=5) if method == "game" else {}
    with caplog.at_level(logging.INFO, logger="synthdp"):
        result = synthdp.generate_synthetic(table, "marginals:2", method=method, epsilon=1.0, delta=1e-6,
                                            random_state=3, progress=False, categories={"kids": [0, 1, 2]},
                                            bounds={"age": (0.0, 100.0)}, bins={"age": 5}, **game)
    said = "\n".join([str(result.report.to_dict()), result.report.summary(), caplog.text,
                      *(str(w.message) for w in recwarn)])
    for secret in ("Zxqvine", "61.73", "  Rome"):
        assert secret not in said, secret
    assert "Zxqvine" not in set(result.data["city"].dropna())
