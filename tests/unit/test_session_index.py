"""The sessions index: SessionInfo by Pi's rules (also against Pi's own listAll), incremental refresh (append,
replace, delete, failures), FTS search in each query form, id prefixes, a broken database rebuilt, threads."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pitree.store.index_load as index_load
import pytest
from pitree.session.summary_info import NO_MESSAGES, SessionInfo, scan_session, search_documents, thread_sessions
from pitree.store.catalog import cwd_folder_name, find_session_files
from pitree.store.session_file import EntryReader, load_session
from pitree.store.session_index import SCHEMA_VERSION, SessionIndex

from tests.sessions import assistant, chain, entry, header, message, to_bytes, tool_result, ts, user

REPO = Path(__file__).resolve().parents[2]
PI_MANAGER = REPO / "bench/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js"

ID_A1 = "0a1a1a1a-0000-7000-8000-000000000001"
ID_A2 = "0a2a2a2a-0000-7000-8000-000000000002"
ID_B1 = "0b1b1b1b-0000-7000-8000-000000000003"
ID_B2 = "0b2b2b2b-0000-7000-8000-000000000004"


def write(folder: Path, sid: str, cwd: str, entries: list[dict[str, Any]], when: int = 0, **extra: Any) -> Path:
    """A Pi-named session file `<time>_<id>.jsonl` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    head = header(3, id=sid, cwd=cwd, timestamp=ts(when), **extra)
    path = folder / f"{ts(when).replace(':', '-').replace('.', '-')}_{sid}.jsonl"
    path.write_bytes(to_bytes(entries, head=head))
    return path


def rich_entries() -> list[dict[str, Any]]:
    """Two branches, a tool call with a path, a compaction, a branch summary, a label, names, a bash command."""
    return [
        entry("session_info", "n1", None, t=1, name="Old name"),
        user("u1", "n1", "Please refactor the session manager", t=2),
        assistant("a1", "u1", "Looking at it", t=3, calls=(("c1", "read", {"path": "src/core/tree-view.ts"}),)),
        tool_result("r1", "a1", "c1", text="TOOLRESULT-ONLY secret words"),
        user("u2", "r1", "take the other way", t=5),
        assistant("a2", "u2", "Other way done", t=6),
        entry(
            "compaction",
            "k1",
            "a2",
            t=7,
            summary="Compacted: we chose sqlite",
            firstKeptEntryId="u2",
            tokensBefore=5000,
        ),
        user("u3", "r1", "back to main", t=8),
        entry("branch_summary", "b1", "u3", t=9, fromId="a2", summary="Explored the other way with ZEBRA"),
        assistant("a3", "b1", "Main answer", t=10),
        message("x1", "a3", "bashExecution", t=11, command="pytest -q --tb=short", output="ok", exitCode=0),
        entry("label", "l1", "x1", t=12, targetId="u1", label="milestone-one"),
        entry("session_info", "n2", "l1", t=13, name="Refactor manager"),
    ]


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A Pi store under tmp_path/agent: two cwds, a fork, names, a big file, a broken file and an empty one."""
    agent = tmp_path / "agent"
    root = agent / "sessions"
    cwd_a = str(tmp_path / "projA")
    cwd_b = "/elsewhere/b"
    fa, fb = root / cwd_folder_name(cwd_a), root / cwd_folder_name(cwd_b)
    a1 = write(fa, ID_A1, cwd_a, rich_entries(), when=0)
    a2 = write(
        fa,
        ID_A2,
        cwd_a,
        [user("f1", None, "forked question", t=20), assistant("f2", "f1", "fork answer", t=21)],
        when=19,
        parentSession=str(a1),
    )
    b1 = write(
        fb,
        ID_B1,
        cwd_b,
        [
            entry("session_info", "s1", None, t=1, name="Named"),
            user("q1", "s1", "", t=2),
            user("q2", "q1", "real first", t=3),
            entry("session_info", "s2", "q2", t=4, name=""),
        ],
        when=0,
    )
    b2 = write(fb, ID_B2, cwd_b, chain(3000), when=5)
    (fb / "garbage.jsonl").write_bytes(b"this is not json\n")
    (fb / "empty.jsonl").write_bytes(b"")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return {
        "agent": agent,
        "root": root,
        "a1": a1,
        "a2": a2,
        "b1": b1,
        "b2": b2,
        "cwd_a": cwd_a,
        "cwd_b": cwd_b,
        "fa": fa,
        "fb": fb,
    }


@pytest.fixture
def index(tmp_path: Path) -> Any:
    idx = SessionIndex(tmp_path / "cache" / "index.sqlite3")
    yield idx
    idx.close()


def by_id(infos: list[SessionInfo]) -> dict[str, SessionInfo]:
    return {s.id: s for s in infos}


# ---- SessionInfo ------------------------------------------------------------------------------------------------


def test_session_info_fields(store: dict[str, Any], index: SessionIndex) -> None:
    stats = index.refresh(find_session_files(store["root"]))
    assert (stats.added, stats.errors, stats.unchanged, stats.removed) == (4, 2, 0, 0)
    infos = by_id(index.sessions())
    a1, a2, b1, b2 = infos[ID_A1], infos[ID_A2], infos[ID_B1], infos[ID_B2]
    assert (a1.name, a1.title, a1.first_message) == (
        "Refactor manager",
        "Refactor manager",
        "Please refactor the session manager",
    )
    assert (a1.entries, a1.branches, a1.compactions) == (13, 2, 1)
    assert a1.cwd == store["cwd_a"] and a1.path == store["a1"] and a1.size == store["a1"].stat().st_size
    assert a1.created == pytest.approx(1767225600000.0)
    assert a2.parent_session == str(store["a1"])
    assert (b1.name, b1.first_message, b1.title) == (None, "real first", "real first")  # an empty name clears it
    assert (b2.entries, b2.branches, b2.compactions) == (3000, 1, 0)
    assert [s.id for s in index.sessions()] == [ID_B2, ID_A2, ID_A1, ID_B1]  # latest activity first
    assert {p.name: e for p, e in index.errors()} == {
        "garbage.jsonl": "not a Pi session (no session header on the first line)",
        "empty.jsonl": "empty file",
    }


def _info_of(tmp_path: Path, entries: list[dict[str, Any]], **head: Any) -> SessionInfo:
    path = tmp_path / "one.jsonl"
    base = header(3)
    base.update(head)
    path.write_bytes(to_bytes(entries, head={k: v for k, v in base.items() if v is not None}))
    tree, _ = load_session(path)
    st = path.stat()
    info, _ = scan_session(tree, EntryReader(path, tree), path, st.st_size, 123456.0)
    return info


def _with_msg_ts(e: dict[str, Any], ms: Any) -> dict[str, Any]:
    e["message"]["timestamp"] = ms
    return e


@pytest.mark.parametrize(
    ("entries", "head", "activity"),
    [
        # message.timestamp (a number) wins over the entry timestamp, max over user and assistant messages
        ([_with_msg_ts(user("u", None, t=10), 5000), _with_msg_ts(assistant("a", "u", t=11), 7000)], {}, 7000.0),
        ([user("u", None, t=10), assistant("a", "u", t=20)], {}, 1767225620000.0),
        ([_with_msg_ts(user("u", None, t=10), "1970"), assistant("a", "u", t=20)], {}, 1767225620000.0),
        # tool results and other entries do not count
        (
            [user("u", None, t=10), tool_result("r", "u", "c", t=50), entry("label", "l", "r", t=60, targetId="u")],
            {},
            1767225610000.0,
        ),
        # a message without `content` does not count (Pi's isMessageWithContent)
        ([message("u", None, "user", t=40), user("v", "u", t=10)], {}, 1767225610000.0),
        # nothing: the header's timestamp, then the file's mtime
        ([entry("model_change", "m", None, t=5, provider="p", modelId="x")], {}, 1767225600000.0),
        ([], {"timestamp": "garbage"}, 123456.0),
        ([], {"timestamp": None}, 123456.0),
    ],
)
def test_last_activity_is_pis_modified_rule(
    tmp_path: Path, entries: list[dict[str, Any]], head: dict[str, Any], activity: float
) -> None:
    assert _info_of(tmp_path, entries, **head).last_activity == activity


@pytest.mark.parametrize(
    ("entries", "first"),
    [
        ([user("u", None, "")], NO_MESSAGES),
        ([], NO_MESSAGES),
        ([assistant("a", None, "not me"), user("u", "a", "me")], "me"),
        ([user("u", None, "x" * 5000)], "x" * 4000),  # kept to its start
        (
            [
                {
                    **user("u", None),
                    "message": {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "a"},
                            {"type": "image", "data": "x"},
                            {"type": "text", "text": "b"},
                        ],
                    },
                }
            ],
            "a b",  # Pi joins text blocks with a space
        ),
        ([{**user("u", None), "message": {"role": "user", "content": "plain string"}}], "plain string"),
    ],
)
def test_first_message(tmp_path: Path, entries: list[dict[str, Any]], first: str) -> None:
    assert _info_of(tmp_path, entries).first_message == first


def test_search_documents_without_a_reader_use_row_texts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(to_bytes(rich_entries()))
    tree, _ = load_session(path)
    docs = list(search_documents(tree))
    kinds = {(eid, kind) for eid, kind, _ in docs}
    assert {
        ("u1", "user"),
        ("a1", "assistant"),
        ("a1", "tool"),
        ("k1", "compaction"),
        ("b1", "branch_summary"),
        ("x1", "bash"),
        ("u1", "label"),
        ("n2", "name"),
    } <= kinds
    assert not any("TOOLRESULT-ONLY" in text for _, _, text in docs)  # tool results are not indexed
    full = list(search_documents(tree, EntryReader(path, tree)))
    assert {(e, k) for e, k, _ in full} == kinds
    assert ("a1", "tool", "read src/core/tree-view.ts") in full


@pytest.mark.skipif(shutil.which("node") is None or not PI_MANAGER.exists(), reason="Pi's package is not installed")
def test_info_agrees_with_pis_list_all(store: dict[str, Any], index: SessionIndex) -> None:
    script = (
        f"import {{ SessionManager }} from {json.dumps(PI_MANAGER.as_uri())};\n"
        "const all = await SessionManager.listAll();\n"
        "console.log(JSON.stringify(all.map((s) => ({path: s.path, id: s.id, cwd: s.cwd, name: s.name ?? null,"
        " first: s.firstMessage, modified: s.modified.getTime(), parent: s.parentSessionPath ?? null}))));\n"
    )
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(store["agent"])}
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    pi = json.loads(out.stdout)
    index.refresh(find_session_files(store["root"]))
    ours = [
        {
            "path": str(s.path),
            "id": s.id,
            "cwd": s.cwd,
            "name": s.name,
            "first": s.first_message,
            "modified": s.last_activity,
            "parent": s.parent_session,
        }
        for s in index.sessions()
    ]
    assert ours == pi  # same sessions, same fields, same order (modified, newest first)


def test_thread_sessions_nests_forks() -> None:
    def info(name: str, activity: float, parent: str | None = None) -> SessionInfo:
        return SessionInfo(
            Path(f"/s/{name}.jsonl"),
            name,
            "/",
            None,
            name,
            1,
            1,
            0,
            activity,
            None,
            1,
            0.0,
            f"/s/{parent}.jsonl" if parent else None,
        )

    rows = [
        info("a", 10),
        info("b", 50),
        info("a-fork1", 5, "a"),
        info("a-fork2", 60, "a"),
        info("deep", 1, "a-fork1"),
        info("orphan", 30, "missing"),
        info("loop1", 3, "loop2"),
        info("loop2", 2, "loop1"),
    ]
    got = [(s.id, d) for s, d in thread_sessions(rows)]
    assert got == [
        ("b", 0),
        ("orphan", 0),
        ("a", 0),
        ("a-fork2", 1),
        ("a-fork1", 1),
        ("deep", 2),
        ("loop1", 0),
        ("loop2", 1),
    ]


# ---- refresh -----------------------------------------------------------------------------------------------------


@pytest.mark.writes_session  # stands in for Pi appending and rewriting
def test_refresh_is_incremental(store: dict[str, Any], index: SessionIndex) -> None:
    files = find_session_files(store["root"])
    index.refresh(files)
    again = index.refresh(files)
    assert (again.added, again.updated, again.removed, again.unchanged, again.errors) == (0, 0, 0, 6, 0)

    # append: the new entry is found, counts change
    with open(store["b1"], "ab") as fh:
        fh.write(to_bytes([assistant("q3", "q2", "appended KANGAROO reply", t=30)], with_header=False))
    stats = index.refresh(files)
    assert (stats.updated, stats.unchanged) == (1, 5)
    assert by_id(index.sessions())[ID_B1].entries == 5
    assert [h.entry_id for h in index.search("kangaroo")] == ["q3"]

    # replace with a same-size file (another inode): re-read
    data = store["a2"].read_bytes().replace(b"forked question", b"FORKED QUESTION")
    tmp = store["a2"].with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, store["a2"])
    stats = index.refresh(files)
    assert stats.updated == 1
    assert by_id(index.sessions())[ID_A2].first_message == "FORKED QUESTION"

    # delete: gone from the list and from search
    store["a1"].unlink()
    stats = index.refresh(find_session_files(store["root"]))
    assert stats.removed == 1
    assert ID_A1 not in by_id(index.sessions())
    assert index.search("zebra") == []


def test_refresh_of_one_folder_leaves_the_rest(store: dict[str, Any], index: SessionIndex) -> None:
    index.refresh(find_session_files(store["root"]))
    stats = index.refresh(find_session_files(store["fa"]), root=store["fa"])
    assert (stats.removed, stats.unchanged) == (0, 2)
    assert len(index.sessions()) == 4
    assert [s.id for s in index.sessions(root=store["fa"])] == [ID_A2, ID_A1]
    assert [s.id for s in index.sessions(cwd=store["cwd_b"])] == [ID_B2, ID_B1]
    stats = index.refresh([], root=store["fa"])  # the folder was emptied
    assert stats.removed == 2 and len(index.sessions()) == 2


@pytest.mark.writes_session  # stands in for Pi appending and rewriting
def test_a_failed_file_is_retried_once_it_changes(store: dict[str, Any], index: SessionIndex) -> None:
    files = find_session_files(store["root"])
    index.refresh(files)
    assert index.refresh(files).errors == 0  # unchanged failures are not re-read
    garbage = store["fb"] / "garbage.jsonl"
    garbage.write_bytes(to_bytes([user("g", None, "fixed now")], head=header(3, id="0c0c0c0c-fixed", cwd="/x")))
    stats = index.refresh(files)
    assert stats.added == 0 and stats.updated == 1 and stats.errors == 0
    assert by_id(index.sessions())["0c0c0c0c-fixed"].first_message == "fixed now"
    assert [p.name for p, _ in index.errors()] == ["empty.jsonl"]


def test_refresh_reports_progress_and_can_be_cancelled(store: dict[str, Any], index: SessionIndex) -> None:
    files = find_session_files(store["root"])
    seen: list[tuple[int, int, int, int]] = []
    stats = index.refresh(files, progress=lambda *a: seen.append(a), cancel=lambda: len(seen) >= 3)
    assert stats.cancelled and stats.added + stats.errors == 2
    assert seen[0][0] == 0 and seen[0][1] == 6 and seen[0][3] == sum(f.stat().st_size for f in files)
    done = [s[0] for s in seen]
    assert done == sorted(done)
    rest = index.refresh(files, progress=lambda *a: seen.append(a))
    assert not rest.cancelled and rest.added + rest.errors == 4 and seen[-1][0] == seen[-1][1] == 4
    assert seen[-1][2] == seen[-1][3]


def test_worker_processes_give_the_same_index(
    store: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = find_session_files(store["root"])
    with SessionIndex(tmp_path / "one.sqlite3") as one:
        one.workers = 1
        one.refresh(files)
        expected = [(s.id, s.entries, s.branches, s.last_activity) for s in one.sessions()]
        hits = one.search("manager")
    monkeypatch.setattr(index_load, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(index_load, "IN_PROCESS_FIRST", 1)  # one file here, the rest in the workers
    with SessionIndex(tmp_path / "many.sqlite3") as many:
        many.workers = 2
        stats = many.refresh(files)
        assert (stats.added, stats.errors) == (4, 2)
        assert [(s.id, s.entries, s.branches, s.last_activity) for s in many.sessions()] == expected
        assert many.search("manager") == hits


# ---- search ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "hits"),
    [
        ("refactor", [(ID_A1, "u1", "user"), (ID_A1, "n2", "name")]),
        ("REFACTOR session", [(ID_A1, "u1", "user")]),
        ("tree-view.ts", [(ID_A1, "a1", "tool")]),
        ("src/core", [(ID_A1, "a1", "tool")]),
        ('"chose sqlite"', [(ID_A1, "k1", "compaction")]),
        ('"sqlite chose"', []),
        ("zebra", [(ID_A1, "b1", "branch_summary")]),
        ("milestone", [(ID_A1, "u1", "label")]),
        ("--tb", [(ID_A1, "x1", "bash")]),
        ("Old name", [(ID_A1, "n1", "name")]),
        ("secret", []),  # tool results are not indexed
        ("re:fork\\w+", [(ID_A2, "f1", "user")]),
        ("re:^real", [(ID_B1, "q2", "user")]),
        ("re:^u2998$", [(ID_B2, "e0002998", "user")]),
        ("nothing-like-this", []),
    ],
)
def test_search_forms(store: dict[str, Any], index: SessionIndex, query: str, hits: list[tuple[str, str, str]]) -> None:
    index.refresh(find_session_files(store["root"]))
    got = index.search(query)
    assert [(h.session_id, h.entry_id, h.kind) for h in got] == hits
    for h in got:
        assert h.title and h.path.exists() and "\n" not in h.snippet


def test_search_order_limit_and_scope(store: dict[str, Any], index: SessionIndex) -> None:
    index.refresh(find_session_files(store["root"]))
    hits = index.search("u1")  # chain(3000)'s texts u1, u10, u100…: a prefix of many words
    assert len(hits) == 200 and all(h.session_id == ID_B2 for h in hits)
    ids = [h.entry_id for h in hits]
    assert ids[:3] == ["e0000010", "e0000012", "e0000014"] and ids == sorted(ids)  # file order in a session
    assert len(index.search("u1", limit=5)) == 5
    assert index.search("answer", cwd=store["cwd_a"]) != []
    assert all(h.session_id in (ID_A1, ID_A2) for h in index.search("answer", cwd=store["cwd_a"]))
    assert [h.session_id for h in index.search("answer", root=store["fb"])] == []
    newest_first = [h.session_id for h in index.search("answer")]
    assert newest_first == [ID_A2, ID_A1]
    with pytest.raises(ValueError, match="empty search query"):
        index.search("  ")
    with pytest.raises(ValueError, match="bad regex"):
        index.search("re:[")


def test_by_id_prefix(store: dict[str, Any], index: SessionIndex) -> None:
    index.refresh(find_session_files(store["root"]))
    assert [s.id for s in index.by_id_prefix("0a1")] == [ID_A1]
    assert [s.id for s in index.by_id_prefix("0A1A")] == [ID_A1]
    assert sorted(s.id for s in index.by_id_prefix("0a")) == [ID_A1, ID_A2]
    assert index.by_id_prefix("ff") == [] and index.by_id_prefix("") == []


# ---- the database --------------------------------------------------------------------------------------------------


def test_a_corrupted_database_is_rebuilt(store: dict[str, Any], tmp_path: Path) -> None:
    db = tmp_path / "broken.sqlite3"
    db.write_bytes(b"this is certainly not an sqlite database" * 100)
    with SessionIndex(db) as idx:
        assert idx.sessions() == []
        assert idx.refresh(find_session_files(store["root"])).added == 4
    with SessionIndex(db) as idx:  # and it persists
        assert len(idx.sessions()) == 4


def test_an_old_schema_is_rebuilt(store: dict[str, Any], tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE sessions (path TEXT)")
    conn.execute("INSERT INTO sessions VALUES ('x')")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    conn.commit()
    conn.close()
    with SessionIndex(db) as idx:
        assert idx.sessions() == []
        idx.refresh(find_session_files(store["root"]))
        assert len(idx.sessions()) == 4
    assert db.stat().st_mode & 0o777 == 0o600  # it holds session text
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_default_location_is_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PITREE_CACHE_DIR", str(tmp_path / "c"))
    with SessionIndex() as idx:
        assert idx.path == tmp_path / "c" / "sessions.sqlite3"
        idx.sessions()
    assert (tmp_path / "c" / "sessions.sqlite3").exists()


def test_reading_while_another_thread_refreshes(store: dict[str, Any], index: SessionIndex) -> None:
    files = find_session_files(store["root"])
    for i in range(30):
        write(store["fa"], f"0d{i:06d}-0000-7000-8000-000000000000", store["cwd_a"], chain(200), when=100 + i)
    files = find_session_files(store["root"])
    failures: list[BaseException] = []

    def work() -> None:
        try:
            index.refresh(files)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    counts = []
    deadline = time.monotonic() + 60
    while worker.is_alive() and time.monotonic() < deadline:
        counts.append(len(index.sessions()))  # another connection, never blocked by the writer
    worker.join(60)
    assert not failures
    assert counts == sorted(counts)
    assert len(index.sessions()) == 34


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/s/a.jsonl", "/s", True),
        ("/s/--work--/a.jsonl", "/s", True),
        ("/s/--work--/deeper/a.jsonl", "/s", False),
        ("/sx/a.jsonl", "/s", False),  # a folder whose name starts with the root's
        ("/s", "/s", False),
        ("/a.jsonl", "/", True),
        ("/x/a.jsonl", "/", True),
        ("/x/y/a.jsonl", "/", False),
        ("/s/--work--/sess/agent.jsonl", "/s", True),  # oh-my-pi's subagent, under its session `sess.jsonl`
        ("/s/--work--/nosess/agent.jsonl", "/s", False),  # the same place with no session file beside it
    ],
)
def test_under_is_the_root_its_subfolders_and_their_sessions_artifacts(
    path: str, root: str, inside: bool, tmp_path: Path
) -> None:
    """`under` decides which indexed paths a folder's listing holds; it is checked on the file system only for
    the artifacts folders (that `<folder>.jsonl` is a session file)."""
    from pitree.store.index_read import under

    base = str(tmp_path)
    (tmp_path / "s" / "--work--").mkdir(parents=True)
    (tmp_path / "s" / "--work--" / "sess.jsonl").write_text("")
    if root == "/":
        assert under(path, root) is inside
    else:
        assert under(base + path, base + root) is inside
