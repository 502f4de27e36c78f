"""Schema checks of an audit log: every record parses into the typed classes of the one record schema.

Verification is parsing: a record is accepted exactly when
:func:`securedp.accounting.schema.parse_record` turns it into a
:class:`~securedp.accounting.schema.ChargedRelease` (the rules of
:mod:`securedp.mechanisms.record_schema` for the release's fields and of
:mod:`securedp.accounting.schema` for the budget fields), a
:class:`~securedp.accounting.schema.PartitionRecord` or an
:class:`~securedp.accounting.schema.UnreleasedRecord`. Nothing is checked by
hand here; this module only names the failing field as a field of the log
line (``"record.source.seed_commitment"``).
"""

from __future__ import annotations

from securedp.accounting.schema import AuditRecord, parse_record
from securedp.audit.problem import Bad
from securedp.mechanisms.record_schema import SchemaError


def parse_logged(record: object) -> AuditRecord:
    """The typed form of a log line's ``record``, or :class:`~securedp.audit.problem.Bad` naming ``record.<field>``."""
    try:
        return parse_record(record)
    except SchemaError as error:
        raise Bad("record." + error.field if error.field else "record", error.message) from None
