"""Every name in frcore.__all__ imports, and the public surface the other modules rely on exists."""

from __future__ import annotations

import importlib

import pytest

import frcore as fr


@pytest.mark.parametrize("name", fr.__all__)
def test_all_names_import(name):
    mod = importlib.import_module("frcore")
    assert getattr(mod, name) is not None


def test_star_import_matches_all():
    ns: dict = {}
    exec("from frcore import *", ns)
    missing = [n for n in fr.__all__ if n not in ns]
    assert not missing


@pytest.mark.parametrize("name", fr.KERNELS)
def test_kernels_are_public(name):
    assert name in fr.__all__ and callable(getattr(fr, name))


def test_reference_module_exposes_registry_and_python_baseline():
    from frcore import reference

    assert set(reference.REFERENCE) == set(fr.KERNELS)
    assert callable(reference.score_python)
