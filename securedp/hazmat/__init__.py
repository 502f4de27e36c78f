"""The hazardous layers: raw bits, exact arithmetic and noise samplers.

Like ``cryptography.hazmat``, everything here is correct but carries no
privacy accounting: drawing noise is not the same as releasing a statistic
privately. Most users want the mechanisms and the ``Session`` at the top of
``securedp``. Layers, bottom up: ``exact`` and ``bits``, then ``samplers``.
"""
