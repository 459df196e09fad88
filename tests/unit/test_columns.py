"""`Columns` keeps what entries used to hold as attributes (estimate, model, usage, meta); `node_class` places
entries in them; a tool result's call id and a turn's calls share one slot."""

from __future__ import annotations

from array import array

import pytest
from pitree.session import segment
from pitree.session.entries import Columns, Node, node_class, pack_usage
from pitree.session.load import load_bytes

from tests.sessions import assistant, to_bytes, tool_result, user


def placed(at: Columns, n: int) -> list[Node]:
    cls = node_class(at)
    out = []
    for i in range(n):
        at.put(i, i + 1, i * 10, 9, 0.0)
        node = cls()
        node.idx = i
        out.append(node)
    return out


def test_a_node_class_per_columns_and_a_plain_node_placed_nowhere() -> None:
    at = Columns()
    assert node_class(at) is node_class(at) and issubclass(node_class(at), Node)
    assert node_class(Columns()) is not node_class(at)
    plain = Node()
    with pytest.raises(IndexError):
        plain.est = 3
    with pytest.raises(IndexError):
        plain.model = ("p", "m")
    with pytest.raises(IndexError):
        plain.meta = {"a": 1}
    assert not hasattr(plain, "__dict__")  # still slots only


def test_estimates_widen_past_four_bytes() -> None:
    at = Columns()
    a, b = placed(at, 2)
    a.est, b.est = 7, 2**40
    assert (a.est, b.est) == (7, 2**40)
    b.est = -1
    assert b.est == -1
    no_usage = array("q", [0, 0]).tobytes()
    lines, offsets, ts = array("q", [3, 4]), array("q", [30, 40]).tobytes(), array("d", [0.0, 0.0]).tobytes()
    at.extend_packed(2, lines, 0, offsets, offsets, ts, ("q", array("q", [5, 2**50]).tobytes()), b"", no_usage)
    assert at.est[2:].tolist() == [5, 2**50] and at.est[:2].tolist() == [7, -1]
    narrow = Columns()
    narrow.extend_packed(0, lines, 0, offsets, offsets, ts, ("q", array("q", [5, 2**40]).tobytes()), b"", no_usage)
    assert narrow.est.tolist() == [5, 2**40] and narrow.line.tolist() == [3, 4]


def test_models_are_numbered_once_each_and_unhashable_ones_kept() -> None:
    at = Columns()
    a, b, c, d = placed(at, 4)
    a.model, b.model = ("anthropic", "claude"), ("anthropic", "claude")
    c.model = (["a", "list"], {"an": "object"})
    assert a.model is b.model and len(at.models) == 2 and d.model is None
    assert c.model == (["a", "list"], {"an": "object"})
    at.extend_models(4, [("anthropic", "claude"), (["x"], None)], array("I", [1, 2]))
    assert at.model_of(4) is a.model and at.model_of(5) == (["x"], None)


def test_models_equal_in_python_but_not_in_json_stay_apart() -> None:
    at = Columns()
    one, true, text = placed(at, 3)
    one.model, true.model, text.model = (1, "m"), (True, "m"), ("1", "m")
    assert [type(n.model[0]) for n in (one, true, text)] == [int, bool, str]
    at.extend_models(3, [(True, "m"), (1, "m")], array("I", [1, 2]))
    assert type(at.model_of(3)[0]) is bool and type(at.model_of(4)[0]) is int


def test_usage_only_on_the_newest_entry_and_cut_with_it() -> None:
    at = Columns()
    a, b = placed(at, 2)
    with pytest.raises(ValueError):
        a._usage = pack_usage((1, 2, 3, 4, 10, 0.5))
    b.usage = (1, 2, 3, 4, 10, 0.5)
    b.usage = (5, 6, 7, 8, 26, 1.0)  # set again: replaces
    assert b.usage == (5, 6, 7, 8, 26, 1.0) and a.usage is None
    at.put(2, 3, 20, 9, 0.0)
    at.set_usage(2, pack_usage((9, 9, 9, 9, 36, 0)))
    at.cut(2)  # entry 2 read again: its usage goes, entry 1's stays
    assert at.usage_of(1) == pack_usage((5, 6, 7, 8, 26, 1.0)) and len(at.usage_end) == 2
    at.cut(4)  # a gap: padded with none
    assert at.usage_of(2) is None and at.usage_of(3) is None


def test_meta_by_idx_is_cut_with_its_entries() -> None:
    at = Columns()
    a, b, c = placed(at, 3)
    a.meta, c.meta = {"x": 1}, {"y": 2}
    assert b.meta is None and c.meta == {"y": 2}
    at.cut(2)
    assert at.meta == {0: {"x": 1}}
    a.meta = None
    assert at.meta == {}


def test_a_tool_result_has_a_call_id_and_no_calls_and_a_turn_the_reverse() -> None:
    tree = load_bytes(
        to_bytes(
            [
                user("u1", None, "go"),
                assistant("a1", "u1", "", calls=(("call-1", "bash", {"command": "ls"}),)),
                tool_result("t1", "a1", "call-1", "bash", "files"),
            ]
        )
    )
    a1, t1 = tree.get("a1"), tree.get("t1")
    assert a1.call_id is None and a1.call_ids() == ("call-1",)
    assert t1.call_id == "call-1" and t1.calls is None and t1.call_ids() == () and t1.call_text("call-1") is None
    assert t1.call_id is a1.call_ids()[0]  # one copy of the string
    with pytest.raises(ValueError):
        a1.call_id = "other"
    with pytest.raises(ValueError):
        t1.calls = (("x", "y"),)
    packed = dict(zip(segment.FIELDS, segment.pack(tree.nodes), strict=True))
    calls = dict(zip(packed["ids"], packed["calls"], strict=True))
    assert calls["t1"] == "call-1" and calls["a1"] == (("call-1", a1.calls[0][1]),)


def test_type_role_and_flags_share_one_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    from pitree.session import entries

    from tests.sessions import entry

    tree = load_bytes(to_bytes([user("u1", None), assistant("a1", "u1"), user("u2", "a1"), entry("custom", "c", "u2")]))
    u1, a1, u2, c = tree.nodes
    assert (u1.type, u1.role, c.type, c.role) == ("message", "user", "custom", None)
    assert u1._tag is u2._tag and u1._tag is not a1._tag  # one tuple a kind of entry
    u2.flags |= entries.IS_ERROR
    assert u2.flags == entries.IS_ERROR and u1.flags == 0 and (u2.type, u2.role) == ("message", "user")
    u2.role = "assistant"
    assert u2._tag == ("message", "assistant", entries.IS_ERROR) and u1.role == "user"
    # a file of made-up types: past TAGS_MAX kinds, each entry has its own tuple, with the same values
    monkeypatch.setattr(entries, "_TAGS", {})
    monkeypatch.setattr(entries, "TAGS_MAX", 2)
    many = load_bytes(to_bytes([entry(f"type{i}", f"e{i}", None) for i in range(6)] + [user("u", None)]))
    assert [n.type for n in many.nodes] == [f"type{i}" for i in range(6)] + ["message"]
    assert many.nodes[-1].role == "user" and len(entries._TAGS) == 2
