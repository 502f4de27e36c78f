"""The hash-chained, signed audit log, its verification, replay and the sampler self-test."""

from securedp.audit.log import AuditLog, AuditLogError
from securedp.audit.replay import Replayed, read_seed, replay_log
from securedp.audit.signing import load_public_key, load_signing_key, make_head, public_key_text, write_key_pair
from securedp.audit.verify import Problem, Report, verify_log

__all__ = [
    "AuditLog",
    "AuditLogError",
    "Problem",
    "Replayed",
    "Report",
    "load_public_key",
    "load_signing_key",
    "make_head",
    "public_key_text",
    "read_seed",
    "replay_log",
    "verify_log",
    "write_key_pair",
]
