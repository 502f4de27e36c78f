"""Layer 4: the hash-chained audit log, its verification, replay and the sampler self-test."""

from securedp.audit.log import AuditLog, AuditLogError
from securedp.audit.verify import Problem, Report, verify_log

__all__ = ["AuditLog", "AuditLogError", "Problem", "Report", "verify_log"]
