"""Write theory/rule_record.json: for every claim (theory claims and ledger rows), the commit that
introduced its rule's current text, read from ``git log``.

The rule texts of every commit are read from the source with :mod:`ast` (nothing old is
imported): each ``Row("id", …)`` call and ``@claim("id", …)`` decorator of the ``.py`` files
under ``theory/`` and ``experiments/``, with its ``Rule(...)`` / ``statements(...)`` text (a
literal, adjacent literals joined) or a module-level name bound to one. A claim's text is
*introduced* by a commit whose tree has it and none of whose parents' trees do; the latest such
commit in the history of ``HEAD`` is recorded, with every earlier text the claim had (newest
first): a claim with earlier texts had a rule, hence a verdict, before its current rule was
written. Run from a clone with its history, after committing a rule's text::

    PYTHONPATH=. python tools/rule_record.py           # writes theory/rule_record.json
    PYTHONPATH=. python tools/rule_record.py --check   # exit 1 if the file is not what git says

A rule edited in the working tree and not yet committed has no introducing commit: the tool
names it and exits 2 (commit the rule, then run the tool and commit the record).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: folders whose Python files define claims and ledger rows
FOLDERS = ("theory", "experiments")
#: call names whose first argument is a rule's text
RULE_CALLS = ("Rule", "statements")


def _git(*args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True, input=input
    ).stdout


#: calls that define a claim: ``claim("id", …)``, ``Row("id", …)`` and ``row(id="…", …)``
#: (experiments/ledger_paper.py's keyword form); the id is the first argument or ``id=``
ROW_CALLS = ("Row", "row", "claim")


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _string(node: ast.AST, consts: dict[str, object]) -> str | None:
    """A literal string, or an f-string whose fields are module-level constants (``{EPS}``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif (
                isinstance(v, ast.FormattedValue)
                and v.conversion == -1
                and v.format_spec is None
                and isinstance(v.value, ast.Name)
                and v.value.id in consts
            ):
                out.append(format(consts[v.value.id], ""))
            else:
                return None
        return "".join(out)
    return None


def _text(node: ast.AST | None, bound: dict[str, str], consts: dict[str, object]) -> str | None:
    """The rule text a node builds: ``Rule("…", …)`` / ``statements("…", …)``, or a name bound to one."""
    if node is None:
        return None
    if isinstance(node, ast.Call) and _name(node.func) in RULE_CALLS and node.args:
        return _string(node.args[0], consts)
    n = _name(node)
    return bound.get(n) if n else None


_PARSED: dict[str, tuple[dict[str, str], list[tuple[str, str | None, ast.AST | None]]]] = {}


def parse_source(src: str) -> tuple[dict[str, str], list[tuple[str, str | None, ast.AST | None]]]:
    """Module-level names bound to a rule (name → text) and every claim definition (id, its text
    when the definition states it, else the rule node to resolve against other modules' names)."""
    if src in _PARSED:
        return _PARSED[src]
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {}, []
    consts: dict[str, object] = {}
    bound: dict[str, str] = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            if isinstance(st.value, ast.Constant) and isinstance(st.value.value, (int, float, str)):
                consts[st.targets[0].id] = st.value.value
            t = _text(st.value, {}, consts)
            if t is not None:
                bound[st.targets[0].id] = t
    defs: list[tuple[str, str | None, ast.AST | None]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _name(node.func) in ROW_CALLS):
            continue
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "id"), None)
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            continue
        rule = next((k.value for k in node.keywords if k.arg == "rule"), None)
        if rule is None and _name(node.func) != "claim":
            rule = next((a for a in node.args if _text(a, {}, consts) is not None), None)
        if rule is None and any(k.arg == "claim" for k in node.keywords):
            continue  # a ledger row restating a theory claim: the claim's rule is the one recorded
        defs.append((first.value, _text(rule, bound, consts), rule))
    _PARSED[src] = (bound, defs)
    return bound, defs


def literals(src: str) -> set[str]:
    """Every string constant of a source (adjacent literals joined, as Python joins them)."""
    try:
        return {n.value for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    except SyntaxError:
        return set()


class Tree:
    """The Python sources under :data:`FOLDERS` at one commit, read through ``git cat-file``."""

    _blobs: dict[str, str] = {}

    def __init__(self, commit: str):
        self.commit = commit
        out = _git("ls-tree", "-r", commit, "--", *FOLDERS)
        self.files = {}
        for line in out.splitlines():
            meta, path = line.split("\t", 1)
            _mode, kind, sha = meta.split()
            if kind == "blob" and path.endswith(".py"):
                self.files[path] = sha
        missing = [s for s in self.files.values() if s not in Tree._blobs]
        if missing:
            raw = subprocess.run(
                ["git", "-C", str(ROOT), "cat-file", "--batch"],
                check=True,
                capture_output=True,
                input=("\n".join(missing) + "\n").encode(),
            ).stdout
            Tree._read_batch(raw, missing)

    @staticmethod
    def _read_batch(data: bytes, shas: list[str]) -> None:
        i = 0
        for sha in shas:
            nl = data.index(b"\n", i)
            size = int(data[i:nl].split()[2])
            Tree._blobs[sha] = data[nl + 1 : nl + 1 + size].decode("utf-8", "replace")
            i = nl + 1 + size + 1

    def sources(self) -> dict[str, str]:
        return {p: Tree._blobs[s] for p, s in self.files.items()}

    def rule_texts(self) -> dict[str, str]:
        """Claim id → rule text at this commit (claims whose text is not a literal are left out)."""
        parsed = [parse_source(s) for s in self.sources().values()]
        bound: dict[str, str] = {}
        for b, _ in parsed:
            bound.update(b)
        out: dict[str, str] = {}
        for _, defs in parsed:
            for cid, t, node in defs:
                t = t if t is not None else _text(node, bound, {})
                if t is not None:
                    out[cid] = t
        return out

    def has_literal(self, text: str) -> bool:
        return any(text in literals(s) for s in self.sources().values())


def history(rev: str = "HEAD") -> list[tuple[str, list[str], str]]:
    """(commit, parents, committer date) of every commit reachable from ``rev``, oldest first."""
    out = []
    for line in _git("log", "--topo-order", "--reverse", "--format=%H %P|%cI", rev).splitlines():
        ids, date = line.split("|")
        c, *parents = ids.split()
        out.append((c, parents, date))
    return out


def current_rules() -> dict[str, str]:
    """Claim id → the rule text the code states now (theory claims and the ledger's own rows)."""
    from experiments.ledger import LEDGER
    from theory._base import CLAIMS
    from theory.run import load_claim_modules

    load_claim_modules()
    out = {cid: c.rule.text for cid, c in CLAIMS.items()}
    for row in LEDGER:
        if row.rule is not None:
            if row.id in out:
                raise SystemExit(f"ledger row {row.id!r} has the id of a theory claim")
            out[row.id] = row.rule.text
    return out


def build(rev: str = "HEAD") -> tuple[dict[str, dict], list[str]]:
    """The record of every current rule, and the ids whose current text no commit introduces."""
    from theory.rule_record import text_hash

    now = current_rules()
    commits = history(rev)
    texts: dict[str, dict[str, str]] = {}
    for c, _, _ in commits:
        texts[c] = Tree(c).rule_texts()
    record: dict[str, dict] = {}
    unrecorded = []
    for cid, text in sorted(now.items()):
        seen = [(c, d, texts[c].get(cid)) for c, _, d in commits]
        intro = [
            (c, d)
            for c, parents, d in commits
            if texts[c].get(cid) == text and all(texts[p].get(cid) != text for p in parents if p in texts)
        ]
        if not intro:
            unrecorded.append(cid)
            continue
        commit, date = intro[-1]
        first = next((c, d) for c, d, t in seen if t is not None)
        earlier: list[dict] = []
        for c, parents, d in reversed(commits):  # every earlier text, newest introduction first
            t = texts[c].get(cid)
            if t is None or t == text or any(e["sha256"] == text_hash(t) for e in earlier):
                continue
            if all(texts[p].get(cid) != t for p in parents if p in texts):
                earlier.append({"sha256": text_hash(t), "commit": c, "date": d, "text": t})
        record[cid] = {
            "sha256": text_hash(text),
            "commit": commit,
            "date": date,
            "first_rule_commit": first[0],
            "first_rule_date": first[1],
            "earlier": earlier,
        }
    return record, unrecorded


def main(argv=None) -> int:
    from theory.rule_record import RECORD_PATH

    ap = argparse.ArgumentParser(prog="python tools/rule_record.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed record instead of writing it")
    ap.add_argument("--out", default=str(RECORD_PATH))
    a = ap.parse_args(argv)
    record, unrecorded = build()
    if unrecorded:
        print(f"no commit introduces the current rule text of: {', '.join(unrecorded)} (commit it first)")
        return 2
    doc = {"claims": record}
    text = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if a.check:
        same = Path(a.out).is_file() and Path(a.out).read_text(encoding="utf-8") == text
        print(f"{a.out}: {'as git says' if same else 'differs from git (run tools/rule_record.py)'}")
        return 0 if same else 1
    Path(a.out).write_text(text, encoding="utf-8")
    revised = sorted(k for k, v in record.items() if v["earlier"])
    print(f"wrote {a.out}: {len(record)} rules; revised after an earlier rule: {', '.join(revised) or 'none'}")
    from experiments.ledger import REVISIONS as LEDGER_REVISIONS
    from theory.revisions import REVISIONS as THEORY_REVISIONS

    kept = {cid: {r.text for r in rs} for cid, rs in {**THEORY_REVISIONS, **LEDGER_REVISIONS}.items()}
    for cid in revised:
        for e in record[cid]["earlier"]:
            if e["text"] not in kept.get(cid, set()):
                print(f"  {cid}: keep its earlier rule ({e['commit'][:7]}) as an executable Rule in a revisions table:")
                print(f"    {e['text']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
