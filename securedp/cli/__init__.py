"""Layer 5: the ``securedp`` command (``securedp.cli.main:main``)."""
