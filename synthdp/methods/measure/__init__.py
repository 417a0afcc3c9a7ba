"""Select-measure-estimate (docs/privacy.md §8): its plan, its measurements, its estimators and its run."""
