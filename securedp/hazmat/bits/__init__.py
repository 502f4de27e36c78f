"""Sources of cryptographically secure random bits."""

from securedp.hazmat.bits.chacha import ChaChaSource, seed_commitment
from securedp.hazmat.bits.default import default_source, resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.bits.system import SystemSource

__all__ = ["ChaChaSource", "RandomSource", "SystemSource", "default_source", "resolve_source", "seed_commitment"]
