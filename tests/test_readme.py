"""The README's promises a newcomer acts on: its Python example runs and prints what its comments
say, its two commands are the Makefile's targets, and every repository link it gives exists."""

from __future__ import annotations

import contextlib
import io
import re

from support.paths import ROOT

ROOT = ROOT
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_example_runs_as_its_comments_say(tmp_path, monkeypatch):
    (block,) = _python_blocks(README)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), {})
    # the comments: "where do I live?" serves f2 only (f1 is superseded); "where did I live
    # before?" is read as historical and serves both values of the slot
    assert out.getvalue().strip() == "['f2'] ['f1', 'f2'] historical"


def test_readme_first_commands_are_make_targets():
    first = README.split("```", 2)[1]
    targets = re.findall(r"^make (\w+)", first, flags=re.M)
    assert targets == ["reproduce", "test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for t in targets:
        assert re.search(rf"^{t}:", makefile, flags=re.M), t


def test_readme_and_docs_links_point_inside_the_repository():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = []
    for page in pages:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(encoding="utf-8"), flags=re.S)  # not code
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose):
            if re.match(r"[a-z]+://", target):
                continue
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} → {target}")
    assert not missing, missing
