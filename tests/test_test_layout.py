"""The layout of tests/: the folders mirror the packages, and no module imports a test module
(issue 41, item 8).

A test module lives in ``tests/core/`` (``frcore/*.py``), ``tests/bank/`` (the bank's facade and
interfaces) or ``tests/bank/<layer>/`` for a layer that exists as ``frcore/bank/<layer>/``,
``tests/bench/``, ``tests/theory/``, ``tests/experiments/``, ``tests/figures/``, or ``tests/``
itself for what spans the project.

A test module that imports another runs the other's module-level code, ties the two together so
that neither can move or run alone, and makes circles possible (test_ledger ↔ test_ledger_paper
once). What several test modules share lives in tests/support/ (or tests/helpers.py,
tests/strategies.py, tests/suite_builders.py; fixtures in tests/conftest.py). The modules of
tests/ and below are read with :mod:`ast` (nothing is imported): every ``import`` and
``from … import``, at module level or inside a function, relative ones included. A test module is
one named as pytest's default ``python_files`` names them (``test_*.py``, ``*_test.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import TESTS


def _test_like(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test")


def imports_of_test_modules(source: str, filename: str) -> list[str]:
    """``filename:line: imports NAME`` for every import of a test module in ``source``, in line
    order. ``from M import n``: M is a test module, or n is one (``from . import test_x``)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if any(map(_test_like, a.name.split(".")))]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.module and any(map(_test_like, node.module.split("."))):
                found.append((node.lineno, module))
            else:
                sep = "" if module.endswith(".") else "."
                found += [(node.lineno, f"{module}{sep}{a.name}") for a in node.names if _test_like(a.name)]
    return [f"{filename}:{line}: imports {name}" for line, name in sorted(found)]


def _python_files(root: Path = TESTS) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_test_module_imports_another():
    files = _python_files()
    assert TESTS / "conftest.py" in files and TESTS / "support" / "ledger.py" in files  # tests/ and below
    bad = [
        line
        for p in files
        for line in imports_of_test_modules(p.read_text(encoding="utf-8"), str(p.relative_to(TESTS.parent)))
    ]
    assert not bad, "a module imports a test module (move what they share to tests/support/):\n" + "\n".join(bad)


def _mirrored_folders() -> set[Path]:
    """The folders a test module may live in: one per package part, as the packages stand."""
    bank = TESTS.parent / "frcore" / "bank"
    layers = {p.name for p in bank.iterdir() if (p / "__init__.py").is_file()}
    return {TESTS, *(TESTS / d for d in ("core", "bank", "bench", "theory", "experiments", "figures"))} | {
        TESTS / "bank" / layer for layer in layers
    }


def test_test_modules_mirror_the_packages():
    allowed = _mirrored_folders()
    assert TESTS / "bank" / "storage" in allowed and TESTS / "bank" / "pipeline" in allowed
    tests = [p for p in _python_files() if _test_like(p.stem)]
    assert len(tests) > 50 and any(p.parent == TESTS / "bank" / "storage" for p in tests)
    stray = [str(p.relative_to(TESTS.parent)) for p in tests if p.parent not in allowed]
    assert not stray, "a test module outside the folders that mirror the packages:\n" + "\n".join(stray)


def test_shared_modules_are_not_named_as_tests():
    """pytest collects ``*_test.py`` as well as ``test_*.py``: a shared module named so would be
    collected as tests (and flagged above wherever it is imported)."""
    assert not [p for p in _python_files() if p.stem.endswith("_test")]


def test_the_reader_catches_every_form():
    src = (
        "import os\n"
        "import test_a\n"
        "import test_b as b, json\n"
        "from test_c import x, y\n"
        "from support.ledger import base_results\n"
        "def f():\n"
        "    from test_d import z\n"
        "from . import test_e, helpers\n"
        "from .test_f import w\n"
        "import pkg.test_g\n"
        "from pkh import h_test\n"
        "import frcore.bank, contest\n"
    )
    assert imports_of_test_modules(src, "tests/x.py") == [
        "tests/x.py:2: imports test_a",
        "tests/x.py:3: imports test_b",
        "tests/x.py:4: imports test_c",
        "tests/x.py:7: imports test_d",
        "tests/x.py:8: imports .test_e",
        "tests/x.py:9: imports .test_f",
        "tests/x.py:10: imports pkg.test_g",
        "tests/x.py:11: imports pkh.h_test",
    ]


def _starts_a_child():
    import subprocess

    return subprocess.run


def _through_a_helper():
    return _starts_a_child()


def test_a_test_that_starts_a_process_through_a_helper_is_integration():
    """tests/conftest.py marks a test ``integration`` when it, or a helper of the tests it calls
    (followed three calls deep), starts or kills a process (``make test-fast`` leaves it out)."""
    import conftest

    def direct():
        return _starts_a_child()

    def indirect():
        return _through_a_helper()

    def plain():
        return len("no process")

    assert conftest.spawns(direct) and conftest.spawns(indirect) and not conftest.spawns(plain)
