"""Query classes: counting queries with separator sets and solver encodings."""

from synthdp.queries.base import QueryClass, Separator
from synthdp.queries.complement import ComplementClosed, Not
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.disjunctions import Disjunction, Disjunctions
from synthdp.queries.halfspaces import Halfspace, Halfspaces
from synthdp.queries.monotone import MonotoneConjunction, MonotoneConjunctions
from synthdp.queries.parities import Parities, Parity
from synthdp.queries.spec import parse_query_class
from synthdp.queries.workload import Workload

__all__ = [
    "ComplementClosed", "Conjunction", "Conjunctions", "Disjunction", "Disjunctions", "Halfspace",
    "Halfspaces", "MonotoneConjunction", "MonotoneConjunctions", "Not", "Parities", "Parity", "QueryClass",
    "Separator", "Workload", "parse_query_class",
]
