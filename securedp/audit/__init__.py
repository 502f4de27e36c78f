"""Layer 4: the hash-chained audit log, its verification, replay and the sampler self-test."""

from securedp.audit.log import AuditLog, AuditLogError
from securedp.audit.replay import Replayed, read_seed, replay_log
from securedp.audit.verify import Problem, Report, verify_log

__all__ = ["AuditLog", "AuditLogError", "Problem", "Replayed", "Report", "read_seed", "replay_log", "verify_log"]
