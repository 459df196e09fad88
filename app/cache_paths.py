"""Where pitree keeps what it can make again: `$PITREE_CACHE_DIR`, else platformdirs' user cache folder for `pitree`.

The tree cache, the kept first screens, the sessions index and the search indexes' spill files all live under it.
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
