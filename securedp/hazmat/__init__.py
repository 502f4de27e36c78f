"""The hazardous layers: raw bits, exact arithmetic and noise samplers.

Like ``cryptography.hazmat``, everything here is correct but carries no
privacy accounting: drawing noise is not the same as releasing a statistic
privately. Most users want the mechanisms and the ``Session`` at the top of
``securedp``. Bottom up: ``exact`` and ``bits``, then ``samplers``, then the drop-in
``generator`` and the samplers' ``selftest`` that use them (one layer; ``exact`` and
``bits`` import nothing above them: ``tests/test_layers.py``).
"""
