"""``python -m cubind.graph.apps.processes PART.yaml [PART.yaml ...] [--param ...]``:
starts every part of an app split across processes on this host (each as
``python -m cubind.graph PART.yaml``, as one would by hand, one command per
process), prefixes each line they print with the part's name, and waits.

A ``--param entity/component/key=value`` goes to each part that has the
entity. When a part fails, the others get ``--grace`` seconds to end on
their own (their peer is gone: they report it), then SIGTERM (a clean stop),
then SIGKILL. Exit status: 0 when every part ended well, else the first
failing part's. ``--timeout`` ends a run of the parts that lasts longer."""

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

from cubind.graph.model.errors import GraphError

from .loader import parse_override, yaml_module


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m cubind.graph.apps.processes",
                                     description="Start the parts of a cubind.graph app split across processes.")
    parser.add_argument("parts", nargs="+", help="one YAML app per process")
    parser.add_argument("--param", action="append", default=[], metavar="ENTITY/COMPONENT/KEY=VALUE",
                        help="override a parameter in each part that has the entity; repeatable")
    parser.add_argument("--threads", type=int, default=None, help="passed to each part")
    parser.add_argument("--grace", type=float, default=10.0, help="seconds the others get after a part fails")
    parser.add_argument("--timeout", type=float, default=None, help="end the parts after this many seconds")
    return parser.parse_args(argv)


def entity_names(path):
    """The entity names of a YAML app (to route ``--param``s)."""
    try:
        documents = list(yaml_module().safe_load_all(Path(path).read_text()))
    except OSError as exc:
        raise GraphError(f"cannot read the part {str(path)!r}: {exc.strerror}") from None
    return {d.get("name") for d in documents if isinstance(d, dict) and d.get("name")}


def commands(parts, params, threads=None):
    """The command of each part, with the ``--param``s whose entity it has."""
    overrides = [(text, parse_override(text)[0]) for text in params]
    names = {part: entity_names(part) for part in parts}
    for text, entity in overrides:
        if not any(entity in found for found in names.values()):
            raise GraphError(f"--param {text!r}: no part has an entity {entity!r}")
    out = []
    for part in parts:
        command = [sys.executable, "-m", "cubind.graph", str(part)]
        for text, entity in overrides:
            if entity in names[part]:
                command += ["--param", text]
        if threads is not None:
            command += ["--threads", str(threads)]
        out.append(command)
    return out


def _pump(name, stream, lock):
    for line in stream:
        with lock:
            sys.stdout.write(f"[{name}] {line}")
            sys.stdout.flush()


def run(parts, params=(), threads=None, grace=10.0, timeout=None):
    """Starts the parts, waits; returns ``{part: exit status}`` (None: killed)."""
    cmds = commands(parts, params, threads)
    lock = threading.Lock()
    procs, pumps = {}, []
    for part, command in zip(parts, cmds):
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        procs[part] = proc
        pump = threading.Thread(target=_pump, args=(Path(part).stem, proc.stdout, lock), daemon=True)
        pump.start()
        pumps.append(pump)
    end = None if timeout is None else time.monotonic() + timeout
    failed_at = None
    while [p.poll() for p in procs.values()].count(None):  # every part polled: its status is read
        now = time.monotonic()
        if failed_at is None and any(p.returncode not in (None, 0) for p in procs.values()):
            failed_at = now
        if (failed_at is not None and now - failed_at > grace) or (end is not None and now > end):
            _stop(procs.values())
            break
        time.sleep(0.05)
    for pump in pumps:
        pump.join(5)
    return {part: p.returncode for part, p in procs.items()}


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 5
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main(argv=None):
    args = _arguments(sys.argv[1:] if argv is None else argv)
    try:
        codes = run(args.parts, args.param, args.threads, args.grace, args.timeout)
    except GraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    status = 0
    for part, code in codes.items():
        print(f"{part}: exit status {code}")
        if code != 0 and status == 0:
            status = code if isinstance(code, int) and code > 0 else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
