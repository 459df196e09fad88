"""The layers point one way: the model, store, summary and CLI import neither textual nor rich."""

import subprocess
import sys


def test_core_imports_no_ui() -> None:
    code = (
        "import sys, pitree.session.layout, pitree.session.context, pitree.store.session_file, pitree.store.tail, "
        "pitree.summary.prepare, pitree.report, pitree.cli; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; print(bad); assert not bad"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
