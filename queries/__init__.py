"""Query classes: counting queries with separator sets and solver encodings."""

from queries.base import QueryClass, Separator
from queries.complement import ComplementClosed, Not
from queries.conjunctions import Conjunction, Conjunctions
from queries.disjunctions import Disjunction, Disjunctions
from queries.halfspaces import Halfspace, Halfspaces
from queries.monotone import MonotoneConjunction, MonotoneConjunctions
from queries.parities import Parities, Parity
from queries.spec import parse_query_class
from queries.workload import Workload

__all__ = [
    "ComplementClosed", "Conjunction", "Conjunctions", "Disjunction", "Disjunctions", "Halfspace",
    "Halfspaces", "MonotoneConjunction", "MonotoneConjunctions", "Not", "Parities", "Parity", "QueryClass",
    "Separator", "Workload", "parse_query_class",
]
