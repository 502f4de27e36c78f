"""Each statistic's public functions as a static checker sees them: declared in ``signatures.pyi`` beside this file.

``prepare_NAME``, ``NAME`` and ``Session.NAME`` are made at import from the one list of statistics
(:data:`securedp.tables.spec.STATISTICS`), so a static checker, which reads source, would see none of them.
``signatures.pyi`` declares them, generated from the list and checked against it by
``tests/unit/tables/test_signatures_stub.py``; ``securedp.tables.one_column`` and ``securedp.session.session`` import
it under ``TYPE_CHECKING`` only. At run time this module is empty and nothing imports it.
"""
