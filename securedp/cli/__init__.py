"""The ``securedp`` command (``securedp.cli.main:main``)."""
