"""A stand-in for Pi writing a session: one O_APPEND write per entry (Pi's appendFileSync), at a set rate.

Usage: python writer.py FILE COUNT RATE PARENT_ID [PREFIX] [BURST] [PAUSE]
Appends COUNT user/assistant entries chained from PARENT_ID (Pi keeps its leaf in memory and ignores what
others append), RATE per second, pausing PAUSE seconds after every BURST entries (a model thinking).
Prints "ready" before the first write and "done N" after the last.
"""

from __future__ import annotations

import os
import sys
import time

import orjson


def main() -> None:
    path, count, rate, parent = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    prefix = sys.argv[5] if len(sys.argv) > 5 else "w"
    burst = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    pause = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    print("ready", flush=True)
    start = time.monotonic()
    slept = 0.0
    for i in range(count):
        eid = f"{prefix}{i:07d}"
        role = "user" if i % 2 == 0 else "assistant"
        content = [{"type": "text", "text": f"{role} {i} " + "x" * (i % 50)}]
        entry = {
            "type": "message",
            "id": eid,
            "parentId": parent,
            "timestamp": f"2026-01-02T00:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
            "message": {"role": role, "content": content},
        }
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, orjson.dumps(entry) + b"\n")
        finally:
            os.close(fd)
        parent = eid
        if burst and (i + 1) % burst == 0:
            time.sleep(pause)
            slept += pause
        wait = start + slept + (i + 1) / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    print(f"done {count}", flush=True)


if __name__ == "__main__":
    main()
