"""Driver-level private tuning (docs/privacy.md §5), built on :func:`synthdp.api.generate_synthetic`.

* :func:`tune` -- the best of several public configurations, chosen privately
  by random stopping (§5.1) with a private score (§5.2);
* :func:`accuracy_first` -- the cheapest doubling level whose table passes a
  private accuracy test, with ex-post and worst-case costs (§5.3).
"""

from synthdp.tuning.accuracy_first import AccuracyFirstReport, AccuracyFirstResult, TargetNotReached, accuracy_first
from synthdp.tuning.stopping import TuningReport, TuningResult, tune

__all__ = ["AccuracyFirstReport", "AccuracyFirstResult", "TargetNotReached", "TuningReport", "TuningResult",
           "accuracy_first", "tune"]
