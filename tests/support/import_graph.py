"""The import reader of the import contract (tests/test_import_contract.py, tests/test_public_api.py):
every import of the layered packages, read from the source with :mod:`ast` (nothing is imported) —
statements at module level and inside functions, and module names given as strings."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (this file is tests/support/import_graph.py)
#: top-level packages and their layer (a package may import only from its own layer or below)
LAYERS = {"frcore": 0, "frcore_warm": 0, "theory": 1, "experiments": 2, "paper_figures": 3}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name of the importing file
    target: str  # dotted module name imported (resolved to an existing module where possible)
    names: tuple[str, ...]  # names taken with ``from target import ...`` (empty otherwise)
    line: int
    module_level: bool  # executed when the importer is imported (not inside a function)
    kind: str  # "import" | "from" | "string"

    def where(self) -> str:
        return f"{self.importer}:{self.line}"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def source_files(root: Path = ROOT) -> dict[str, Path]:
    """Every .py file of the layered packages, by dotted module name."""
    out = {}
    for pkg in LAYERS:
        for p in sorted((root / pkg).rglob("*.py")):
            out[module_name(p, root)] = p
    return out


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    p = modules.get(name)
    return p is not None and p.name == "__init__.py"


def _project_module(name: str) -> bool:
    return name.split(".")[0] in LAYERS


def _resolve(importer: str, modules: dict[str, Path], level: int, module: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` names."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not _is_package(importer, modules):
        base = base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join(base + ([module] if module else []))


def _string_target(node: ast.expr) -> str | None:
    """The module named by an ``import_module`` argument: a constant, or an f-string's literal head."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        head = str(node.values[0].value)
        return head.rstrip(".") if head.endswith(".") else head
    return None


def _is_import_module_call(node: ast.Call) -> bool:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in ("import_module", "__import__")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                out.add(id(body[0].value))
    return out


def imports_of(name: str, source: str, modules: dict[str, Path]) -> list[Import]:
    """Every import of one module: statements anywhere in it, and module names given as strings."""
    tree = ast.parse(source, filename=name)
    out: list[Import] = []
    docstrings = _docstring_nodes(tree)
    string_calls: set[int] = set()

    def visit(node: ast.AST, module_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = module_level and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    out.append(Import(name, a.name, (), child.lineno, module_level, "import"))
            elif isinstance(child, ast.ImportFrom):
                target = _resolve(name, modules, child.level, child.module)
                plain = []
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    if sub in modules:  # ``from pkg import submodule``
                        out.append(Import(name, sub, (), child.lineno, module_level, "from"))
                    else:
                        plain.append(a.name)
                if plain or not child.names:
                    out.append(Import(name, target, tuple(plain), child.lineno, module_level, "from"))
            elif isinstance(child, ast.Call) and _is_import_module_call(child) and child.args:
                t = _string_target(child.args[0])
                if t is not None:
                    if isinstance(child.args[0], ast.Constant):
                        string_calls.add(id(child.args[0]))
                    out.append(Import(name, t, (), child.lineno, False, "string"))
            elif (
                isinstance(child, ast.Constant)
                and isinstance(child.value, str)
                and id(child) not in docstrings
                and id(child) not in string_calls
                and child.value in modules
                and "." in child.value
            ):
                # a bare string naming one of our modules (a table of modules to import)
                out.append(Import(name, child.value, (), child.lineno, False, "string"))
            visit(child, inner)

    visit(tree, True)
    return [i for i in out if _project_module(i.target)]


def all_imports(root: Path = ROOT) -> list[Import]:
    modules = source_files(root)
    out = []
    for name, path in modules.items():
        out.extend(imports_of(name, path.read_text(encoding="utf-8"), modules))
    return out
