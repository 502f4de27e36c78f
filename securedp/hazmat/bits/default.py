"""Resolution of the ``rng=`` argument: ``None`` means one process-wide system source."""

from __future__ import annotations

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.bits.system import SystemSource

_DEFAULT: SystemSource | None = None


def default_source() -> SystemSource:
    """The process-wide :class:`SystemSource` used wherever ``rng=None``."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = SystemSource()
    return _DEFAULT


def resolve_source(rng: RandomSource | None) -> RandomSource:
    """``rng`` itself, or the default source when ``rng`` is ``None``."""
    if rng is None:
        return _DEFAULT if _DEFAULT is not None else default_source()
    if not isinstance(rng, RandomSource):
        raise TypeError(
            f"rng must be a securedp RandomSource (SystemSource or ChaChaSource), not {type(rng).__name__}"
        )
    return rng
