"""The session: a ``Session`` charges each release to its budget before it is drawn, and records it.

* :mod:`securedp.session.session`: :class:`~securedp.session.session.Session`.
* :mod:`securedp.session.methods`: its method per statistic; :mod:`securedp.session.partition`: parallel
  composition; :mod:`securedp.session.boundary`: the error boundary of an analyst-facing session;
  :mod:`securedp.session.recording`: how a record whose charge stands is written.

Below it, the ledger (:mod:`securedp.ledger`: the release, its record, the budget); beside it,
:mod:`securedp.planning`.
"""
