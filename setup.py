"""securedp's one C extension; everything else is declared in pyproject.toml.

``securedp.bounding._sha256_heads``: the leading 64 bits of SHA-256 with the x86 SHA instructions
(:mod:`securedp.bounding.heads`). It is optional: where no C compiler is found, or the build fails,
securedp installs without it and computes the same digests with polars-hash or hashlib.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("securedp.bounding._sha256_heads", ["securedp/bounding/_sha256_heads.c"], optional=True)])
