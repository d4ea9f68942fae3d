"""What the tests of apps split across processes share (imported by
tests/graph/test_ucx*.py alone): starting a part as one starts it by hand
(``python -m cubind.graph PART.yaml --param ...``) or with the launcher,
waiting for it with a bound (a part still running then is a hang), its
``messages`` lines as counts, a copy of a part whose codelet dies, and
the fixture that needs ucxx."""

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[3]
PARTS = ROOT / "examples" / "graph" / "ucx"
HELPERS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def ucxx_needed():
    missing = [m for m in ("ucxx", "yaml") if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI") and sys.version_info >= (3, 11):  # where scripts/_common.sh installs it
            pytest.fail(f"{', '.join(missing)} not installed; scripts/test.sh installs them")
        pytest.skip(f"{', '.join(missing)} not installed (pip install 'cubind[ucx,graph]'): UCX apps are not tested")


def env(**more):
    return dict(os.environ, PYTHONPATH=pythonpath(ROOT), UCX_WARN_UNUSED_ENV_VARS="n", **more)


def part(name, *params, threads=None, path=None):
    """Starts ``python -m cubind.graph PARTS/name`` (or ``path``) with ``--param``s."""
    command = [sys.executable, "-m", "cubind.graph", str(path or PARTS / name)]
    for p in params:
        command += ["--param", p]
    if threads:
        command += ["--threads", str(threads)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())


def wait_listening(port, proc, timeout=30):
    """Until a socket listens on ``port`` (a receiving part's UCX listener,
    read from /proc/net: no connection made to it), failing if ``proc``
    ends first. A transmitter without reconnect makes one attempt: started
    before its receiver listened, on a loaded host, it failed and left the
    receiver waiting for it."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    deadline = time.monotonic() + timeout
    while not any(_listens(table, port) for table in tables if table.exists()):
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the receiving part ended before it listened: {out}\n{err}")
        assert time.monotonic() < deadline, f"nothing listened on port {port} in {timeout} s"
        time.sleep(0.02)


def _listens(table, port):
    for line in table.read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # TCP_LISTEN
            return True
    return False


def finish(proc, timeout=60):
    """``(exit status, stdout, stderr)``; a part still running after ``timeout`` is a hang: killed, failed."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"a part hung ({timeout} s): {out}\n{err}")
    return proc.returncode, out, err


def run_processes(*parts, params=(), timeout=120, grace=10, environ=None):
    command = [sys.executable, "-m", "cubind.graph.apps.processes", *(str(PARTS / p) for p in parts),
               "--grace", str(grace)]
    for p in params:
        command += ["--param", p]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env(**(environ or {})),
                          timeout=timeout)
    return done.returncode, done.stdout, done.stderr


# UCX's transports that only reach a peer on the same host.
SAME_HOST = {"posix", "sysv", "cma", "xpmem", "knem", "cuda_ipc", "rocm_ipc", "self"}


def transports(output):
    """``{(transport, device)}`` of the rows of UCX's protocol tables
    (``UCX_PROTO_INFO=y``): their last cell names the lanes used."""
    used = set()
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 3 and "ucp_context" not in line:
            for lane in cells[-2].replace(",", " ").split():
                if "/" in lane:
                    used.add(tuple(lane.split("/", 1)))
    return used


def counts(text):
    """``{queue path: {key: value}}`` from the parts' ``messages`` lines."""
    found = {}
    for path, rest in re.findall(r"messages (\S+): (.*)", text):
        found[path] = dict(kv.split("=", 1) for kv in rest.split())
    return found


def ping(port, count=10, tx=(), rx=()):
    return ([f"tx/signal/port={port}", f"tx/count/count={count}", *tx], [f"rx/signal/port={port}", *rx])


def dying(tmp_path, name, codelet, die_at, extra=None):
    """A copy of PARTS/name whose codelet is ``codelet`` from ucx_parts/codelets.py."""
    import yaml

    docs = list(yaml.safe_load_all((PARTS / name).read_text()))
    for doc in docs:
        for comp in (doc or {}).get("components") or ():
            params = comp.get("parameters") or {}
            if "codelet_name" in params:
                params.update(codelet_name=codelet, codelet_file=str(HELPERS / "codelets.py"), die_at=die_at)
                params.pop("log_count", None)
                params.update(extra or {})
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return path


def listening(port):
    """Whether a socket of this host listens on TCP ``port`` (the kernel's
    tables: no connection is made, which a UCX listener would take for a peer)."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                return True
    return False
