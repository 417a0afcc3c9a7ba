"""The README's command-line examples run verbatim on the raw UCI Adult file.

The test reads the first code block of the README's "## Command line"
section, keeps its variable assignments and its ``synthdp schema``,
``generate`` and ``evaluate`` commands (the ``bench`` lines are benchmarks,
run elsewhere), and runs them with bash in a folder where ``adult.data`` is
the raw file.  Only two things are added: ``generate`` gets a few rounds so
that the test stays quick, and the review step the README describes (a
person replacing what was read off the data, then deleting the
``_read_off_data`` entry) is done by deleting the entry.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
QUICK = " --rounds 3 --samples-per-round 10 --seed 0"


def command_line_block() -> list[str]:
    """Commands (backslash continuations joined) of the first code block under "## Command line"."""
    text = README.read_text()
    section = text.split("\n## Command line", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```[^\n]*\n(.*?)```", section, re.S).group(1)
    return [line.strip() for line in re.sub(r"\\\n\s*", " ", block).splitlines() if line.strip()]


def test_readme_block_has_the_newcomer_path():
    lines = command_line_block()
    kinds = [line.split()[1] for line in lines if line.startswith("synthdp ")]
    assert kinds[:3] == ["schema", "generate", "evaluate"], lines


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
            assert "age" not in read and read["workclass"] == ["categories", "missing"]
            draft.write_text(json.dumps(data))  # the owner's review
    assert (tmp_path / "synthetic.csv").is_file() and (tmp_path / "report.json").is_file()
    assert (tmp_path / "errors.pdf").read_bytes().startswith(b"%PDF")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
