"""Privacy accounting: the ledgers that record and bound what a run spends.

Not a mechanism: the mechanisms (``synthdp.mechanisms``) describe what they
release and call a ledger to pay for it; the ledgers derive the composed cost.

* :mod:`synthdp.accounting.ledger`: (epsilon, delta) spends under basic,
  advanced and zCDP composition, the neighbouring relation, per-round budgets
  (docs/privacy.md §1.4, §1.8, §4.2, §4.7).
* :mod:`synthdp.accounting.zcdp`: the zCDP filter of select-measure-estimate
  and its conversions (docs/privacy.md §8).
* :mod:`synthdp.accounting.spend`: what a run was charged, said when it stops after a
  private step (docs/privacy.md §10.1).
"""
