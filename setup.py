"""securedp's C extensions; everything else is declared in pyproject.toml.

Both are optional: where no C compiler is found, or a build fails, securedp installs without it and computes the
same results in Python and Polars.

* ``securedp.bounding._sha256_heads``: the leading 64 bits of SHA-256 with the x86 SHA instructions
  (:mod:`securedp.bounding.heads`); without it, polars-hash or hashlib.
* ``securedp.engines.polars._hash_codes``: dense codes of a text column's keyed hashes
  (:mod:`securedp.engines.polars.pair_codes`); without it, a Polars join.
* ``securedp.hazmat.samplers._tight_envelope``: the tight envelope's exponents, counts and sums per exponent in one
  pass (:mod:`securedp.hazmat.samplers.envelope`); without it, NumPy passes and a Tally (the same arrays). Compiled
  without floating-point contraction (no fused multiply-add) or fast-math: the envelope's error analysis assumes
  each operation correctly rounded.
"""

from setuptools import Extension, setup

SHARED = {"include_dirs": ["securedp"], "depends": ["securedp/_buffers.h"]}  # the buffer checks both share

setup(ext_modules=[
    Extension("securedp.bounding._sha256_heads", ["securedp/bounding/_sha256_heads.c"], optional=True, **SHARED),
    Extension("securedp.engines.polars._hash_codes", ["securedp/engines/polars/_hash_codes.c"], optional=True,
              **SHARED),
    Extension("securedp.hazmat.samplers._tight_envelope", ["securedp/hazmat/samplers/_tight_envelope.c"],
              optional=True, extra_compile_args=["-ffp-contract=off", "-fno-fast-math"], **SHARED),
])
