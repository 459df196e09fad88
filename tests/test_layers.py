"""The layers point one way, checked in fresh interpreters and from the source itself:
- nothing under app/ loads textual or pitree.widgets (every module imported, the package walked);
- the model, store, summary and the CLI's JSON commands load neither textual nor rich (rich is the text output's);
- there is no import circle among app/ modules, nor among widgets/ modules (read from the AST of every file)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sessions import assistant, entry, to_bytes, user

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"pitree": ROOT / "app", "pitree.widgets": ROOT / "widgets"}

CHECK = """
import sys
{body}
bad = sorted(m for m in sys.modules if m.split('.')[0] in {ui!r} or m.startswith('pitree.widgets'))
print(bad)
raise SystemExit(1 if bad else 0)
"""


def run_check(body: str, ui: tuple[str, ...] = ("textual", "rich")) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHECK.format(body=body, ui=ui)], capture_output=True, text=True, timeout=120
    )


WALK_APP = """
import importlib, pkgutil
import pitree
for info in pkgutil.walk_packages(pitree.__path__, "pitree."):
    if not info.name.startswith("pitree.widgets") and not info.name.startswith("pitree.assets"):
        importlib.import_module(info.name)
"""


def test_no_module_under_app_loads_textual_or_widgets() -> None:
    out = run_check(WALK_APP, ui=("textual",))
    assert out.returncode == 0, out.stdout + out.stderr


def test_core_packages_and_every_module_in_them() -> None:
    body = """
import importlib, pkgutil
import pitree, pitree.session, pitree.store, pitree.summary, pitree.cli.report, pitree.cli.main
for pkg in (pitree.session, pitree.store, pitree.summary):
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(info.name)
"""
    out = run_check(body)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("body", ["import rich.text", "import textual", "import pitree.widgets.status_bar"])
def test_the_check_can_fail(body: str) -> None:
    out = run_check(body, ui=("textual", "rich"))
    assert out.returncode == 1 and out.stdout.strip() != "[]"


# ---- import circles -------------------------------------------------------------------------------------------


def module_name(path: Path) -> str:
    """The dotted name of a source file under app/ or widgets/."""
    for package, folder in sorted(PACKAGES.items(), key=lambda kv: -len(kv[0])):
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([package, *parts])
    raise ValueError(path)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(source: str, name: str, is_package: bool, known: frozenset[str] = frozenset()) -> set[str]:
    """Every module `source` imports, at module level or inside functions, except under `if TYPE_CHECKING:`.
    `from a import b` imports `a.b` when that is one of the `known` modules, else `a` (where b is defined)."""
    found: set[str] = set()
    package = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            subs = {f"{module}.{alias.name}" for alias in node.names}
            found.update(subs & known)
            if not subs <= known:  # a name defined in the module itself (not only its submodules)
                found.add(module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph(files: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """Module -> the modules of the same set it imports. `files`: module name -> (source, is a package).
    Importing `a.b.c` also runs the package `a.b` first, but only what a module asks for counts as an edge:
    Python runs the parents either way, and a circle is two modules needing each other's names."""
    known = frozenset(files)
    graph: dict[str, set[str]] = {}
    for name, (source, is_package) in files.items():
        targets = {t for t in imported_names(source, name, is_package, known) if t in files and t != name}
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := dfs(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := dfs(start)) is not None:
            return found
    return None


def sources(folder: Path) -> dict[str, tuple[str, bool]]:
    return {
        module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py") for p in sorted(folder.rglob("*.py"))
    }


@pytest.mark.parametrize("layer", ["app", "widgets"])
def test_no_import_circle(layer: str) -> None:
    files = sources(ROOT / layer)
    if layer == "app":
        files = {k: v for k, v in files.items() if not k.startswith("pitree.widgets")}
    assert len(files) > 10
    cycle = find_cycle(import_graph(files))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


MAX_LINES = 400  # past this a module is asking to be split (STYLE.md rule 7)


@pytest.mark.parametrize("layer", ["app", "widgets"])
def test_no_module_is_over_400_lines(layer: str) -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / layer).rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_no_app_module_imports_widgets_or_textual() -> None:
    for name, (source, is_package) in sources(ROOT / "app").items():
        bad = {t for t in imported_names(source, name, is_package) if t.split(".")[0] == "textual"}
        bad |= {t for t in imported_names(source, name, is_package) if t.startswith("pitree.widgets")}
        assert not bad, f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize(
    ("files", "cycle"),
    [
        ({"p.a": ("import p.b", False), "p.b": ("from p import a", False)}, ["p.a", "p.b", "p.a"]),
        (
            {
                "p.a": ("def f():\n    from p.b import x", False),
                "p.b": ("from . import c", False),
                "p.c": ("import p.a", False),
            },
            ["p.a", "p.b", "p.c", "p.a"],
        ),
        (
            {
                "p.a": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import p.b", False),
                "p.b": ("import p.a", False),
            },
            None,
        ),
        ({"p": ("from p.a import x", True), "p.a": ("y = 1", False)}, None),
        ({"p": ("from .a import x", True), "p.a": ("import p", False)}, ["p", "p.a", "p"]),
    ],
)
def test_the_circle_check_can_fail(files: dict[str, tuple[str, bool]], cycle: list[str] | None) -> None:
    assert find_cycle(import_graph(files)) == cycle


@pytest.mark.parametrize(
    "argv",
    [
        ["tree", "{f}", "--json"],
        ["tree", "{f}", "--json", "--filter", "all", "--search", "hi"],
        ["context", "{f}", "--json", "--no-tiktoken"],
        ["compactions", "{f}", "--json"],
        ["info", "{f}", "--json"],
    ],
)
def test_json_commands_do_not_load_rich(tmp_path: Path, argv: list[str]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        to_bytes(
            [
                user("u1", None),
                assistant("a1", "u1"),
                entry("compaction", "c1", "a1", summary="S", firstKeptEntryId="u1", tokensBefore=1),
            ]
        )
    )
    args = [a.replace("{f}", str(path)) for a in argv]
    body = f"""
import contextlib, io
from pitree.cli.main import main
buf = io.TextIOWrapper(io.BytesIO())
with contextlib.redirect_stdout(buf):
    code = main({args!r})
assert code == 0, code
"""
    out = run_check(body)
    assert out.returncode == 0, out.stdout + out.stderr
