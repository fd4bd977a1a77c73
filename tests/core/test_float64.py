"""The float64 parity run, in its own process (the x64 flag is process-wide and must be set
before JAX starts): every kernel term in float64 against the twin at float64 tolerance."""

from __future__ import annotations

import os
import subprocess
import sys

from support.paths import TESTS

SCRIPT = TESTS / "x64" / "check_parity_float64.py"


def test_kernels_match_the_twin_in_float64():
    env = {**os.environ, "JAX_ENABLE_X64": "1"}
    r = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert "float64 parity" in r.stdout


def test_the_float64_check_refuses_float32():
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    r = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "JAX_ENABLE_X64=1" in r.stderr
