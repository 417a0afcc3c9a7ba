"""The real-pair bench's scoring on a tiny constructed pair, its flattened table, and its skip without the files."""

import pandas as pd
import pytest

from synthdp.bench import linked_real
from synthdp.linked.links import Link

LINK = Link("visits", "pid", "people", "pid")


def make_pair(k: int = 3) -> linked_real.Pair:
    """Four people (a: x, y, x, y) with 3, 1, 0 and 0 visits: visit c follows a, d is a number; keys not 1..N."""
    people = pd.DataFrame({"pid": [10, 20, 30, 40], "a": ["x", "y", "x", "y"]})
    visits = pd.DataFrame({"pid": [10, 10, 10, 20], "c": ["u", "u", "v", "w"], "d": [1.0, 2.0, 3.0, 4.0]})
    return linked_real.Pair("tiny", {"people": people, "visits": visits}, LINK, k,
                            {"categories": {"people": {"a": ["x", "y"]}}, "bounds": {"visits": {"d": (0, 10)}},
                             "nullable": {"visits": ["d"]}})


def rekeyed(tables: dict[str, pd.DataFrame], m: list[int], children: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """A synthetic pair as a linked release gives it: parents keyed 1..N, ``m[i]`` of ``children`` each."""
    people = tables["people"].assign(pid=range(1, len(m) + 1))
    owners = [i + 1 for i, count in enumerate(m) for _ in range(count)]
    return {"people": people, "visits": children.assign(pid=owners)}


def test_a_pair_scored_against_itself_has_no_error_and_its_keys_hold():
    real = linked_real.bounded(make_pair())
    synthetic = rekeyed(real, [3, 1, 0, 0], real["visits"])
    s = linked_real.score_linked(real, synthetic, LINK)
    assert (s.children_per_parent, s.pairs_mean, s.pairs_max, s.parent_1way, s.parent_2way, s.child_1way,
            s.child_2way) == (0, 0, 0, 0, 0, 0, 0)
    assert s.keys_ok is True


def test_children_per_parent_and_the_pairs_measure_what_moved():
    real = linked_real.bounded(make_pair())
    # counts 3, 1, 0, 0 -> 2, 2, 0, 0: shares {0: .5, 1: .25, 3: .25} -> {0: .5, 2: .5}, TVD 0.5
    s = linked_real.score_linked(real, rekeyed(real, [2, 2, 0, 0], real["visits"]), LINK)
    assert s.children_per_parent == pytest.approx(0.5)
    # the visits of the x person (u, u, v) and the y person (w): half a v moves to y, so a x c is off by 1/4
    assert s.pairs_max == pytest.approx(0.25) and s.child_1way == 0
    # one visit's d moved from 1 to 2: a x d is off by 1/4, a x c not at all
    moved = rekeyed(real, [3, 1, 0, 0], real["visits"].assign(d=[2.0, 2.0, 3.0, 4.0]))
    s = linked_real.score_linked(real, moved, LINK)
    assert (s.pairs_max, s.pairs_mean, s.child_1way) == pytest.approx((0.25, 0.125, 0.125))
    assert linked_real.score_linked(real, real, LINK).keys_ok is False  # the real keys are not 1..N
    broken = rekeyed(real, [3, 1, 0, 0], real["visits"])
    broken["visits"].loc[0, "pid"] = 99
    assert linked_real.score_linked(real, broken, LINK).keys_ok is False


def test_bounding_keeps_k_children_a_parent():
    real = linked_real.bounded(make_pair(k=2))
    assert real["visits"]["pid"].value_counts().to_dict() == {"10": 2, "20": 1}
    assert list(real["people"]["pid"]) == ["10", "20", "30", "40"]


def test_the_flattened_table_counts_a_parent_once_per_child():
    pair = make_pair()
    flat = linked_real.flatten(pair.tables, LINK)
    assert list(flat.columns) == ["people.a", "visits.pid", "visits.c", "visits.d"]
    assert linked_real.unit_column(LINK) == "visits.pid" and len(flat) == 4
    s = linked_real.score_flattened(linked_real.bounded(pair), flat.drop(columns=["visits.pid"]), LINK)
    assert (s.pairs_max, s.child_1way, s.child_2way) == (0, 0, 0)
    # its parent side is x, x, x, y (one per visit) against the people's x, y, x, y: TVD 1/4
    assert s.parent_1way == pytest.approx(0.25)
    assert s.children_per_parent is None and s.keys_ok is None


def test_the_public_domain_is_renamed_for_the_flattened_table():
    assert linked_real.flat_public(make_pair().public) == {
        "categories": {"people.a": ["x", "y"]}, "bounds": {"visits.d": (0, 10)}, "nullable": ["visits.d"]}


def test_without_the_variable_the_real_pair_is_skipped_with_how_to_make_it(monkeypatch, capsys):
    monkeypatch.delenv(linked_real.TABLES_ENV, raising=False)
    linked_real.main(["--pairs", "star", "--seeds", "0", "1"])
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [linked_real.skip_message()]
    assert out[1].startswith(f"{linked_real.TABLES_ENV} is not set") and "star_parent.csv" in out[1]


def test_a_folder_without_the_files_is_refused_naming_them(monkeypatch, tmp_path):
    monkeypatch.setenv(linked_real.TABLES_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="star_parent.csv, .*star_child.csv missing"):
        linked_real.PAIRS["star"](0)


def test_the_real_pair_fits_its_public_domain_and_k():
    """The public facts were not read off the rows, but must hold them: every category is listed, every score is
    within its bounds and no student has more than k records (so bounding cuts nothing)."""
    if not linked_real.tables_folder():
        pytest.skip(f"{linked_real.TABLES_ENV} is not set")
    pair = linked_real.PAIRS["star"](0)
    for table, given in pair.public["categories"].items():
        for column, categories in given.items():
            assert set(pair.tables[table][column].dropna()) <= set(categories), column
    for column, (low, high) in pair.public["bounds"]["grades"].items():
        assert pair.tables["grades"][column].dropna().between(low, high).all(), column
    assert pair.tables["grades"]["id"].value_counts().max() <= pair.k
    assert len(pair.tables["students"]) >= 1_000
