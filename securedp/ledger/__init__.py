"""The ledger: a release, its record, and the budget it is charged to (below every statistic and engine).

* :mod:`securedp.ledger.release`: :class:`~securedp.ledger.release.Release` (a published value and what it
  cost) and :class:`~securedp.ledger.release.PreparedRelease` (validated and priced, nothing drawn yet), and
  the commitment to a release's exact input.
* :mod:`securedp.ledger.release_record`: the one schema of a release's record, and its JSON form.
* :mod:`securedp.ledger.audit_record`: the budget fields of audit records, and every record kind of the log.
* :mod:`securedp.ledger.budget`, :mod:`securedp.ledger.budget_file`: a budget, its charging rules, and the
  file that keeps one across processes; :mod:`securedp.ledger.errors`: what a refused charge raises.
"""
