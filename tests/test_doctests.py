"""Every docstring example (``>>>``) of frcore, theory and experiments runs and prints what it shows.

Modules are discovered from the source: a module is imported only when its text holds an
example, so the cost is that of the few modules that have one. An example marked
``# doctest: +SKIP`` (one that needs MiniLM's weights or shows a session by hand) is not run.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
from support.paths import ROOT

ROOT = ROOT
PACKAGES = ("frcore", "theory", "experiments")


def modules_with_examples(root: Path = ROOT) -> list[str]:
    """Dotted names of the modules whose source holds a ``>>>`` example."""
    out = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = list(path.relative_to(root).with_suffix("").parts)
                out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


MODULES = modules_with_examples()


def run_examples(module) -> tuple[doctest.TestResults, str]:
    """Run every example of ``module``'s docstrings (its own objects only); the failures' report."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(module, module.__name__):
        runner.run(test, out=report.append)
    return runner.summarize(verbose=False), "".join(report)


def test_examples_are_found():
    """Discovery is not blind: the modules known to hold examples are among those found."""
    assert {"frcore.bench._metrics", "frcore.bench.locomo._data", "frcore.bank.search._embed"} <= set(MODULES)


def _examples_in_source(name: str) -> int:
    """Examples in the module's source (a ``>>>`` line and its ``...`` lines) not marked ``+SKIP``
    on any of their lines: the examples doctest must try."""
    path = ROOT / Path(*name.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    examples: list[list[str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.lstrip()
        if text.startswith(">>>"):
            examples.append([text])
        elif text.startswith("...") and examples:
            examples[-1].append(text)
    return sum(1 for ex in examples if not any("doctest: +SKIP" in t for t in ex))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    results, report = run_examples(importlib.import_module(name))
    assert results.failed == 0, report
    assert results.attempted == _examples_in_source(name)  # every example found and tried, none lost


def test_a_wrong_example_fails():
    """The runner reports a wrong output (the check can go red)."""
    import types

    mod = types.ModuleType("fake_examples")
    exec('def f():\n    """\n    >>> 1 + 1\n    3\n    """\n', mod.__dict__)
    for obj in vars(mod).values():
        if callable(obj):
            obj.__module__ = mod.__name__
    results, report = run_examples(mod)
    assert (results.failed, results.attempted) == (1, 1) and "Expected:\n    3" in report
