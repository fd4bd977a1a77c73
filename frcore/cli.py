"""The ``fr`` command.

Its subcommands are not named here: every package declares its own in ``pyproject.toml`` as an
entry point of the group :data:`ENTRY_POINT_GROUP` (``name = "module:register"``), where
``register(subparsers)`` adds an argparse parser whose ``func(args) -> int`` runs it. A subcommand
whose entry point cannot be loaded stays listed in ``fr --help`` as unavailable, with the error;
invoking it prints the error and exits with :data:`EXIT_UNAVAILABLE`.

``fr NAME ...`` loads only the entry point of ``NAME`` (a subcommand's imports are its own: ``fr
bank query`` does not import the benchmark's statistics); ``fr``, ``fr --help`` and an unknown
name load them all.
"""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

#: the entry-point group the subcommands are declared in
ENTRY_POINT_GROUP = "frcore.commands"
#: exit status of a subcommand that could not be loaded
EXIT_UNAVAILABLE = 3


@dataclass(frozen=True)
class Unavailable:
    """A subcommand whose entry point failed to load or register."""

    name: str
    target: str  # "module:register"
    error: str  # "ExceptionType: message"
    traceback: str


def command_entry_points() -> list[EntryPoint]:
    """The declared subcommands, sorted by name."""
    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _placeholder(sub, bad: Unavailable) -> None:
    p = sub.add_parser(bad.name, add_help=False, help=f"UNAVAILABLE — failed to load {bad.target}: {bad.error}")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=lambda args: _report_unavailable(bad))


def _report_unavailable(bad: Unavailable) -> int:
    hint = "\n(a module is missing: `make setup` reinstalls the project)" if "ModuleNotFoundError" in bad.error else ""
    print(
        f"fr {bad.name}: error: this subcommand could not be loaded ({bad.target}): "
        f"{bad.error}\n{bad.traceback}".rstrip()
        + hint,
        file=sys.stderr,
    )
    return EXIT_UNAVAILABLE


def build_parser(commands: Iterable[EntryPoint] | None = None) -> tuple[argparse.ArgumentParser, list[Unavailable]]:
    """The ``fr`` parser with every declared subcommand; returns it and the subcommands that
    could not be loaded (each still listed, as a parser that reports its error)."""
    eps = command_entry_points() if commands is None else list(commands)
    parser = argparse.ArgumentParser(
        prog="fr", description="Fortunate Recall: lifecycle layer, FR-Bank, LifecycleBench, theory and experiments."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    failed: list[Unavailable] = []
    seen: set[str] = set()
    for ep in eps:
        if ep.name in seen:
            raise RuntimeError(
                f"fr: subcommand {ep.name!r} is declared twice in entry-point group {ENTRY_POINT_GROUP!r}"
            )
        seen.add(ep.name)
        try:
            register: Callable = ep.load()
            before = set(sub.choices)
            register(sub)
            if ep.name not in sub.choices:
                added = sorted(set(sub.choices) - before)
                raise RuntimeError(f"register() added {added or 'no parser'}, not {ep.name!r}")
        except Exception as e:  # a broken subcommand must not take the others down, nor vanish
            bad = Unavailable(ep.name, ep.value, f"{type(e).__name__}: {e}", traceback.format_exc(limit=-3))
            failed.append(bad)
            if ep.name in sub.choices:  # registered, then failed: never run it half-configured
                sub.choices[ep.name].set_defaults(func=lambda args, bad=bad: _report_unavailable(bad))
            else:
                _placeholder(sub, bad)
    if failed:
        parser.epilog = "unavailable (failed to load): " + "; ".join(f"{b.name} ({b.error})" for b in failed)
    elif not eps:
        parser.epilog = (
            f"no subcommands are declared (entry-point group {ENTRY_POINT_GROUP!r}): install the project (`make setup`)"
        )
    return parser, failed


def main(argv: list[str] | None = None) -> int:
    from ._runtime import enable_compilation_cache, prefer_sync_cpu_dispatch

    prefer_sync_cpu_dispatch()  # before any subcommand module starts JAX's backend
    enable_compilation_cache()
    argv = sys.argv[1:] if argv is None else list(argv)
    eps = command_entry_points()
    named = [ep for ep in eps if argv and ep.name == argv[0]]
    parser, failed = build_parser(named or eps)
    for bad in failed:
        if argv and argv[0] == bad.name:  # before argparse, which would judge its arguments
            return _report_unavailable(bad)
        print(f"fr: warning: subcommand {bad.name!r} is unavailable ({bad.target}: {bad.error})", file=sys.stderr)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe on stdout is reported here, not at exit
        return rc
    except BrokenPipeError:  # `fr bank export … | head`: the reader left; no traceback
        _detach_stdout()
        _error(args.command, "output closed early (broken pipe); the rest was not written")
        return EXIT_BROKEN_PIPE
    except (ValueError, FileNotFoundError) as e:
        _error(args.command, f"error: {e}")
        return 2
    except sqlite3.Error as e:  # a subcommand that did not map it itself
        _error(args.command, f"error: SQLite: {e}")
        return 2
    except OSError as e:  # disk full, permission denied, ... (one line, no traceback)
        _detach_stdout()
        _error(args.command, f"error: {(e.filename + ': ') if e.filename else ''}{e.strerror or e}")
        return 2
    except RecursionError:
        _error(args.command, "error: input nested too deeply to process")
        return 2
    except MemoryError:
        _error(args.command, "error: out of memory")
        return 2
    except KeyboardInterrupt:
        _error(args.command, "interrupted")
        return 130


def run() -> int:
    """The ``fr`` console script: :func:`main`, then every object left is frozen out of the
    interpreter's last garbage collections (``gc.freeze``): at exit, a full collection over the
    objects JAX's modules hold took 0.35-0.45 s of every command. Files are closed, and output
    flushed, by then; the operating system reclaims the memory."""
    rc = main()
    gc.freeze()
    return rc


#: exit status after a broken pipe on stdout (as a shell reports a command killed by SIGPIPE)
EXIT_BROKEN_PIPE = 141


def _error(command: str, message: str) -> None:
    try:
        print(f"fr {command}: {message}", file=sys.stderr)
    except OSError:
        pass


def _detach_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of the data Python still
    buffers for a closed pipe or full disk raises nothing at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(run())
