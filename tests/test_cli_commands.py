"""The ``fr`` command finds its subcommands through the entry points each package declares, and a
subcommand that cannot load says so: listed as unavailable in ``fr --help``, an error naming it
and a non-zero exit status when invoked."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import pytest
from support.paths import ROOT

from frcore import cli

ROOT = ROOT
EXPECTED = {
    "bank",
    "bench",
    "calibrate",
    "compare",
    "figures",
    "latency",
    "ledger",
    "reproduce",
    "serve",
    "sweep",
    "theory",
}


def _declared() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return meta["project"]["entry-points"][cli.ENTRY_POINT_GROUP]


def test_every_subcommand_is_declared_by_its_package():
    declared = _declared()
    assert set(declared) == EXPECTED
    for target in declared.values():
        module, _, attr = target.partition(":")
        assert attr == "register" and module.split(".")[0] in ("frcore", "theory", "experiments", "paper_figures"), (
            target
        )


def test_installed_entry_points_match_pyproject():
    """The installed metadata is what ``fr`` reads: stale after editing pyproject.toml until
    ``make setup`` reinstalls."""
    installed = {ep.name: ep.value for ep in cli.command_entry_points()}
    assert installed == _declared(), "installed entry points differ from pyproject.toml: run `make setup`"


def test_help_lists_every_subcommand(capsys):
    parser, failed = cli.build_parser()
    assert not failed, failed
    with pytest.raises(SystemExit) as e:
        parser.parse_args(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in EXPECTED:
        assert f"    {name}" in out


def _with_broken(monkeypatch, *broken: EntryPoint):
    good = [ep for ep in cli.command_entry_points() if ep.name in ("bank", "ledger")]
    monkeypatch.setattr(cli, "command_entry_points", lambda: sorted(good + list(broken), key=lambda ep: ep.name))


MISSING = EntryPoint("ghost", "frcore_no_such_module.cmd:register", cli.ENTRY_POINT_GROUP)


def test_unloadable_subcommand_is_listed_as_unavailable(monkeypatch, capsys):
    _with_broken(monkeypatch, MISSING)
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    cap = capsys.readouterr()
    assert "bank" in cap.out and "ledger" in cap.out  # the rest still listed
    assert "ghost" in cap.out and "UNAVAILABLE" in cap.out and "frcore_no_such_module" in cap.out
    assert "unavailable (failed to load): ghost" in " ".join(cap.out.split())
    assert "subcommand 'ghost' is unavailable" in cap.err


@pytest.mark.parametrize("argv", [["ghost"], ["ghost", "--help"], ["ghost", "run", "--x", "1"]])
def test_invoking_an_unloadable_subcommand_fails_loudly(monkeypatch, capsys, argv):
    _with_broken(monkeypatch, MISSING)
    code = cli.main(argv)
    assert code == cli.EXIT_UNAVAILABLE != 0
    err = capsys.readouterr().err
    assert "fr ghost: error: this subcommand could not be loaded" in err and "ModuleNotFoundError" in err


def test_a_subcommand_whose_register_raises_is_unavailable(monkeypatch, capsys):
    mod = type(sys)("frcore_test_broken_cmd")

    def register(subparsers):
        subparsers.add_parser("halfway")
        raise RuntimeError("broken on purpose")

    mod.register = register
    monkeypatch.setitem(sys.modules, "frcore_test_broken_cmd", mod)
    _with_broken(monkeypatch, EntryPoint("halfway", "frcore_test_broken_cmd:register", cli.ENTRY_POINT_GROUP))
    assert cli.main(["halfway"]) == cli.EXIT_UNAVAILABLE
    assert "broken on purpose" in capsys.readouterr().err


def test_other_subcommands_still_run_when_one_is_broken(monkeypatch, capsys):
    _with_broken(monkeypatch, MISSING)
    with pytest.raises(SystemExit) as e:
        cli.main(["ledger", "--help"])
    assert e.value.code == 0
    assert "usage: fr ledger" in capsys.readouterr().out


def test_a_subcommand_loads_only_its_own_entry_point():
    """``fr bank …`` imports neither the benchmark (scipy.stats) nor bm25s: a subcommand's
    start-up cost is its own (`fr bank query` is what an agent runs per question)."""
    import subprocess

    code = (
        "import sys\n"
        "from frcore.cli import main\n"
        "try:\n    main(['bank', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('frcore.bench', 'scipy.stats', 'bm25s', 'theory', 'experiments')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_the_console_script_runs_main_and_freezes_what_is_left():
    """``fr`` is :func:`frcore_warm.run`, which runs :func:`frcore.cli.run` for every command no
    warm server answers: main's exit status, with the objects left frozen out of the
    interpreter's final garbage collections."""
    import subprocess

    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["scripts"]["fr"] == "frcore_warm:run"
    code = (
        "import gc, sys\nfrom frcore_warm import run\nsys.argv = ['fr']\nrc = run()\n"
        "print(rc, gc.get_freeze_count() > 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip().splitlines()[-1] == "2 True", out.stdout


# --- the actions of `fr bank` declared outside frcore (entry-point group frcore.bank.commands) ---

BANK_DECLARED = {"bench": "experiments.bank_bench:register"}


def test_bank_actions_declared_outside_frcore_are_installed():
    """``fr bank bench`` lives in experiments/ and is reached through an entry point: frcore never imports it."""
    from frcore.bank import cli as bank_cli

    tomllib = pytest.importorskip("tomllib")
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["entry-points"][bank_cli.ACTION_ENTRY_POINT_GROUP] == BANK_DECLARED
    installed = {ep.name: ep.value for ep in bank_cli.declared_actions()}
    assert installed == BANK_DECLARED, "installed entry points differ from pyproject.toml: run `make setup`"
    assert not (ROOT / "frcore" / "bank" / "_benchmark.py").exists()


def test_a_declared_bank_action_loads_only_when_named():
    """``fr bank --help`` lists ``bench`` without importing experiments/; ``fr bank bench --help``
    loads it and shows its own options."""
    import subprocess

    code = (
        "import sys\n"
        "from frcore.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('experiments', 'experiments.bank_bench') if m in sys.modules))"
    )

    def run(*argv):
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300)

    listed = run("bank", "--help")
    assert "    bench" in listed.stdout and listed.stdout.strip().splitlines()[-1] == "[]", listed.stdout
    named = run("bank", "bench", "--help")
    assert "usage: fr bank bench [-h] [--sizes SIZES] [--no-embedding] [--ann]" in named.stdout, named.stdout
    assert named.stdout.strip().splitlines()[-1] == "['experiments', 'experiments.bank_bench']", named.stdout


def test_an_unloadable_bank_action_fails_loudly(monkeypatch, capsys):
    from frcore.bank import cli as bank_cli

    ghost = EntryPoint("ghost", "frcore_no_such_module.cmd:register", bank_cli.ACTION_ENTRY_POINT_GROUP)
    monkeypatch.setattr(bank_cli, "declared_actions", lambda: [ghost])
    with pytest.raises(SystemExit) as e:
        cli.main(["bank", "ghost", "--x", "1"])
    assert e.value.code == cli.EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert "fr bank ghost: error: this subcommand could not be loaded (frcore_no_such_module.cmd:register)" in err
    assert "ModuleNotFoundError" in err
