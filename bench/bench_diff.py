"""`pitree diff` at 1M entries: two ~1k-entry sibling branches, and a ~900k-entry side against a ~1k one.

The session (made once in bench/out, ~150 MB): a 97k-entry trunk, then at its end three branches: L (900k
entries), S1 and S2 (1k each); replies carry usage, every fifth calls `read` or `edit` and gets a tool result.
`inproc`: one process loads the file, then compares S1|S2 and L|S1; wall time of each compare and the peak
RSS after the load and after each compare (what the comparison adds). `cli`: the whole `pitree diff FILE L S1
--json > /dev/null` as a child (load included), wall and peak memory, against `pitree info FILE --json` (the load
alone).

usage: python bench/bench_diff.py [--trunk 97000] [--long 900000] [--short 1000] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, PITREE, bench_env, median, run_measured  # noqa: E402

HEADER = {"type": "session", "version": 3, "id": "bench-diff", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
USAGE = {"input": 900, "output": 120, "cacheRead": 4000, "cacheWrite": 0, "totalTokens": 5020, "cost": {"total": 0.01}}


def _ts(ms: int) -> str:
    """An ISO timestamp `ms` milliseconds after 2026-01-01 (within 28 days)."""
    day, rest = divmod(ms, 86_400_000)
    h, rest = divmod(rest, 3_600_000)
    m, rest = divmod(rest, 60_000)
    return f"2026-01-{1 + day % 28:02d}T{h:02d}:{m:02d}:{rest // 1000:02d}.{rest % 1000:03d}Z"


def _branch(fh, prefix: str, parent: str | None, n: int, clock: list[int]) -> str:  # type: ignore[no-untyped-def]
    """`n` entries under `parent`: user, reply (every fifth with a tool call and its result), ...; the last id."""
    i = 0
    while i < n:
        clock[0] += 1500
        eid = f"{prefix}{i:07d}"
        if i % 2 == 0:
            msg = {"role": "user", "content": [{"type": "text", "text": f"request {i} on {prefix}: make it faster"}]}
        else:
            content: list[dict[str, object]] = [{"type": "text", "text": f"answer {i}: changed the loop"}]
            if i % 5 == 1 and i + 1 < n:
                tool = "read" if i % 10 == 1 else "edit"
                content.append(
                    {
                        "type": "toolCall",
                        "id": f"c{eid}",
                        "name": tool,
                        "arguments": {"path": f"src/{prefix}{i % 97}.py"},
                    }
                )
            msg = {
                "role": "assistant",
                "content": content,
                "provider": "p",
                "model": "m",
                "usage": USAGE,
                "stopReason": "stop",
            }
        fh.write(
            orjson.dumps({"type": "message", "id": eid, "parentId": parent, "timestamp": _ts(clock[0]), "message": msg})
        )
        fh.write(b"\n")
        parent = eid
        i += 1
        if msg["role"] == "assistant" and len(msg["content"]) > 1 and i < n:  # type: ignore[arg-type]
            rid = f"{prefix}{i:07d}"
            clock[0] += 200
            result = {
                "role": "toolResult",
                "toolCallId": f"c{eid}",
                "toolName": "read",
                "content": [{"type": "text", "text": "ok"}],
                "isError": i % 20 == 3,
            }
            fh.write(
                orjson.dumps(
                    {"type": "message", "id": rid, "parentId": parent, "timestamp": _ts(clock[0]), "message": result}
                )
            )
            fh.write(b"\n")
            parent = rid
            i += 1
    assert parent is not None
    return parent


def make_session(trunk: int, long: int, short: int) -> tuple[Path, dict[str, str]]:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"diff-{trunk}-{long}-{short}.jsonl"
    tips_path = path.with_suffix(".tips.json")
    if path.exists() and tips_path.exists():
        return path, json.loads(tips_path.read_text())
    clock = [0]
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb", buffering=1 << 20) as fh:
        fh.write(orjson.dumps(HEADER) + b"\n")
        fork = _branch(fh, "t", None, trunk, clock)
        tips = {"S1": _branch(fh, "s", fork, short, clock), "S2": _branch(fh, "x", fork, short, clock)}
        tips["L"] = _branch(fh, "l", fork, long, clock)
    tmp.rename(path)
    tips_path.write_text(json.dumps(tips))
    return path, tips


INPROC = """
import json, resource, sys, time
from pathlib import Path
from pitree.ops.diff import compare, diff_dict
from pitree.store.session_file import EntryReader, load_session_fast
path, tips = Path(sys.argv[1]), json.loads(sys.argv[2])
peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000
t0 = time.perf_counter()
tree, _ = load_session_fast(path, final=True)
out = {"entries": len(tree.nodes), "load_s": time.perf_counter() - t0, "peak_after_load_mb": peak()}
reader = EntryReader(path, tree)
for name, a, b in (("siblings", "S1", "S2"), ("long", "L", "S1")):
    t = time.perf_counter()
    diff = compare(tree, tree.resolve(tips[a]), tree.resolve(tips[b]), reader.entries)
    data = diff_dict(diff)
    out[name] = {"s": time.perf_counter() - t, "peak_mb": peak(), "entries": [diff.side_a.entries, diff.side_b.entries],
                 "turns_shown": [len(diff.side_a.turns), len(diff.side_b.turns)], "notes": diff.notes}
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trunk", type=int, default=97_000)
    ap.add_argument("--long", type=int, default=900_000)
    ap.add_argument("--short", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    path, tips = make_session(args.trunk, args.long, args.short)
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB")
    with bench_env() as env:
        out = subprocess.run(
            [sys.executable, "-c", INPROC, str(path), json.dumps(tips)], capture_output=True, env=env, check=True
        )
        inproc = json.loads(out.stdout)
        print(json.dumps(inproc, indent=1))
        cli = [
            run_measured([str(PITREE), "diff", str(path), tips["L"], tips["S1"], "--json"], env=env)
            for _ in range(args.runs)
        ]
        info = [run_measured([str(PITREE), "info", str(path), "--json"], env=env) for _ in range(args.runs)]
    print(f"cli diff L S1 --json: {median([c[0] for c in cli]):.2f} s, peak {median([c[1] for c in cli]):.0f} MB")
    wall, peak = median([c[0] for c in info]), median([c[1] for c in info])
    print(f"cli info --json (load alone): {wall:.2f} s, peak {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
