"""The quality report of two linked tables: children per parent by hand, the strongest parent x child pairs, the
synthetic keys checked, the page, the refusals, and ``synthdp evaluate --link``."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.cli import main
from synthdp.core.errors import InputError
from synthdp.quality import OWNER_ONLY, LinkedQualityReport, quality_report

LINKS = {"orders.cid": "customers.cid"}


def _tiny() -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Real: keys 1..4 and one missing, children 1,1,1,2,2 and two orphans (9, missing): families 3,2,0,0,0.
    Synthetic: children 1,1,2,3 of parents 1..4: families 2,1,1,0."""
    real = {"customers": pd.DataFrame({"cid": [1, 2, 3, 4, None], "a": list("xyxyx")}),
            "orders": pd.DataFrame({"cid": [1, 1, 1, 2, 2, 9, None], "b": [1.0, 2, 3, 4, 5, 6, 7]})}
    synthetic = {"customers": pd.DataFrame({"cid": [1, 2, 3, 4], "a": list("xyxy")}),
                 "orders": pd.DataFrame({"cid": [1, 1, 2, 3], "b": [1.0, 2, 3, 4]})}
    return real, synthetic


def test_children_per_parent_by_hand_against_the_real_and_the_bounded_pair():
    real, synthetic = _tiny()
    report = synthdp.quality_report(real, synthetic, links=LINKS, max_rows_per_unit=2)
    assert isinstance(report, LinkedQualityReport)
    counts = report.link.counts
    assert counts.labels == ("0", "1", "2", "3")
    assert counts.real == pytest.approx((3 / 5, 0, 1 / 5, 1 / 5))
    assert counts.bounded == pytest.approx((3 / 5, 0, 2 / 5, 0))  # the family of 3 keeps 2
    assert counts.synthetic == pytest.approx((1 / 4, 2 / 4, 1 / 4, 0))
    # TVD: (|1/4 - 3/5| + |1/2 - 0| + |1/4 - 1/5| + |0 - 1/5|) / 2 and (|1/4 - 3/5| + 1/2 + |1/4 - 2/5|) / 2
    assert counts.tvd == pytest.approx(0.55) and counts.bounded_tvd == pytest.approx(0.5)
    assert (counts.real_mean, counts.synthetic_mean) == pytest.approx((1.0, 1.0))
    real_keys = report.link.integrity["real"]
    assert (real_keys.children, real_keys.broken, real_keys.examples, real_keys.missing_keys) == (
        7, 2, ("9", "(missing)"), 1)
    assert report.link.integrity["synthetic"].holds and report.link.warnings() == []
    assert [s.column for s in report.tables["orders"].shapes] == ["b"]  # the keys are not compared


def test_without_k_only_the_real_pair_and_k_comes_from_the_linked_release():
    real, synthetic = _tiny()
    report = quality_report(real, synthetic, links=LINKS)
    assert report.link.counts.bounded is None and report.link.counts.bounded_tvd is None
    release = {"tables": ["customers", "orders"], "epsilon_spent": 1.0, "epsilon_budget": 1.0,
               "max_rows_per_unit": 2, "views": {}}
    assert quality_report(real, synthetic, release=release, links=LINKS).link.counts.bounded_tvd == pytest.approx(0.5)


def _dependent(seed: int, child_follows: str) -> dict[str, pd.DataFrame]:
    """Customers (region, size, age) and their orders (category, amount): ``child_follows`` says which parent
    column one child column copies (region -> category, or size -> amount); the others are independent."""
    rng = np.random.default_rng(seed)
    n = 600
    region, size, age = rng.choice(list("nsew"), n), rng.normal(size=n), rng.uniform(18, 80, n)
    per = rng.integers(1, 4, n)
    owner = np.repeat(np.arange(n), per)
    category = region[owner] if child_follows == "region" else rng.choice(list("nsew"), len(owner))
    amount = size[owner] * 10 + 50 if child_follows == "size" else rng.normal(50, 10, len(owner))
    return {"customers": pd.DataFrame({"cid": np.arange(n) + 100, "region": region, "size": size, "age": age}),
            "orders": pd.DataFrame({"cid": owner + 100, "category": category, "amount": amount})}


def _binned_tvd(real: pd.DataFrame, synthetic: pd.DataFrame, first: str, second: str) -> float:
    """The TVD of two number columns' two-way tables, both cut at the real deciles (brute force)."""
    def cells(table):
        codes = [np.searchsorted(np.quantile(real[c], np.arange(1, 10) / 10), table[c], side="right")
                 for c in (first, second)]
        return pd.Series(list(zip(*codes))).value_counts(normalize=True)
    a, b = cells(real), cells(synthetic)
    return 0.5 * sum(abs(a.get(c, 0) - b.get(c, 0)) for c in set(a.index) | set(b.index))


def test_the_strongest_pairs_are_the_real_ones_and_compared_on_real_quantile_bins():
    real, synthetic = _dependent(0, "region"), _dependent(1, "size")  # the synthetic pair links the wrong columns
    report = quality_report(real, synthetic, links=LINKS)
    pairs = report.link.pairs
    assert len(pairs) == 3 * 2
    assert (pairs[0].parent_column, pairs[0].child_column) == ("customers.region", "orders.category")
    assert pairs[0].real_association == pytest.approx(1.0) and pairs[0].synthetic_association < 0.15
    assert all(p.real_association < 0.15 for p in pairs[1:])
    assert [p.real_association for p in pairs] == sorted((p.real_association for p in pairs), reverse=True)
    assert report.link.tables[0].columns == ("customers.region", "orders.category")
    size_amount = next(p for p in pairs if p.child_column == "orders.amount" and p.parent_column == "customers.size")
    # by far the strongest in the synthetic pair, yet ranked below the real pair's strongest
    assert size_amount.synthetic_association > pairs[0].synthetic_association + 0.5

    def joined(tables):
        merged = tables["orders"].merge(tables["customers"], on="cid")
        return merged.rename(columns={"size": "customers.size", "amount": "orders.amount"})
    assert size_amount.tvd == pytest.approx(_binned_tvd(joined(real), joined(synthetic), "customers.size",
                                                        "orders.amount"))


def test_a_broken_synthetic_key_is_flagged_on_the_page_and_in_the_summary(tmp_path):
    real, synthetic = _tiny()
    synthetic["orders"].loc[3, "cid"] = 99
    alone = quality_report(real, synthetic, links=LINKS)  # one child of no parent, nothing else wrong
    assert not alone.link.integrity["synthetic"].holds and "BROKEN" in alone.summary()
    synthetic["customers"].loc[1, "cid"] = 1  # key 1 held twice, key 2 gone
    report = quality_report(real, synthetic, links=LINKS)
    check = report.link.integrity["synthetic"]
    assert (check.broken, check.examples, check.duplicate_keys, check.holds) == (2, ("2", "99"), 1, False)
    assert any("2 of 4 synthetic rows match no customers.cid" in w for w in report.warnings)
    assert "BROKEN" in report.summary()
    report.to_html(tmp_path / "pair.html")
    page = (tmp_path / "pair.html").read_text(encoding="utf-8")
    keys = page[page.index('<div id="integrity">'):]
    keys = keys[:keys.index("</table>")]
    assert "<td>synthetic</td><td>NO</td>" in keys and "<td>real</td><td>yes</td>" not in keys  # real has orphans


def test_the_page_holds_the_link_and_both_tables_once_each(tmp_path):
    real, synthetic = _dependent(0, "region"), _dependent(1, "region")
    report = quality_report(real, synthetic, links=LINKS, max_rows_per_unit=2)
    report.to_html(tmp_path / "pair.html")
    page = (tmp_path / "pair.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.index(OWNER_ONLY) < page.index("<h1>")
    assert page.rstrip().endswith(f'<p class="owner">{OWNER_ONLY}.</p></body></html>')
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and {"customers-score", "orders-score", "integrity",
                                           "children-per-parent"} <= set(ids)
    for heading in ("<h2>Table customers</h2>", "<h2>Table orders</h2>", "<h2>The link</h2>",
                    "real, at most 2 kept", "customers.region x orders.category, real"):
        assert page.count(heading) == 1, heading
    assert page.count('<figure class="column"') == 3 + 2  # region, size, age; category, amount: no keys
    data = report.to_dict()
    assert data["warning"] == OWNER_ONLY and json.loads(json.dumps(data)) == data
    assert data["children_per_parent"]["k"] == 2 and set(data["tables"]) == {"customers", "orders"}


@pytest.mark.parametrize("change, message", [
    (lambda r, s: s.pop("orders"), "the synthetic tables are ['customers'] and the real ones"),
    (lambda r, s: s.update(orders=s["orders"].drop(columns="cid")), "the synthetic table 'orders' has no column 'cid'"),
    (lambda r, s: s.update(orders=s["orders"].drop(columns="b")), "table 'orders': the synthetic table lacks"),
    (lambda r, s: r.update(orders=r["orders"].rename(columns={"cid": "c"})),
     "links: table 'orders' has no column 'cid'"),
])
def test_refusals_name_the_table_and_the_column(change, message):
    real, synthetic = _tiny()
    change(real, synthetic)
    with pytest.raises(InputError, match=re.escape(message)):
        quality_report(real, synthetic, links=LINKS)


@pytest.mark.parametrize("kwargs, message", [
    (dict(target="b"), "target compare one table"),
    (dict(max_rows_per_unit=0), "max_rows_per_unit must be a whole number"),
    (dict(release={"epsilon_spent": 1.0}), "the release is one table's"),
    (dict(release={"epsilon_spent": 1.0, "tables": [], "max_rows_per_unit": 3}, max_rows_per_unit=2),
     "max_rows_per_unit=2 but the release kept at most 3"),
    (dict(schema={"nope": None}), "schema= for two tables is a dict"),
])
def test_refused_options_of_two_tables(kwargs, message):
    real, synthetic = _tiny()
    with pytest.raises(InputError, match=re.escape(message)):
        quality_report(real, synthetic, links=LINKS, **kwargs)


def test_one_table_refuses_the_options_of_two():
    real, synthetic = _tiny()
    with pytest.raises(InputError, match="describe two linked tables"):
        quality_report(real["orders"], synthetic["orders"], max_rows_per_unit=2)


@pytest.fixture
def pair(tmp_path):
    for side, seed in (("real", 0), ("out", 1)):
        (tmp_path / side).mkdir()
        for name, table in _dependent(seed, "region").items():
            table.to_csv(tmp_path / side / f"{name}.csv", index=False)
    return tmp_path


def _evaluate(folder, *extra):
    return main(["evaluate", str(folder / "real" / "customers.csv"), str(folder / "real" / "orders.csv"),
                 "--synthetic", str(folder / "out"), *extra])


def test_evaluate_writes_the_page_and_the_json_of_the_pair(pair, capsys):
    html, out = pair / "pair.html", pair / "pair.json"
    assert _evaluate(pair, "--link", "orders.cid=customers.cid", "--max-rows-per-unit", "2", "--html", str(html),
                     "--json", str(out)) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(OWNER_ONLY) and "every synthetic foreign key is a parent's key" in printed
    assert "strongest parent x child pair customers.region x orders.category" in printed
    assert "<h2>Table orders</h2>" in html.read_text(encoding="utf-8")
    assert json.loads(out.read_text(encoding="utf-8"))["children_per_parent"]["k"] == 2


@pytest.mark.parametrize("extra, message", [
    (["--link", "orders.customer=customers.cid"], "links: table 'orders' has no column 'customer'"),
    (["--link", "orders.cid=clients.cid"], "names table 'clients', which is not among the tables"),
    ([], "two tables need --link CHILD.COLUMN=PARENT.COLUMN and --synthetic DIR"),
    (["--link", "orders.cid=customers.cid", "--plot", "e.png"], "--plot compare one table"),
    (["--link", "orders.cid=customers.cid", "--categorical", "age"], "--categorical compare one table"),
])
def test_evaluate_refuses_a_bad_link_or_a_one_table_option(pair, capsys, extra, message):
    assert _evaluate(pair, *extra, "--html", str(pair / "pair.html")) == 2
    assert message in capsys.readouterr().err
    assert not (pair / "pair.html").exists()


def test_evaluate_refuses_a_missing_synthetic_table_and_never_overwrites(pair, capsys):
    link = ["--link", "orders.cid=customers.cid"]
    (pair / "out" / "orders.csv").rename(pair / "orders.csv")
    assert _evaluate(pair, *link) == 2
    err = capsys.readouterr().err
    assert "no synthetic table" in err and "orders.csv" in err
    (pair / "orders.csv").rename(pair / "out" / "orders.csv")
    (pair / "pair.html").write_text("mine", encoding="utf-8")
    assert _evaluate(pair, *link, "--html", str(pair / "pair.html")) == 2
    assert "nothing is overwritten" in capsys.readouterr().err
    assert (pair / "pair.html").read_text(encoding="utf-8") == "mine"
