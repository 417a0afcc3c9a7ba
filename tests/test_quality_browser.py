"""The quality page in a real browser: headless Chromium draws it, every column's picture has a size.

Skipped, with the reason, where no Chromium is installed (Debian: ``apt-get install chromium``; ``.ci/run``
installs it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from synthdp.evaluation.html import REAL, SYNTHETIC
from synthdp.quality import quality_report

#: Seconds one Chromium run may take (a loaded machine is slow to start it).
BROWSER_SECONDS = 180
#: A probe appended to a copy of the page (never to the page itself, which has no script): each column
#: picture's drawn size and its bars drawn with a height, by table, written into the document for --dump-dom.
_PROBE = """<pre id="probe"></pre><script>
document.getElementById("probe").textContent = JSON.stringify(Array.from(
  document.querySelectorAll("figure.column")).map(f => {
    const r = f.querySelector("svg").getBoundingClientRect();
    const bars = Array.from(f.querySelectorAll("svg rect")).filter(
      b => b.querySelector("title") && b.getBoundingClientRect().height > 0.5);
    return {column: f.dataset.column, width: r.width, height: r.height,
            real: bars.filter(b => b.getAttribute("fill") === "REAL").length,
            synthetic: bars.filter(b => b.getAttribute("fill") === "SYNTHETIC").length};
  }));
</script>""".replace("REAL", REAL).replace("SYNTHETIC", SYNTHETIC)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (Debian: apt-get install chromium); the page is not checked in a browser")


def _run(browser: str, tmp_path, *args: str) -> str:
    profile = tmp_path / "profile"
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_SECONDS)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 2000
    x = rng.normal(size=n)

    def table(seed):
        r = np.random.default_rng(seed)
        return pd.DataFrame({"price": np.where(r.random(n) < 0.8, 0.0, r.exponential(100, n)), "x": x,
                             "y": x + r.normal(size=n), "city": r.choice(["Lyon", "Oslo", "Rome"], n),
                             "day": pd.Timestamp("2024-01-01") + pd.to_timedelta(r.integers(0, 365, n), unit="D")})

    real, syn = table(0), table(1)
    syn["price"] = rng.exponential(100, n)
    path = tmp_path_factory.mktemp("page") / "quality.html"
    quality_report(real, syn).to_html(path)
    return path, list(real.columns)


def test_every_column_picture_is_drawn_with_a_size(page, tmp_path):
    browser = _chromium()
    path, columns = page
    probed = tmp_path / "probed.html"
    probed.write_text(path.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dom = _run(browser, tmp_path, "--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[:2000]
    sizes = {entry["column"]: entry for entry in json.loads(found.group(1).replace("&quot;", '"'))}
    assert sorted(sizes) == sorted(columns)
    for column, entry in sizes.items():
        assert entry["width"] > 100 and entry["height"] > 100, entry
        assert entry["real"] >= 1 and entry["synthetic"] >= 1, entry  # bars of both tables, drawn with a height


def test_the_screenshot_shows_the_page(page, tmp_path):
    browser = _chromium()
    image_module = pytest.importorskip("PIL.Image")
    path, _ = page
    shot = tmp_path / "shot.png"
    _run(browser, tmp_path, "--hide-scrollbars", f"--screenshot={shot}", "--window-size=1200,1600", path.as_uri())
    pixels = np.asarray(image_module.open(shot).convert("RGB")).reshape(-1, 3)
    colours = {tuple(p) for p in pixels[:: max(len(pixels) // 200_000, 1)]}
    assert len(colours) > 50  # not a blank page
    for hex_colour in (REAL, SYNTHETIC):
        rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(pixels.astype(int) - rgb).sum(axis=1) < 12).sum() > 500, hex_colour  # the bars are drawn


#: A probe of the page's width: the document's and the window's, and each pair table's figure, drawn and scrolled.
_WIDTH_PROBE = """<pre id="probe"></pre><script>
document.getElementById("probe").textContent = JSON.stringify({
  page: document.documentElement.scrollWidth, window: window.innerWidth,
  pairs: Array.from(document.querySelectorAll("h3 + .grid figure")).map(f => ({
    drawn: f.querySelector("svg").getBoundingClientRect().width, inside: f.clientWidth, scrolled: f.scrollWidth}))});
</script>"""


def test_the_pair_tables_of_two_wide_text_columns_fit_the_window(tmp_path):
    browser = _chromium()
    rng = np.random.default_rng(0)
    weights = 1.0 / np.arange(1, 61) ** 1.2

    def table(seed):
        r = np.random.default_rng(seed)
        shop = r.choice(60, 3000, p=weights / weights.sum())
        town = np.where(r.random(3000) < 0.5, shop, r.choice(60, 3000, p=weights / weights.sum()))
        return pd.DataFrame({"shop": [f"shop number {i}" for i in shop], "town": [f"town {i}" for i in town],
                             "amount": rng.exponential(100, 3000)})

    path = tmp_path / "wide.html"
    quality_report(table(0), table(1)).to_html(path)
    path.write_text(path.read_text(encoding="utf-8").replace("</body>", _WIDTH_PROBE + "</body>"), encoding="utf-8")
    dom = _run(browser, tmp_path, "--window-size=1200,1600", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[:2000]
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe["page"] <= probe["window"], probe
    assert len(probe["pairs"]) == 6, probe  # real and synthetic of the three pairs
    for pair in probe["pairs"]:
        assert pair["drawn"] <= pair["inside"] and pair["scrolled"] <= pair["inside"], pair


def test_the_pair_matrix_of_50_columns_scrolls_inside_its_figure(tmp_path):
    browser = _chromium()
    rng = np.random.default_rng(0)
    real, syn = (pd.DataFrame(rng.normal(size=(300, 50)), columns=[f"number {i}" for i in range(50)])
                 for _ in range(2))
    path = tmp_path / "many.html"
    quality_report(real, syn).to_html(path)
    path.write_text(path.read_text(encoding="utf-8").replace("</body>", _WIDTH_PROBE + "</body>"), encoding="utf-8")
    dom = _run(browser, tmp_path, "--window-size=1200,1600", "--dump-dom", path.as_uri())
    probe = json.loads(re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert probe["page"] <= probe["window"], probe  # the 1,418-pixel matrix and correlations scroll in place


#: A probe of the two-table page: each picture's drawn size and bars by table (the column pictures of both tables
#: and the children per parent), and the page's width against the window's.
_LINKED_PROBE = """<pre id="probe"></pre><script>
document.getElementById("probe").textContent = JSON.stringify({
  page: document.documentElement.scrollWidth, window: window.innerWidth,
  figures: Array.from(document.querySelectorAll("figure.column, figure.link")).map(f => {
    const r = f.querySelector("svg").getBoundingClientRect();
    const bars = Array.from(f.querySelectorAll("svg rect")).filter(
      b => b.querySelector("title") && b.getBoundingClientRect().height > 0.5);
    return {name: f.dataset.column || f.id, width: r.width, height: r.height,
            real: bars.filter(b => b.getAttribute("fill") === "REAL").length,
            synthetic: bars.filter(b => b.getAttribute("fill") === "SYNTHETIC").length};
  })});
</script>""".replace("REAL", REAL).replace("SYNTHETIC", SYNTHETIC)


def test_the_page_of_two_linked_tables_draws_both_tables_and_the_link(tmp_path):
    browser = _chromium()

    def pair(seed):
        r = np.random.default_rng(seed)
        region = r.choice(["north", "south", "east"], 500)
        owner = np.repeat(np.arange(500), r.integers(0, 5, 500))
        return {"customers": pd.DataFrame({"cid": np.arange(500) + 7, "region": region, "age": r.uniform(18, 80, 500)}),
                "orders": pd.DataFrame({"cid": owner + 7, "amount": r.exponential(50, len(owner)),
                                        "channel": np.where(region[owner] == "north", "web", "shop")})}

    path = tmp_path / "pair.html"
    quality_report(pair(0), pair(1), links={"orders.cid": "customers.cid"}, max_rows_per_unit=3).to_html(path)
    path.write_text(path.read_text(encoding="utf-8").replace("</body>", _LINKED_PROBE + "</body>"), encoding="utf-8")
    dom = _run(browser, tmp_path, "--window-size=1200,1600", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[:2000]
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe["page"] <= probe["window"], probe
    figures = {entry["name"]: entry for entry in probe["figures"]}
    assert sorted(figures) == ["age", "amount", "channel", "children-per-parent", "region"]
    for entry in figures.values():
        assert entry["width"] > 100 and entry["height"] > 100, entry
        assert entry["real"] >= 1 and entry["synthetic"] >= 1, entry
