"""`pitree diff FILE A B`: text, --json, --markdown, -o/--force, id prefixes and bad ids, hostile text kept
inert, and a real session from ../shared/corpus."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.cli.main import main

from tests.sessions import assistant, user, write_session_file
from tests.unit.test_diff import forked

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
HOSTILE = "\x1b[31mred\x1b]0;title\x07 [bold]x[/bold] <script>**y**</script> \u202eevil\u009b2J"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_session_file(tmp_path / "s.jsonl", forked())


def run(capsysbinary: pytest.CaptureFixture[bytes], *args: str | Path) -> tuple[int, bytes, str]:
    code = main(["diff", *map(str, args)])
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


def test_text(session: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run(capsysbinary, session, "aa2", "ab")
    assert code == 1 and "B: id prefix 'ab' is ambiguous" in err and not out
    code, out, _ = run(capsysbinary, session, "aa2", "ab2")
    text = out.decode()
    assert code == 0
    assert "split at r1" in text and "try approach A" in text and "✗ [bash: pytest]" in text
    assert "src/p.py *" in text and "src/q.py *" in text and "[compaction: 5k tokens]" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "ab2"], "A: no entry with id 'nope' in this session"),
        (["aa2", ""], "B: no entry with id '' in this session"),
        (["aa2", "ab2", "--json", "--markdown"], "--json and --markdown: choose one"),
        (["aa2", "ab2", "-o", "x.md"], "-o writes --json or --markdown output"),
    ],
)
def test_bad_input_is_one_line(
    session: Path, capsysbinary: pytest.CaptureFixture[bytes], args: list[str], message: str
) -> None:
    code, out, err = run(capsysbinary, session, *args)
    assert code == 1 and not out
    assert err.startswith("pitree: error: ") and message in err and err.count("\n") == 1


def test_json_and_leaf(session: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, _ = run(capsysbinary, session, "aa2", "leaf", "--json")
    data = orjson.loads(out)
    assert code == 0 and data["a"] == "aa2" and data["b"] == "ab2" and data["relation"] == "siblings"
    assert data["sides"]["b"]["files"]["only"] == {"read": ["README.md"], "modified": ["src/q.py"]}
    assert data["sides"]["a"]["lastAnswer"] == {"entryId": "aa2", "text": "A is done\nsecond line"}


def test_output_file_and_force(session: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    out_path = tmp_path / "diff.md"
    code, out, _ = run(capsysbinary, session, "aa2", "ab2", "--markdown", "-o", out_path)
    assert code == 0 and b"wrote Markdown" in out
    assert out_path.read_text().startswith("# Compare two branches of s.jsonl")
    code, _, err = run(capsysbinary, session, "aa2", "ab2", "--json", "-o", out_path)
    assert code == 1 and "already exists" in err and out_path.read_text().startswith("# Compare")
    code, _, _ = run(capsysbinary, session, "aa2", "ab2", "--json", "-o", out_path, "--force")
    assert code == 0 and orjson.loads(out_path.read_bytes())["b"] == "ab2"


def test_help(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["diff", "--help"])
    assert exit_.value.code == 0
    assert b"--markdown" in capsysbinary.readouterr().out


def test_hostile_text_and_ids_stay_inert(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    bad_id = "id\x1b[2J\u202e"
    path = write_session_file(
        tmp_path / "h.jsonl",
        [
            user("u", None, HOSTILE, t=0),
            assistant(bad_id, "u", HOSTILE, t=1, calls=[("c", "read", {"path": HOSTILE})]),
            user("v", "u", HOSTILE, t=2),
        ],
    )
    for extra in ([], ["--json"], ["--markdown"]):
        code, out, _ = run(capsysbinary, path, bad_id, "v", *extra)
        assert code == 0
        for raw in (b"\x1b", b"\x07", "\u202e".encode(), "\u009b".encode()):
            assert raw not in out, (extra, raw)
        if extra == ["--markdown"]:
            assert b"<script>" not in out and b"\\*\\*y\\*\\*" in out
        if not extra:
            assert b"[bold]x[/bold]" in out  # printed as typed, never as markup
    code, out, err = run(capsysbinary, path, "nothing\x1b[31m", "v")
    assert code == 1 and "\x1b" not in err


def test_corpus_session(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = CORPUS / "before-compaction.jsonl"
    if not path.is_file():
        pytest.skip("../shared/corpus is not there")
    code, out, _ = run(capsysbinary, path, "472b726c", "leaf", "--json")
    data = orjson.loads(out)
    assert code == 0 and data["relation"] == "a-before-b" and data["ancestor"]["entryId"] == "472b726c"
    side = data["sides"]["b"]
    assert side["entries"] == 667 and side["turnCount"] == 44 and len(side["compactions"]) == 2
    assert side["toolCalls"] == 296 and side["errors"] == 22
    assert side["context"]["tokens"] == 180820
    assert "/Users/badlogic/workspaces/pi-mono/AGENTS.md" in side["files"]["modified"]
    code, out, _ = run(capsysbinary, path, "472b726c", "leaf")
    assert code == 0 and b"compaction: 175k tokens" in out


@pytest.mark.parametrize(("columns", "width"), [("90", 90), ("20", 120), ("", 120)])
def test_piped_text_is_as_wide_as_columns_says(
    session: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch, columns: str, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = run(capsysbinary, session, "aa2", "ab2")
    lines = out.decode().splitlines()
    assert code == 0 and max(len(line) for line in lines) <= width and any(len(line) > width - 30 for line in lines)
