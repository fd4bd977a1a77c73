"""The query kernel kept as a compiled executable on disk (:func:`frcore._runtime.cached_call`):
the same output as the jitted kernel, read back by a fresh process without compiling, one file
per static configuration, a damaged file compiled again, nothing written with the cache off.
Each case runs in a fresh interpreter: the cache directory is a per-process JAX setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import ROOT

ROOT = str(ROOT)

#: prints the kernel's output through cached_call and through the jitted function, as hex
_SCORE = """
import sys
import numpy as np
import frcore
from frcore import _runtime
from frcore._packed import pack_candidates, pack_params, pack_query, score_top_k_rows
from frcore._types import ScoreConfig
if sys.argv[1] == "no-compile":  # compiling would raise: the executable must come from the disk
    def refuse():
        raise AssertionError("compiled")
    _runtime._without_compilation_cache = refuse
frcore.enable_compilation_cache()
rng = np.random.default_rng(int(sys.argv[2]))
n = 48
w = rng.dirichlet(np.ones(frcore.N_CATEGORIES), size=n)
cmat = pack_candidates(frcore.make_candidates(
    sim=rng.random(n), weights=w, ages=rng.random((n, 3)) * 500, state=rng.integers(0, 4, n),
    confidence=rng.random(n), pad_to=64, device=False))
qvec = pack_query(frcore.make_query(int(rng.integers(0, 3)), rng.random(frcore.N_CATEGORIES), device=False))
pvec = pack_params(frcore.default_params())
cfg = ScoreConfig() if sys.argv[3] == "default" else ScoreConfig(routing=False)
got = np.asarray(_runtime.cached_call(score_top_k_rows, pvec, qvec, cmat, k=10, config=cfg))
again = np.asarray(_runtime.cached_call(score_top_k_rows, pvec, qvec, cmat, k=10, config=cfg))
plain = np.asarray(score_top_k_rows(pvec, qvec, cmat, 10, cfg))
print(got.tobytes().hex(), again.tobytes().hex(), plain.tobytes().hex())
"""


def _score(cache: Path | str, mode: str = "compile", seed: int = 0, config: str = "default") -> list[str]:
    env = dict(os.environ, FRCORE_JAX_CACHE=str(cache))
    out = subprocess.run(
        [sys.executable, "-c", _SCORE, mode, str(seed), config],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


def _files(cache: Path) -> list[Path]:
    return sorted((cache / "frcore-executables").glob("*.exe"))


def test_fresh_process_reads_the_executable_back(tmp_path):
    got, again, plain = _score(tmp_path)
    assert got == again == plain  # bit for bit the jitted kernel's output
    files = _files(tmp_path)
    assert len(files) == 1
    # a fresh process, unable to compile, reads it back; other inputs of the same shapes
    got2, again2, plain2 = _score(tmp_path, mode="no-compile", seed=1)
    assert got2 == again2 == plain2 and got2 != got
    assert _files(tmp_path) == files


def test_another_configuration_is_another_executable(tmp_path):
    _score(tmp_path)
    got, _, plain = _score(tmp_path, config="no-routing")
    assert got == plain
    assert len(_files(tmp_path)) == 2
    got_d, _, plain_d = _score(tmp_path, mode="no-compile", config="no-routing")
    assert got_d == plain_d


def test_a_damaged_file_is_compiled_again(tmp_path):
    _score(tmp_path)
    (path,) = _files(tmp_path)
    path.write_bytes(b"not an executable")
    got, again, plain = _score(tmp_path, seed=2)
    assert got == again == plain
    assert path.read_bytes() != b"not an executable"
    got2, _, plain2 = _score(tmp_path, mode="no-compile", seed=3)  # the rewritten file is whole
    assert got2 == plain2


def test_cache_off_writes_nothing(tmp_path):
    got, again, plain = _score("0")
    assert got == again == plain
    got_t, _, _ = _score(tmp_path)
    assert got_t == got  # the same output with and without the executable
    assert not (Path(ROOT) / "0").exists()
