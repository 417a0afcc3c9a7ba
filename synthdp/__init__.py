"""synthdp: differentially private synthetic tables with certified solver oracles.

Public entry points: :func:`generate_synthetic` and :class:`Synthesizer`; private
tuning over several configurations (:func:`tune`) and accuracy-first releases
(:func:`accuracy_first`); the data owner's certified check
(:func:`worst_case_error`).  The
package is layered (see the README's layout section): ``synthdp.core`` at the
bottom, then ``synthdp.queries`` and ``synthdp.oracles``, the private
``synthdp.mechanisms``, the generation ``synthdp.methods``, and the driver
(``config``, ``plan``, ``api``, ``cli``, ``report``) on top; imports only point down.
"""

from synthdp._version import __version__
from synthdp.api import Synthesizer, SyntheticResult, generate_synthetic
from synthdp.config import SynthesisConfig
from synthdp.core.parameters import Relation
from synthdp.tuning import accuracy_first, tune
from synthdp.evaluation.worst_case import worst_case_error

__all__ = ["Relation", "SynthesisConfig", "Synthesizer", "SyntheticResult", "__version__", "accuracy_first",
           "generate_synthetic", "tune", "worst_case_error"]
