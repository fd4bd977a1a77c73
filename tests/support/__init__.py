"""Helpers shared by several test modules: hand-built inputs and readers that more than one test file
uses. No test module imports another (tests/test_test_layout.py checks it); what two of them share
lives here, or in tests/helpers.py (numeric comparisons) and tests/conftest.py (fixtures).

Nothing here is collected: no module is named ``test_*.py`` or ``*_test.py``. ``tests/`` is on
``sys.path`` (tests/conftest.py), so a test imports ``from support.ledger import base_results``."""
