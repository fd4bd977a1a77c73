"""Where things are, for tests at any depth under ``tests/``: the repository (``ROOT``), the
tests folder (``TESTS``: its ``data/``, ``fixtures/`` and ``x64/``) and the shared data beside
the repository (``SHARED_DATA``, e.g. ``SHARED_DATA / "lifemembench"``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # this file is tests/support/paths.py
TESTS = ROOT / "tests"
SHARED_DATA = ROOT / ".." / "shared" / "data"
