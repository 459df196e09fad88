"""Where pitree keeps what it can make again: `$PITREE_CACHE_DIR`, else platformdirs' user cache folder for `pitree`.

The sessions index and the search indexes' spill files live in it; the tree cache and the kept first screens in its
`trees` folder (in `$PITREE_CACHE_DIR` itself when that is set: `store.tree_cache.cache_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    override = os.environ.get("PITREE_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_path("pitree"))
