"""Query classes: counting queries with separator sets and solver encodings."""

from queries.base import QueryClass, Separator
from queries.complement import ComplementClosed, Not
from queries.conjunctions import Conjunction, Conjunctions

__all__ = ["ComplementClosed", "Conjunction", "Conjunctions", "Not", "QueryClass", "Separator"]
