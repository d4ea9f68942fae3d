"""bench/run.py end to end without a GPU (--smoke: the fake driver, tiny
counts), so the harness that produces bench/README.md's table cannot rot
between GPU runs. The numbers it prints mean nothing; the shape is checked."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_smoke_run_fills_every_row_for_c_cubind_and_the_floor(tmp_path):
    pytest.importorskip("Cython")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    try:
        import cuda._driver  # noqa: F401
        import nvrtc._nvrtc  # noqa: F401
    except ImportError:
        pytest.skip("cubind's packages are not built")
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--json", str(out_json),
                           "--markdown", str(out_md)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(out_json.read_text())
    sys.path.insert(0, str(ROOT / "bench"))
    import worker
    for backend in ("c", "cubind", "pyfloor"):
        for call in worker.SHAPES:
            value = result["medians"][backend][call]
            assert isinstance(value, float) and value > 0, (backend, call, value)
    assert isinstance(result["medians"]["cubind"]["import cuda"], float)
    table = out_md.read_text()
    assert "SMOKE RUN" in table and "| cuLaunchKernel_5_values |" in table
