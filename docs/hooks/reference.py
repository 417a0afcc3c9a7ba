"""mkdocs hooks of the reference pages: the command line from the parsers, Sphinx roles in docstrings.

The command-line reference is generated from the parsers at build time:
``docs/reference/cli.md`` holds the marker ``<!-- cli-reference -->``; this
hook replaces it with the ``--help`` text of ``synthdp``, of each of its
sub-commands and of each ``synthdp bench`` target, formatted by the same
argparse parsers the installed command runs (``synthdp.cli.parser.build_parser``
and each benchmark module's ``build_parser``), so the page cannot drift from
the flags the command accepts.  Nothing is fetched from the network.

The docstrings cite other objects with Sphinx roles (``:class:`~synthdp.api.Synthesizer```);
mkdocstrings renders those as a role name before inline code, so the role
and the ``~`` are dropped from the rendered pages and the name stays as code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re

MARKER = "<!-- cli-reference -->"
#: A Sphinx role rendered before inline code: ``:class:<code>~a.b.C</code>``.
ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):<code>~?")
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
    from synthdp.cli.parser import BENCHES, build_parser

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


def on_page_content(html: str, page, config, files) -> str:
    """Drop the Sphinx roles the API reference's docstrings carry, keeping the names as code."""
    return ROLE.sub("<code>", html)
