"""Schema checks of an audit log: every record parses into the typed classes of the one record schema.

Verification is parsing: a record is accepted exactly when
:func:`securedp.ledger.audit_record.parse_record` turns it into a
:class:`~securedp.ledger.audit_record.ChargedRelease` (the rules of
:mod:`securedp.ledger.release_record` for the release's fields and of
:mod:`securedp.ledger.audit_record` for the budget fields), a
:class:`~securedp.ledger.audit_record.PartitionRecord` or an
:class:`~securedp.ledger.audit_record.UnreleasedRecord`. Nothing is checked by
hand here; this module only names the failing field as a field of the log
line (``"record.source.seed_commitment"``).
"""

from __future__ import annotations

from securedp.audit.problem import Bad
from securedp.ledger.audit_record import AuditRecord, parse_record
from securedp.ledger.release_record import SchemaError


def parse_logged(record: object) -> AuditRecord:
    """The typed form of a log line's ``record``, or :class:`~securedp.audit.problem.Bad` naming ``record.<field>``."""
    try:
        return parse_record(record)
    except SchemaError as error:
        raise Bad("record." + error.field if error.field else "record", error.message) from None
