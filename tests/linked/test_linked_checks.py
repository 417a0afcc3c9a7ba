"""The owner's checks of a linked release read the tables it returns (docs/privacy.md §12 step 4): each view's
self-check, comparison with the real rows and ``rows_written`` are those of the pair drawn from both models, never
of a draw of the view's own that is thrown away."""

import pandas as pd
import pytest

from synthdp import api

from tests.linked.test_linked_fit import fit, make_pair


@pytest.fixture
def checked(monkeypatch):
    """Every frame the release's self-check and the owner's comparison read, in order."""
    seen = {"release": [], "owner": []}
    check_release, tell_owner = api.check_release, api.tell_owner
    monkeypatch.setattr(api, "check_release", lambda data, *a, **kw: seen["release"].append(data.copy())
                        or check_release(data, *a, **kw))
    monkeypatch.setattr(api, "tell_owner", lambda rows, real, data, *a: seen["owner"].append(data.copy())
                        or tell_owner(rows, real, data, *a))
    return seen


def test_each_view_s_checks_read_that_view_of_the_tables_returned(checked):
    result = fit(make_pair())
    customers, orders = result.tables["customers"], result.tables["orders"]
    for seen in checked.values():
        parents, children = seen
        pd.testing.assert_frame_equal(parents.drop(columns=["n_orders"]), customers.drop(columns=["cid"]))
        assert parents["n_orders"].tolist() == orders.groupby("cid").size().reindex(customers["cid"],
                                                                                    fill_value=0).tolist()
        assert children["item"].tolist() == orders["item"].tolist()
        assert children["customers.region"].tolist() == orders["cid"].map(customers.set_index("cid")["region"]).tolist()


def test_rows_written_are_the_tables_rows():
    result = fit(make_pair(), n_rows=80)
    views = result.report.to_dict()["views"]
    assert views["parent"]["rows_written"] == len(result.tables["customers"]) == 80
    assert views["joined"]["rows_written"] == len(result.tables["orders"])
    assert result.model.joined.release["rows_written"] == len(result.tables["orders"])
