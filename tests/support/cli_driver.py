"""Running ``fr bank`` commands in a child process (tests/bank/test_bank_errors.py, tests/bank/test_cli_limits.py):
:func:`_drive` runs several in one child, :data:`PERMISSIONS` is the command prefix under which a child
honours file permissions (``None`` where that cannot be arranged)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

# One child process runs several `fr` commands (each fresh process pays the imports, seconds on
# 2 cores): argv lists in, [exit status, stdout, stderr] per command out.
DRIVER = """
import contextlib, io, json, sys
from frcore import cli
out = []
for argv in json.loads(sys.argv[1]):
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
        code = cli.main(argv)
    out.append([code, o.getvalue(), e.getvalue()])
sys.__stdout__.write(json.dumps(out))
"""


def _drive(commands, prefix=(), setup="", **kw) -> list[tuple[int, str, str]]:
    script = setup + DRIVER
    r = subprocess.run(
        [*prefix, sys.executable, "-c", script, json.dumps([["bank", *map(str, c)] for c in commands])],
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    return [tuple(x) for x in json.loads(r.stdout)]


def _honouring_permissions() -> list[str] | None:
    """A command prefix under which a child honours file permissions. Root ignores them
    (CAP_DAC_OVERRIDE), so as root the child runs under ``setpriv`` without the capabilities that
    override them: root without them, to whom a 0555 folder or 0444 file is read-only.
    ``None`` when that is not possible here."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]
    ok = subprocess.run([*prefix, "true"], capture_output=True).returncode == 0
    return prefix if ok else None


PERMISSIONS = _honouring_permissions()
