"""synthdp: differentially private synthetic tables with certified solver oracles.

Public entry points: :func:`generate_synthetic` and :class:`Synthesizer` (with
:class:`MeasureOptions`, select-measure-estimate's settings); private
tuning over several configurations (:func:`tune`) and accuracy-first releases
(:func:`accuracy_first`); the data owner's certified check
(:func:`worst_case_error`) and quality report
(:func:`quality_report`, owner-side only).  The package is layered (docs/guide/layout.md of
the repository): ``synthdp.core`` at the bottom, then ``synthdp.accounting``,
``synthdp.queries`` and ``synthdp.oracles``, the private ``synthdp.mechanisms``,
the generation ``synthdp.methods``, and the driver (``config``, ``plan``,
``api``, ``cli``, ``report``) on top; imports only point down.

Importing ``synthdp`` (or any of its subpackages, e.g. ``synthdp.core``) loads
nothing else: each public name below is imported on first use (PEP 562), so a
tool that only needs the schema or a ledger does not pay for the solvers and
the graphical-model estimator.
"""

from typing import TYPE_CHECKING

from synthdp.core.lazy import lazy_names

from synthdp._version import __version__

#: Where each public name lives; :func:`__getattr__` imports it on first use.
_PUBLIC = {
    "MeasureOptions": "synthdp.methods.measure.settings",
    "Relation": "synthdp.core.parameters",
    "SchemaDraft": "synthdp.core.draft",
    "SynthesisConfig": "synthdp.config",
    "Synthesizer": "synthdp.api",
    "SyntheticResult": "synthdp.result",
    "draft_schema": "synthdp.core.draft",
    "generate_synthetic": "synthdp.api",
    "accuracy_first": "synthdp.tuning",
    "tune": "synthdp.tuning",
    "worst_case_error": "synthdp.evaluation.worst_case",
    "LinkedQualityReport": "synthdp.quality",
    "QualityReport": "synthdp.quality",
    "quality_report": "synthdp.quality",
}

__all__ = sorted([*_PUBLIC, "__version__"])

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from synthdp.api import Synthesizer, generate_synthetic
    from synthdp.config import SynthesisConfig
    from synthdp.core.draft import SchemaDraft, draft_schema
    from synthdp.core.parameters import Relation
    from synthdp.evaluation.worst_case import worst_case_error
    from synthdp.methods.measure.settings import MeasureOptions
    from synthdp.quality import LinkedQualityReport, QualityReport, quality_report
    from synthdp.result import SyntheticResult
    from synthdp.tuning import accuracy_first, tune


__getattr__, __dir__ = lazy_names(__name__, _PUBLIC)
