"""Deprecated: ``securedp.accounting`` was split (securedp 0.2).

The budget, its file, its errors and the audit records' schema moved to :mod:`securedp.ledger`; the
``Session`` and what it runs (methods, partition, recording, boundary) to :mod:`securedp.session`. Each
old module path still resolves here for one release, with a :class:`DeprecationWarning`.
"""
