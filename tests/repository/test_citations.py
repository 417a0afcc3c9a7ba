"""Every proof reference in the code resolves inside the repository's own ``docs/privacy.md``.

Docstrings, comments and messages cite sections as ``docs/privacy.md §2.6`` (or a
short ``§2.6`` in a file that names ``docs/privacy.md``) and numbered statements
as ``Theorem 3.1``.  This test reads the headings and the bold statement labels
of ``docs/privacy.md`` and checks that

* every cited section number is a heading there (``## 4.`` or ``### 4.2 ...``),
  and every cited ``§6 item N`` is an item of the numbered list of section 6;
* every cited Theorem/Lemma/Corollary/Remark/Proposition/Definition ``N.M`` is
  stated there (a bold ``**Theorem N.M`` label, inside section ``N``);
* no file points at a document a clone does not contain (the project's design
  specification outside the repository), and every file with ``§`` citations
  names ``docs/privacy.md``.

Citations of other papers' numbering stay possible when the source is named
right before the number (``KOV Theorem 3.3``, ``CKS20 Corollary 13``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "privacy.md"
#: The folders whose Python files cite the proofs.
FOLDERS = ("synthdp", "oracles", "queries", "datasets", "tests")

_NUM = r"\d+(?:\.\d+)*"
_HEADING = re.compile(r"^#+ +§? ?(" + _NUM + r")[. )]")
_TOP_HEADING = re.compile(r"^## +(\d+)[. )]")
_STATEMENT_KINDS = "Theorem|Lemma|Corollary|Remark|Proposition|Definition"
_STATED = re.compile(r"\*\*(" + _STATEMENT_KINDS + r") (\d+\.\d+)\b")
_LIST_ITEM = re.compile(r"^(\d+)\. ")
_SECTION_CITE = re.compile(r"§ ?(" + _NUM + r")(?: item (\d+))?|\b[Ss]ections? (" + _NUM + r")")
_STATEMENT_CITE = re.compile(r"\b(" + _STATEMENT_KINDS + r") (\d+\.\d+)")
#: A source named right before a statement number makes it another paper's numbering.
_EXTERNAL_SOURCE = re.compile(r"(?:\b[A-Z][A-Z-]*[A-Z]\d*|\btheir)[\s(]*$")
#: Pointers to a document outside the repository.
_FORBIDDEN = re.compile(r"shared/design|\b(?:design|privacy) note\b|\bthe note's\b", re.IGNORECASE)


@dataclass(frozen=True)
class DocIndex:
    """What ``docs/privacy.md`` defines: section numbers, stated statements, items of section 6."""

    sections: frozenset[str]
    statements: frozenset[tuple[str, str]]
    section6_items: frozenset[int]


def index_doc(text: str) -> DocIndex:
    """Headings, bold statement labels (each in its own top-level section) and the items of section 6."""
    sections, statements, items, misplaced = set(), set(), set(), []
    top = None
    for line in text.splitlines():
        if m := _HEADING.match(line):
            sections.add(m.group(1))
        if m := _TOP_HEADING.match(line):
            top = m.group(1)
        for kind, number in _STATED.findall(line):
            if number.split(".")[0] != top:
                misplaced.append(f"{kind} {number} is stated in section {top}")
            statements.add((kind, number))
        if top == "6" and (m := _LIST_ITEM.match(line)):
            items.add(int(m.group(1)))
    assert not misplaced, "docs/privacy.md states statements outside their section: " + "; ".join(misplaced)
    return DocIndex(frozenset(sections), frozenset(statements), frozenset(items))


def citation_problems(text: str, where: str, doc: DocIndex) -> list[str]:
    """Every citation in ``text`` that does not resolve in ``doc``, as ``where:line: problem``."""
    problems = []

    def line_of(pos: int) -> str:
        return f"{where}:{text.count(chr(10), 0, pos) + 1}"

    for m in _SECTION_CITE.finditer(text):
        number, item = m.group(1) or m.group(3), m.group(2)
        if number not in doc.sections:
            problems.append(f"{line_of(m.start())}: cites section {number}, not a heading of docs/privacy.md")
        elif item is not None and number == "6" and int(item) not in doc.section6_items:
            problems.append(f"{line_of(m.start())}: cites §6 item {item}, not an item of docs/privacy.md §6")
    for m in _STATEMENT_CITE.finditer(text):
        if _EXTERNAL_SOURCE.search(text, max(0, m.start() - 40), m.start()):
            continue
        if (m.group(1), m.group(2)) not in doc.statements:
            problems.append(f"{line_of(m.start())}: cites {m.group(1)} {m.group(2)}, not stated in docs/privacy.md")
    for m in _FORBIDDEN.finditer(text):
        problems.append(f"{line_of(m.start())}: {m.group(0)!r} points outside the repository; cite docs/privacy.md")
    if "§" in text and "docs/privacy.md" not in text:
        problems.append(f"{where}: cites § sections without naming docs/privacy.md")
    return problems


def _python_files() -> list[Path]:
    files = [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))]
    return [p for p in files if "__pycache__" not in p.parts and p != Path(__file__).resolve()]


@pytest.fixture(scope="module")
def doc() -> DocIndex:
    return index_doc(DOC.read_text(encoding="utf-8"))


def test_doc_has_the_numbered_sections(doc):
    """Sections 1-9 exist, with the subsections the code leans on most."""
    assert {str(k) for k in range(1, 10)} <= doc.sections
    assert {"1.5", "2.3", "2.6", "2.7", "3.2", "4.2", "8.4"} <= doc.sections
    assert ("Theorem", "2.3") in doc.statements and ("Theorem", "3.1") in doc.statements
    assert {4, 5} <= doc.section6_items


def test_every_citation_in_the_code_resolves(doc):
    files = _python_files()
    assert len(files) > 40  # the scan really sees the package
    problems = [p for path in files
                for p in citation_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), doc)]
    assert not problems, "unresolved proof references:\n" + "\n".join(problems)


def test_checker_catches_bad_citations(doc):
    """The checker itself: each kind of broken reference is reported, good ones are not."""
    good = '"""See docs/privacy.md §2.6, §6 item 4, Theorem 3.1, Lemma 2.0(b) and KOV Theorem 3.3."""'
    assert citation_problems(good, "good.py", doc) == []
    bad = {
        '"""docs/privacy.md §2.99."""': "section 2.99",
        '"""docs/privacy.md §6 item 99."""': "item 99",
        '"""As in section 42."""': "section 42",
        '"""docs/privacy.md, Theorem 3.99."""': "Theorem 3.99",
        '"""(Lemma 4.4 of docs/privacy.md)"""': "Lemma 4.4",
        '"""the design note, §2.6 (docs/privacy.md)"""': "'design note'",
        '"""see ../shared/design/privacy.md"""': "'shared/design'",
        '"""exact sampler (§2.6)"""': "without naming docs/privacy.md",
    }
    for text, expected in bad.items():
        problems = citation_problems(text, "bad.py", doc)
        assert any(expected in p for p in problems), (text, problems)


def test_doc_index_rejects_a_statement_outside_its_section():
    with pytest.raises(AssertionError, match="Theorem 3.1 is stated in section 2"):
        index_doc("## 2. RSPM\n\n**Theorem 3.1.** misplaced\n")
