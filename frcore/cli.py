"""The ``fr`` command. Each subcommand lives in its own module, which exposes
``register(subparsers)`` adding an argparse parser whose ``func(args) -> int`` runs it."""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand name → module providing ``register(subparsers)``
SUBCOMMANDS: dict[str, str] = {
    "latency": "experiments.latency",
    "bank": "frcore.bank.cli",
    "bench": "frcore.bench.cli",
    "theory": "theory.run",
    "calibrate": "theory.calibrate",
    "sweep": "experiments.sweeps",
    "figures": "paper_figures.build",
    "reproduce": "experiments.reproduce",
    "ledger": "experiments.ledger",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fr", description="Fortunate Recall: lifecycle layer, FR-Bank, LifecycleBench, theory and experiments.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in SUBCOMMANDS.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name and (e.name == module or module.startswith(e.name + ".") or e.name.startswith(module)):
                continue  # subcommand not built yet
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from ._runtime import prefer_sync_cpu_dispatch

    prefer_sync_cpu_dispatch()  # before any subcommand module starts JAX's backend
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError) as e:
        print(f"fr {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
