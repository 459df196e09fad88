"""Search queries: Pi's parse (checked against Pi's own parseSearchQuery), the FTS5 expression (never read as
FTS5 syntax, whatever the text), the exact post-filter and snippets."""

from __future__ import annotations

import functools
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pitree.session.query import first_match, matches, parse_query, required_literals, snippet, to_fts_match

REPO = Path(__file__).resolve().parents[2]
PI_SEARCH = (
    REPO / "bench/node_modules/@mariozechner/pi-coding-agent/dist/modes/interactive/components/"
    "session-selector-search.js"
)

PARSE_CASES = [
    ("", (), (), None),
    ("   ", (), (), None),
    ("foo", ("foo",), (), None),
    ("Foo  bar\tbaz", ("Foo", "bar", "baz"), (), None),
    ('foo "node cve" bar', ("foo", "bar"), ("node cve",), None),
    ('"a b"c', ("c",), ("a b",), None),
    ('x"a b"', ("x",), ("a b",), None),
    ('"only phrase"', (), ("only phrase",), None),
    ('"   "', (), (), None),
    ('""', (), (), None),
    ('foo "unclosed bar', ("foo", '"unclosed', "bar"), (), None),
    ('a "b" "c', ("a", '"b"', '"c'), (), None),
    ("re:foo.*bar", (), (), "foo.*bar"),
    ("  re:  \\d+  ", (), (), "\\d+"),
    ('re:"x y"', (), (), '"x y"'),
    ("RE:foo", ("RE:foo",), (), None),  # the prefix is case-sensitive in Pi
    ("xre:foo", ("xre:foo",), (), None),
]


@pytest.mark.parametrize(("text", "words", "phrases", "regex"), PARSE_CASES)
def test_parse_query(text: str, words: tuple[str, ...], phrases: tuple[str, ...], regex: str | None) -> None:
    q = parse_query(text)
    assert q.words == words
    assert q.phrases == phrases
    assert (q.regex.pattern if q.regex else None) == regex
    assert q.empty == (not words and not phrases and regex is None)


@pytest.mark.skipif(shutil.which("node") is None or not PI_SEARCH.exists(), reason="Pi's package is not installed")
def test_parse_matches_pis_own_parse_search_query() -> None:
    queries = [text for text, *_ in PARSE_CASES if not text.strip().startswith("re:")]
    script = (
        f"import {{ parseSearchQuery }} from {json.dumps(PI_SEARCH.as_uri())};\n"
        f"const qs = {json.dumps(queries)};\n"
        "console.log(JSON.stringify(qs.map((q) => parseSearchQuery(q).tokens)));\n"
    )
    out = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for text, tokens in zip(queries, json.loads(out.stdout), strict=True):
        q = parse_query(text)
        assert q.words == tuple(t["value"] for t in tokens if t["kind"] == "fuzzy"), text
        assert q.phrases == tuple(t["value"] for t in tokens if t["kind"] == "phrase"), text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("re:", "empty regex"),
        ("re:   ", "empty regex"),
        ("re:(unclosed", "bad regex '(unclosed'"),
        ("re:*x", "bad regex"),
    ],
)
def test_bad_regex_is_a_clear_value_error(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_query(text)


@pytest.mark.parametrize(
    ("text", "expr"),
    [
        ("foo", '"foo"*'),
        ("foo bar", '"foo"* AND "bar"*'),
        ('"node cve"', '"node cve"*'),
        ('"Node   CVE"', '"node cve"*'),
        ('a "b c"', '"a"* AND "b c"*'),
        ("src/x.py", '"src/x.py"*'),
        ('say"hi', '"say""hi"*'),  # unbalanced: the quote is part of the word, doubled inside the FTS string
        ("AND", '"AND"*'),
        ("NEAR(a b)", '"NEAR(a"* AND "b)"*'),
        ("text:foo", '"text:foo"*'),
        ("^x", '"^x"*'),
        ("-- ::", None),  # no letters or digits: the post-filter alone decides
        ("-- foo", '"foo"*'),
        ("re:foo", None),
        ("", None),
    ],
)
def test_to_fts_match(text: str, expr: str | None) -> None:
    assert to_fts_match(text) == expr


@functools.cache
def _fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE d USING fts5(text, tokenize = 'unicode61 remove_diacritics 0')")
    conn.executemany(
        "INSERT INTO d (text) VALUES (?)",
        [("read src/core/session-manager.ts",), ("Fix the node CVE today",), ('he said "hi" AND left',), ("ünïcode",)],
    )
    return conn


@given(st.text(max_size=40))
@settings(max_examples=300, deadline=None)
def test_no_query_text_is_fts5_syntax(text: str) -> None:
    try:
        expr = to_fts_match(text)
    except ValueError:
        return  # a bad re: pattern
    if expr is not None:
        _fts().execute("SELECT rowid FROM d WHERE d MATCH ?", (expr,)).fetchall()  # never raises


@pytest.mark.parametrize(
    ("query", "rows"),
    [
        ("session", [1]),
        ("sess", [1]),  # a word matches the start of the text's words
        ("manager session", [1]),
        ('"node cve"', [2]),
        ('"cve node"', []),
        ("AND", [3]),  # an operator word is just a word
        ("ünï", [4]),
    ],
)
def test_fts_finds_the_candidates(query: str, rows: list[int]) -> None:
    expr = to_fts_match(query)
    assert expr is not None
    got = [r for (r,) in _fts().execute("SELECT rowid FROM d WHERE d MATCH ? ORDER BY rowid", (expr,))]
    assert got == rows


@pytest.mark.parametrize(
    ("query", "text", "ok"),
    [
        ("foo", "a FOO b", True),
        ("foo bar", "bar then foo", True),
        ("foo bar", "foo only", False),
        ("anager", "session-manager", True),  # the exact test is a substring
        ('"node cve"', "the Node\n  CVE fix", True),
        ('"node cve"', "node-cve", False),
        ('"a b" c', "c and a b", True),
        ('"a b" c', "a b", False),
        ("re:fo+\\b", "xx FOOO yy", True),
        ("re:^abc$", "abcd", False),
        ("--", "git log --oneline", True),
        ("", "anything", True),
        ('say"hi', 'they say"hi"', True),
    ],
)
def test_matches(query: str, text: str, ok: bool) -> None:
    assert matches(query, text) is ok
    assert matches(parse_query(query), text) is ok


@pytest.mark.parametrize(
    ("query", "text", "span"),
    [
        ("bar", "foo bar", (4, 7)),
        ("zzz bar", "foo BAR zzz", (4, 7)),
        ('"a   b"', "x a\n b", (2, 6)),
        ("re:\\d+", "ab 123", (3, 6)),
        ("nope", "abc", None),
    ],
)
def test_first_match(query: str, text: str, span: tuple[int, int] | None) -> None:
    assert first_match(query, text) == span


def test_snippet_is_one_line_around_the_match() -> None:
    text = "x" * 300 + " needle\nin the\thaystack " + "y" * 300
    s = snippet("needle", text, width=60)
    assert "needle in the haystack" in s
    assert s.startswith("…") and s.endswith("…") and "\n" not in s
    assert len(s) <= 62
    assert snippet("nothing", "short text") == "short text"
    assert snippet("zz", "a b zz") == "a b zz"


@pytest.mark.parametrize(
    ("query", "literals"),
    [
        ("re:fix(ed|es)? the \\w+ bug", [" the ", " bug", "fix"]),
        ("re:abc|def", []),  # an alternation: nothing is certain
        ("re:foo.*BAR", ["bar", "foo"]),
        ("re:(?x) a b  c", ["abc"]),
        ("re:ab?", []),
        ("re:x{2}yy", ["yy"]),
        ("re:ünï", []),  # LIKE folds ASCII case only
        ("Foo bar x", ["bar", "foo"]),
        ('"Node  CVE" --', ["node", "cve", "--"]),
        ("abcdef abcde abcd abc", ["abcdef", "abcde", "abcd"]),
    ],
)
def test_required_literals(query: str, literals: list[str]) -> None:
    assert required_literals(query) == literals


@given(st.text(alphabet="ab()|?*+.^$\\[]{}-x 0123", max_size=12), st.text(alphabet="abxAB 0123-", max_size=20))
@settings(max_examples=400, deadline=None)
def test_required_literals_never_reject_a_match(pattern: str, text: str) -> None:
    try:
        q = parse_query("re:" + pattern)
    except ValueError:
        return
    if q.regex is not None and matches(q, text):
        assert all(lit in text.lower() for lit in required_literals(q))
