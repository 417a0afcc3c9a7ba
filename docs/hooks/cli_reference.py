"""mkdocs hook: the command-line reference is generated from the parsers at build time.

``docs/reference/cli.md`` holds the marker ``<!-- cli-reference -->``; this
hook replaces it with the ``--help`` text of ``synthdp``, of each of its
sub-commands and of each ``synthdp bench`` target, formatted by the same
argparse parsers the installed command runs (``synthdp.cli.build_parser``
and each benchmark module's ``build_parser``), so the page cannot drift from
the flags the command accepts.  Nothing is fetched from the network.
"""

from __future__ import annotations

import argparse
import importlib
import os

MARKER = "<!-- cli-reference -->"
#: Help lines are wrapped at this width whatever the terminal, so that builds agree.
WIDTH = "100"


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-command parsers of ``parser``, in the order they were added."""
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def block(title: str, parser: argparse.ArgumentParser) -> list[str]:
    """One section: a heading and the parser's help text as a code block."""
    return [f"## {title}", "", "```text", parser.format_help().rstrip(), "```", ""]


def reference() -> str:
    """The page body: ``synthdp``, each sub-command, then each benchmark target."""
    from synthdp.cli import BENCHES, build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        lines = block("synthdp", parser)
        for name, sub in subcommands(parser).items():
            lines += block(f"synthdp {name}", sub)
        for target, module in sorted(BENCHES.items()):
            lines += block(f"synthdp bench {target}", importlib.import_module(module).build_parser())
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Fill the marker of the command-line reference page; other pages pass through."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
