"""The README's examples run verbatim on the raw UCI Adult file.

The command-line test reads the first code block of the README's "## Command
line" section, keeps its variable assignments and its ``synthdp schema``,
``generate`` and ``evaluate`` commands, and runs them with bash in a folder
where ``adult.data`` is the raw file.  The Python test runs the first code block
of the "## Python" section in such a folder.  Only one thing is added to
either: generation gets a few rounds of the game, so that the tests stay quick,
and the review step the README describes (a person replacing what was read off
the data, then deleting the ``_read_off_data`` entry) is done by deleting the
entry.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

#: The README's examples, run end to end: ``-m 'not integration'`` leaves them out.
pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"
QUICK = " --rounds 3 --samples-per-round 10 --seed 0"
#: The same few rounds for the Python example (game options: ``method="auto"`` then runs the game).
QUICK_OPTIONS = {"rounds": 3, "samples_per_round": 10, "random_state": 0}
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                 "income"]


def code_block(section: str, text: str | None = None) -> str:
    """The first fenced code block under the ``## section`` heading of the README (or of ``text``)."""
    text = README.read_text() if text is None else text
    parts = text.split(f"\n## {section}\n", 1)
    assert len(parts) == 2, f"the README has no '## {section}' section"
    body = parts[1].split("\n## ", 1)[0]
    found = re.search(r"```[^\n]*\n(.*?)```", body, re.S)
    assert found, f"the README's '## {section}' section has no code block"
    return found.group(1)


def command_line_block() -> list[str]:
    """Commands (backslash continuations joined) of the first code block under "## Command line"."""
    block = code_block("Command line")
    return [line.strip() for line in re.sub(r"\\\n\s*", " ", block).splitlines() if line.strip()]


def test_code_block_finds_the_section_and_refuses_a_missing_one():
    text = "# t\n\n## A\n\ntext\n\n```\nfirst\n```\n\n```\nsecond\n```\n\n## B\n\n```py\nb\n```\n"
    assert code_block("A", text) == "first\n" and code_block("B", text) == "b\n"
    with pytest.raises(AssertionError, match="no '## C' section"):
        code_block("C", text)
    with pytest.raises(AssertionError, match="no code block"):
        code_block("A", "# t\n\n## A\n\nprose only\n\n## B\n\n```\nx\n```\n")


def test_readme_block_has_the_newcomer_path():
    lines = command_line_block()
    kinds = [line.split()[1] for line in lines if line.startswith("synthdp ")]
    assert kinds == ["schema", "generate", "evaluate"], lines


def test_readme_command_line_examples_run_on_the_raw_adult_file(shared_data_dir, tmp_path):
    raw = shared_data_dir / "adult-raw.data"
    if not raw.is_file():
        pytest.skip(f"{raw} not available")
    (tmp_path / "adult.data").symlink_to(raw)
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    assignments = [line for line in command_line_block() if re.match(r"^[A-Z_]+=", line)]
    commands = [line for line in command_line_block() if line.split()[:2] in
                (["synthdp", "schema"], ["synthdp", "generate"], ["synthdp", "evaluate"])]
    for command in commands:
        if command.split()[1] == "generate":
            command += QUICK
        script = "set -e\n" + "\n".join(assignments) + "\n" + command
        run = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert run.returncode == 0, f"{command}\n{run.stdout}\n{run.stderr}"
        if command.split()[1] == "schema":
            draft = tmp_path / "adult-schema.json"
            data = json.loads(draft.read_text())
            read = {e["column"]: e["read"] for e in data.pop("_read_off_data")}
            assert "age" not in read and read["workclass"] == ["categories", "missing"]  # bounds given are kept
            assert [a["name"] for a in data["attributes"]] == ADULT_COLUMNS
            draft.write_text(json.dumps(data))  # the owner's review
    synthetic = pd.read_csv(tmp_path / "synthetic.csv")
    assert list(synthetic.columns) == ADULT_COLUMNS and len(synthetic) > 0
    assert json.loads((tmp_path / "report.json").read_text())
    assert (tmp_path / "errors.pdf").read_bytes().startswith(b"%PDF")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_readme_python_example_runs_on_the_raw_adult_file(shared_data_dir, tmp_path, monkeypatch):
    if not (shared_data_dir / "adult-raw.data").is_file():
        pytest.skip("the raw Adult file is not available")
    import synthdp
    from synthdp.api import generate_synthetic

    calls = []

    def quick(*args, **kwargs):
        calls.append(kwargs)
        return generate_synthetic(*args, **kwargs, **QUICK_OPTIONS)

    monkeypatch.setattr(synthdp, "generate_synthetic", quick)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code_block("Python"), "README.md (## Python)", "exec"), namespace)
    assert len(calls) == 1 and calls[0]["epsilon"] == 1.0 and calls[0]["delta"] == 1e-9
    synthetic = pd.read_csv(tmp_path / "adult-synthetic.csv")
    assert list(synthetic.columns) == ADULT_COLUMNS and len(synthetic) > 0
    assert synthetic["age"].between(17, 90).all()  # the public bounds of the example
    release = namespace["release"]
    assert 0 < release["epsilon_spent"] <= 1.0 and json.dumps(release)  # the budget of the example, as plain data
