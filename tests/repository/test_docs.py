"""The README is a quickstart, the documentation site is complete, and no work history reaches users.

* The README's first code block starts with ``make demo`` and ``make test``
  exactly; the README stays within 250 lines, its Python example within 10,
  and every file or folder it links to, and every heading it links to, exists.
* Every page under ``docs/`` is in the site's navigation (``mkdocs.yml``) and
  every page the navigation names exists (``make docs`` checks links and
  anchors between pages in strict mode; this runs without mkdocs installed).
* Every results section of ``docs/benchmarks.md`` shows the command that makes
  its numbers, and every ``docs/benchmarks.md#anchor`` the code cites is one of
  its headings.
* No user-facing text (README, CHANGELOG, the docs, the package's code,
  comments and printed strings) names work history: numbered rounds of work,
  issue or session numbers.  "round" stays an algorithm word (the method's
  selection rounds, the game's rounds).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
BENCHMARKS = DOCS / "benchmarks.md"
MAKE_LINES = [
    "make demo    # creates .venv, installs synthdp, runs a real private generation on the embedded demo table",
    "make test    # installs and runs the test suite",
]
#: The folders of the installed package whose text reaches users (docstrings, comments, messages).
CODE_FOLDERS = ("synthdp", "oracles", "queries", "datasets")
#: Sections of docs/benchmarks.md that describe rather than measure.
NOT_MEASURED = {"Running the targets", "How the defaults were chosen"}

_ORDINALS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
             "fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth")
_LATE = "seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|" \
        "eighteenth|nineteenth|twentieth"
#: Work history: "the fourteenth round", "twelfth to fifteenth rounds", "second tuning round", "issue 27",
#: "the issue's code", "session 8's".  Early ordinals before "round" are algorithm words ("a first round").
HISTORY = re.compile(
    rf"\b(?:{_LATE})(?:[- ](?:to|and)[- ](?:{_ORDINALS}))?(?:'s)? rounds?\b"
    rf"|\b(?:{_ORDINALS}) tuning rounds?\b"
    r"|\bissues? #?\d+|\bthe issue(?:'s)?\b|\bsessions? #?\d+", re.IGNORECASE)


def history_problems(text: str, where: str) -> list[str]:
    """Every mention of work history in ``text``, as ``where:line: words``."""
    return [f"{where}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in HISTORY.finditer(text)]


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    value = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def headings(text: str, level: str = "#+") -> list[str]:
    """The headings of a markdown text (outside fenced code blocks)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return [m.group(1).strip() for m in re.finditer(rf"^{level} +(.+)$", text, re.M)]


def sections(text: str) -> dict[str, str]:
    """The ``## `` sections of a markdown text, by heading."""
    parts = re.split(r"^## +(.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def nav_pages(config: str) -> list[str]:
    """The ``.md`` pages the ``nav`` of ``mkdocs.yml`` names."""
    nav = config.split("\nnav:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"([\w./-]+\.md)\s*$", nav, re.M)


def test_readme_starts_with_make_demo_and_make_test():
    text = README.read_text()
    first_block = re.search(r"```[^\n]*\n(.*?)```", text, re.S).group(1).splitlines()
    assert first_block[:2] == MAKE_LINES


def test_readme_is_a_quickstart():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    python = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(python.splitlines()) <= 10, python


def test_readme_links_resolve():
    text = README.read_text()
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert targets
    missing = [t for t in targets if not t.endswith(".png") and not (ROOT / t).exists()]
    assert not missing, missing
    anchors = {slug(h) for h in headings(text)}
    own = re.findall(r"\]\(#([^)\s]+)\)", text)
    assert not [a for a in own if a not in anchors], own


def test_every_page_is_in_the_site_navigation():
    named = nav_pages((ROOT / "mkdocs.yml").read_text())
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if "hooks" not in p.parts)
    assert sorted(named) == pages
    assert "privacy.md" in named and "benchmarks.md" in named and "reference/cli.md" in named


def test_every_benchmark_section_has_its_command():
    found = sections(BENCHMARKS.read_text())
    measured = {name: body for name, body in found.items() if name not in NOT_MEASURED}
    assert len(measured) >= 10
    without = [name for name, body in measured.items()
               if not re.search(r"```[^\n]*\n(?:[^`]*\n)?(?:synthdp |python -m synthdp)", body)]
    assert not without, f"docs/benchmarks.md sections without the command that makes them: {without}"


def test_benchmark_anchors_cited_in_the_code_exist():
    anchors = {slug(h) for h in headings(BENCHMARKS.read_text())}
    files = [p for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*.py")]
    cited = {(str(p.relative_to(ROOT)), m.group(1)) for p in files
             for m in re.finditer(r"docs/benchmarks\.md#([\w-]+)", p.read_text(encoding="utf-8"))}
    assert cited  # the code does cite sections
    unknown = sorted((where, anchor) for where, anchor in cited if anchor not in anchors)
    assert not unknown, unknown


def test_no_work_history_in_front_of_users():
    texts = [README, ROOT / "CHANGELOG.md", ROOT / "mkdocs.yml", *DOCS.rglob("*.md"), *DOCS.rglob("*.py"),
             *(p for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*.py"))]
    problems = [p for path in texts
                for p in history_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not problems, "work history in user-facing text:\n" + "\n".join(problems)


@pytest.mark.parametrize("text", [
    "tuned in the fourteenth round", "docs/benchmarks.md, twelfth to fifteenth rounds", "the seventeenth round's",
    "Second tuning round (NLTCS only)", "(issue 27)", "game (issue 15)", "the issue's measurements",
    "session 8's means",
])
def test_history_check_catches_work_history(text):
    assert history_problems(text, "x")


@pytest.mark.parametrize("text", [
    "the first rounds get rho / (8 d) each", "a first round's cost", "every tenth of the rounds",
    "refused before round 1", "the record rounds pay at eps 0.5", "8 planned rounds per attribute",
])
def test_history_check_keeps_algorithm_words(text):
    assert not history_problems(text, "x")


def test_slug_matches_mkdocs_anchors():
    assert slug("ADULT, 3-way marginals") == "adult-3-way-marginals"
    assert slug("10.3 Private discretisation of a numeric column (PrivTree)") == \
        "103-private-discretisation-of-a-numeric-column-privtree"
