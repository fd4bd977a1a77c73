"""CPU dispatch mode (:func:`frcore.prefer_sync_cpu_dispatch`): takes effect only before JAX's
backend starts, ``FR_ASYNC_DISPATCH=1`` keeps JAX's default, and the ``fr`` command applies it.
Each case runs in a fresh interpreter: the setting is per process and read once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.paths import ROOT

ROOT = str(ROOT)


def _run(code: str, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k != "FR_ASYNC_DISPATCH"}
    e.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=e, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_sync_before_backend_start():
    code = (
        "import frcore, jax; ok = frcore.prefer_sync_cpu_dispatch(); jax.numpy.ones(1).block_until_ready(); "
        "print(ok, frcore.cpu_dispatch_mode(), jax.config.read('jax_cpu_enable_async_dispatch'))"
    )
    assert _run(code) == "True sync False"


def test_after_backend_start_changes_nothing():
    code = (
        "import frcore, jax; jax.numpy.ones(1).block_until_ready(); print(frcore.prefer_sync_cpu_dispatch(), "
        "frcore.cpu_dispatch_mode())"
    )
    assert _run(code) == "False async"


@pytest.mark.parametrize("value", ["1", "yes"])
def test_env_keeps_async(value):
    code = "import frcore; print(frcore.prefer_sync_cpu_dispatch(), frcore.cpu_dispatch_mode())"
    assert _run(code, FR_ASYNC_DISPATCH=value) == "False async"


def test_fr_command_applies_it():
    """``fr`` sets the mode before any subcommand module could start the backend: the backend a
    computation starts afterwards runs with it."""
    code = (
        "import frcore.cli as c, jax\n"
        "from jax._src import xla_bridge\n"
        "try:\n    c.main(['bank', '--help'])\nexcept SystemExit:\n    pass\n"
        "jax.numpy.zeros(1).block_until_ready()\n"
        "print(jax.config.read('jax_cpu_enable_async_dispatch'), xla_bridge.backends_are_initialized())"
    )
    assert _run(code) == "False True"
