"""A synthetic Pi session store (`<root>/--<cwd>--/<time>_<uuid>.jsonl`) of N sessions totalling about S bytes.

Provides `generate_store(root, sessions, total_bytes, seed=0, fork_every=8, workers=None) -> dict` and a CLI
(`python bench/gen_store.py ROOT [--sessions N] [--size 2G] [--seed S]`). Session sizes follow a log-normal
spread (a few big files, many small ones, as real stores do), scaled to the total; each file comes from
`bench/gen_session.py`'s `generate` (its own seed, so its own project cwd, names, branches, compactions). Every
`fork_every`-th session gets `parentSession` pointing at an earlier session of the same cwd, as Pi's fork writes.
Output is a pure function of the arguments; files are written in parallel processes.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import orjson

BENCH = Path(__file__).resolve().parent
AVG_LINE = 1000  # gen_session's default mean line size


_MODULE: list[Any] = []


def _gen_session() -> Any:
    if _MODULE:  # loaded once per worker process: its text pools are built on first use
        return _MODULE[0]
    spec = importlib.util.spec_from_file_location("gen_session", BENCH / "gen_session.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _MODULE.append(module)
    return module


_LEADING = re.compile(r"^[/\\]")
_SEPS = re.compile(r"[/\\:]")


def _folder(cwd: str) -> str:
    """Pi's getDefaultSessionDir folder name (the same rule as pitree.store.catalog.cwd_folder_name)."""
    return "--" + _SEPS.sub("-", _LEADING.sub("", cwd)) + "--"


def parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*([\d.]+)\s*([kmgt]?)i?b?\s*", text.lower())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}")
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))


def plan(sessions: int, total_bytes: int, seed: int) -> list[int]:
    """Entries per session: log-normal sizes (sigma 1.4) scaled to `total_bytes`, at least 2 entries each."""
    rng = random.Random(seed)
    weights = [math.exp(rng.gauss(0, 1.4)) for _ in range(sessions)]
    scale = total_bytes / AVG_LINE / sum(weights)
    return [max(2, round(w * scale)) for w in weights]


def _one(args: tuple[str, int, int, int]) -> tuple[int, str, str, str, int]:
    tmp_dir, index, entries, seed = args
    tmp = Path(tmp_dir) / f"{index:06d}.jsonl"
    _gen_session().generate(tmp, entries, seed=seed)
    with open(tmp, "rb") as fh:
        header = orjson.loads(fh.readline())
    return index, str(tmp), header["cwd"], header["timestamp"], tmp.stat().st_size


def generate_store(
    root: Path,
    sessions: int = 2000,
    total_bytes: int = 2 << 30,
    seed: int = 0,
    fork_every: int = 8,
    workers: int | None = None,
) -> dict[str, Any]:
    """Write the store under `root` (which must not exist yet). Returns counts and bytes."""
    root = Path(root)
    root.mkdir(parents=True)
    tmp_dir = root / ".tmp"
    tmp_dir.mkdir()
    counts = plan(sessions, total_bytes, seed)
    jobs = [(str(tmp_dir), i, n, seed * 1_000_003 + i) for i, n in enumerate(counts)]
    made: list[tuple[int, str, str, str, int]] = []
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        made = sorted(pool.map(_one, jobs, chunksize=4))
    rng = random.Random(seed + 1)
    by_cwd: dict[str, list[str]] = {}
    total = forks = 0
    for index, tmp_s, cwd, stamp, _size in made:
        tmp = Path(tmp_s)
        with open(tmp, "rb") as fh:
            header = orjson.loads(fh.readline())
            rest_at = fh.tell()
        folder = root / _folder(cwd)
        folder.mkdir(exist_ok=True)
        target = folder / f"{stamp.replace(':', '-').replace('.', '-')}_{header['id']}.jsonl"
        earlier = by_cwd.setdefault(cwd, [])
        if fork_every and index % fork_every == fork_every - 1 and earlier:
            header["parentSession"] = rng.choice(earlier)
            forks += 1
            with open(tmp, "rb") as src, open(target, "wb") as dst:
                dst.write(orjson.dumps(header) + b"\n")
                src.seek(rest_at)
                shutil.copyfileobj(src, dst, 1 << 20)
            tmp.unlink()
        else:
            tmp.rename(target)
        earlier.append(str(target))
        total += target.stat().st_size
    tmp_dir.rmdir()
    return {"sessions": len(made), "bytes": total, "cwds": len(by_cwd), "forks": forks, "seed": seed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate a synthetic Pi session store.")
    parser.add_argument("root", type=Path, help="folder to create (Pi's sessions folder layout inside)")
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--size", type=parse_size, default=2 << 30, help="total size, e.g. 2G, 300M (default 2G)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fork-every", type=int, default=8, help="every Nth session is a fork (0: none)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    stats = generate_store(args.root, args.sessions, args.size, args.seed, args.fork_every)
    stats["seconds"] = round(time.perf_counter() - started, 1)
    sys.stdout.write(orjson.dumps(stats).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
