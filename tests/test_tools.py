"""The developer tools under tools/ name FR-Bank's private functions to time them: every name
they wrap still exists (tools/ingest_breakdown.py once named modules and classes that had been
split, and failed only when run)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect

from support.paths import ROOT


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(f"tool_{name}", ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_part_the_ingest_breakdown_times_exists():
    parts = _tool("ingest_breakdown").PARTS
    assert len(parts) > 10
    missing = []
    for module, owner, name, label in parts:
        where = importlib.import_module(module)
        target = getattr(where, owner, None) if owner else where
        raw = None if target is None else inspect.getattr_static(target, name, None)
        if not (callable(raw) or isinstance(raw, (classmethod, staticmethod))):
            missing.append(f"{module}:{owner or '-'}.{name} ({label})")
    assert not missing, "tools/ingest_breakdown.py times what no longer exists:\n" + "\n".join(missing)
