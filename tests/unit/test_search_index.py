"""`SearchIndex` finds exactly the entries whose search text holds every token, as a scan of each would."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pitree.session import search_index
from pitree.session.layout import build_layout, tokens_of
from pitree.session.load import SessionBuilder, load_bytes
from pitree.session.search_index import CHECK_EACH_BELOW, Hits
from pitree.session.spill import Spill
from pitree.session.tree import SessionTree

from tests.conftest import DEMO
from tests.unit.test_gen_session import gen


def brute(tree: SessionTree, query: str) -> set[int]:
    tokens = tokens_of(query)
    return {n.idx for n in tree.nodes if all(t in tree.search_text(n) for t in tokens)}


def words(tree: SessionTree) -> list[str]:
    """Every word of every search text, plus pieces of some (substrings match too)."""
    seen = sorted({w for n in tree.nodes for w in tree.search_text(n).split()})
    return seen + [w[1:4] for w in seen[::7] if len(w) > 4]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> SessionTree:
    path = tmp_path_factory.mktemp("gen") / "s.jsonl"
    gen.generate(path, 1500, seed=5)
    return load_bytes(path.read_bytes())


def test_every_word_of_the_demo_finds_what_a_scan_finds() -> None:
    tree = load_bytes(DEMO.read_bytes())
    for word in words(tree):
        assert tree.search_index.matching([word]) == brute(tree, word), word


@pytest.mark.parametrize("in_memory", [False, True], ids=["spilled", "in-memory"])
@pytest.mark.parametrize(("check_each_below", "block"), [(0, 7), (50, 2048), (CHECK_EACH_BELOW, 100)])
def test_several_tokens_many_and_few_hits(
    generated: SessionTree,
    check_each_below: int,
    block: int,
    in_memory: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Later tokens are checked over the whole buffer (0), or entry by entry once few candidates are left;
    the buffer in blocks of several sizes, the full ones in a spill file or (no file could be made) in memory."""
    monkeypatch.setattr(search_index, "CHECK_EACH_BELOW", check_each_below)
    monkeypatch.setattr(search_index, "BLOCK", block)
    spill = Spill(tmp_path, in_memory=in_memory)
    index = search_index.SearchIndex(generated, spill)
    vocab = words(generated)
    queries = ["user", "assistant read", "the a", "zz-none", "e", "e s", "toolresult error"]
    queries += [f"{vocab[i]} {vocab[-1 - i]}" for i in range(0, len(vocab) // 2, max(1, len(vocab) // 40))]
    for query in queries:
        assert index.matching(tokens_of(query)) == brute(generated, query), query
    assert index.matching(tokens_of("e")), "a common letter matches something"
    full = len(generated.nodes) // block
    assert (spill.on_disk > 0) == (full > 0 and not in_memory), "full blocks are in the file unless told otherwise"
    assert len(index._open) == len(generated.nodes) - full * block, "only the open block's texts are held"


def test_full_blocks_leave_memory_for_the_spill_file(generated: SessionTree, monkeypatch: pytest.MonkeyPatch) -> None:
    """By default the spill is a file with no name in pitree's cache folder; the index holds the open block."""
    monkeypatch.setattr(search_index, "BLOCK", 64)
    index = search_index.SearchIndex(generated)
    index.update()
    spill = index._spill
    texts = sum(len(search_index.entry_text(generated, n).encode()) + 1 for n in generated.nodes)
    assert spill.on_disk == texts - len(index._tail) > 0
    assert index.matching(tokens_of("read src")) == brute(generated, "read src")


def line(obj: dict[str, object]) -> bytes:
    return orjson.dumps(obj) + b"\n"


@pytest.mark.parametrize("block", [1, 2, 2048])
def test_entries_and_labels_added_later_are_found(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries fed later join the index (an open last block is made again), and so do labels."""
    monkeypatch.setattr(search_index, "BLOCK", block)
    head = line({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"})
    builder = SessionBuilder()
    builder.feed(
        head
        + line(
            {
                "type": "message",
                "id": "u1",
                "parentId": None,
                "timestamp": "2026-01-01T00:00:01Z",
                "message": {"role": "user", "content": "Ünïcode ΣΟΦΊΑ words"},
            }
        ),
        final=False,
    )
    tree = builder.tree
    index = tree.search_index
    assert index.matching(["ünïcode"]) == {0} and index.matching(["σοφία"]) == {0}
    assert index.matching(["kangaroo"]) == set()
    builder.feed(
        line(
            {
                "type": "label",
                "id": "l1",
                "parentId": "u1",
                "timestamp": "2026-01-01T00:00:02Z",
                "targetId": "u1",
                "label": "Kangaroo",
            }
        )
        + line(
            {
                "type": "message",
                "id": "u2",
                "parentId": "l1",
                "timestamp": "2026-01-01T00:00:03Z",
                "message": {"role": "user", "content": "second words"},
            }
        ),
        final=False,
    )
    assert index.matching(["kangaroo"]) == brute(tree, "kangaroo") == {0, 1}, "the label names the older entry"
    assert index.matching(["words"]) == {0, 2} and index.matching(["words", "kangaroo"]) == {0}
    assert index.matching(["words", "second"]) == brute(tree, "words second") == {2}
    builder.feed(
        line(
            {
                "type": "label",
                "id": "l2",
                "parentId": "u2",
                "timestamp": "2026-01-01T00:00:04Z",
                "targetId": "u1",
                "label": None,
            }
        ),
        final=False,
    )
    assert index.matching(["kangaroo"]) == brute(tree, "kangaroo") == {1}, "a cleared label no longer matches"


def test_a_searched_layout_shows_the_matching_rows_in_order() -> None:
    tree = load_bytes(DEMO.read_bytes())
    layout = build_layout(tree, "all")
    for word in words(tree)[::5]:
        shown = build_layout(tree, "all", word)
        expected = [r.node.id for r in layout.rows if all(t in tree.search_text(r.node) for t in tokens_of(word))]
        assert [r.node.id for r in shown.rows] == expected, word


@pytest.mark.parametrize(
    "size, indices",
    [(0, []), (1, [0]), (5, []), (5, [4]), (9, [0, 3, 8]), (4096, list(range(0, 4096, 3)))],
)
def test_hits_behave_as_the_set_of_their_entries(size: int, indices: list[int]) -> None:
    hits = Hits.of(size, indices)
    assert len(hits) == len(indices) and bool(hits) == bool(indices)
    assert list(hits) == indices  # in file order
    assert hits == set(indices) and set(indices) == hits
    assert all(i in hits for i in indices)
    assert all(i not in hits for i in range(-1, size + 2) if i not in indices) and "0" not in hits
    others = Hits.of(size, range(0, size, 2))
    assert (hits & others) == set(indices) & set(range(0, size, 2))


def test_matching_gives_hits_one_byte_an_entry(generated: SessionTree) -> None:
    index = search_index.SearchIndex(generated)
    found = index.matching(tokens_of("read src"))
    assert isinstance(found, Hits) and len(found.flags) == len(generated.nodes)
    assert found == brute(generated, "read src") and found
    assert index.matching([]) == set() and not index.matching(["no-such-word-anywhere"])


def _messages(texts: list[str]) -> bytes:
    out = line({"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/"})
    for i, text in enumerate(texts):
        parent = f"m{i - 1}" if i else None
        stamp = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        entry = {"id": f"m{i}", "parentId": parent, "timestamp": stamp}
        if "\n" in text:  # a summary's lines are searched as they are (a row's are joined)
            entry |= {"type": "branch_summary", "fromId": parent or "m0", "summary": text}
        else:
            entry |= {"type": "message", "message": {"role": "user" if i % 2 else "assistant", "content": text}}
        out += line(entry)
    return out


@pytest.mark.parametrize("mark_from", [1, 3, search_index.MARK_FROM])
@pytest.mark.parametrize("block", [5, 64])
def test_blocks_of_common_words_are_marked_as_a_scan_finds(
    mark_from: int, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block with many hits is marked line by line in C: texts with newlines (stored as spaces, so each entry
    stays one line), a word found many times in one text or at its very end, a token of regex characters, and
    a block holding the byte a hit is marked with (searched hit by hit instead) all find what a scan finds."""
    monkeypatch.setattr(search_index, "MARK_FROM", mark_from)
    monkeypatch.setattr(search_index, "MARK_GAIN", 0)  # whatever the pace of the hits so far
    monkeypatch.setattr(search_index, "BLOCK", block)
    texts = []
    for i in range(300):
        kind = i % 7
        text = ["ab ab ab", "x\nab\ny", "cab", "no match here", "a.*b (ab)", "tail ab", "ab\n\nab"][kind]
        texts.append(text + ("\x01ab" if i % 97 == 50 else ""))  # the hit byte itself, in a few blocks
    tree = load_bytes(_messages(texts))
    searched = [tree.search_text(n) for n in tree.nodes]
    assert any("\x01" in text for text in searched) and any("\n" in text for text in searched)
    for query in ["ab", "a", "b", "ab ab", ".*b", "(ab)", "x ab", "ab y", "xab", "b\x01ab", "\x01", "ab a.*b", "zz"]:
        assert tree.search_index.matching(tokens_of(query)) == brute(tree, query), repr(query)
