"""Two parts of a split app as if on two hosts, on one machine and without
root: run inside a user namespace that has a network and a mount
namespace of its own,

    unshare --user --map-root-user --net --mount python netns.py PORT COUNT

it makes a veth pair, keeps veth0 (10.200.0.1) for the transmitting part
and starts the receiving part in namespaces of its own (network, mount,
IPC: its own interfaces, /sys, /dev/shm and System V segments), where
veth1 (10.200.0.2) is its only way out. Each side mounts a sysfs of its
network namespace: UCX lists the interfaces it may use there. Then the
ping pair runs, the transmitter sending to 10.200.0.2:PORT.

It prints one JSON line: ``{"tx": [status, stdout, stderr], "rx": [...]}``,
or ``{"setup": "what failed: why"}`` (exit status 77) where the machine
does not allow a step (the test then skips, saying which)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TX_ADDRESS, RX_ADDRESS = "10.200.0.1", "10.200.0.2"
PARTS = Path(__file__).resolve().parents[3] / "examples" / "graph" / "ucx"
SETUP_FAILED = 77


class Setup(Exception):
    pass


def step(what, *command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise Setup(f"{what} ({' '.join(command)}): {done.stderr.strip() or f'exit status {done.returncode}'}")


def inside(out, err, command):
    """In the receiver's new namespaces: once veth1 is moved in, address
    it, mount this namespace's sysfs and a /dev/shm of its own, then become
    the receiving part, its output into the files ``out`` and ``err`` (a
    pipe nobody reads while the transmitter runs could fill)."""
    print("ready", flush=True)
    sys.stdin.readline()
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    try:
        step("addressing veth1", "ip", "addr", "add", f"{RX_ADDRESS}/24", "dev", "veth1")
        step("bringing veth1 up", "ip", "link", "set", "veth1", "up")
        step("bringing the receiver's lo up", "ip", "link", "set", "lo", "up")
        step("mounting the receiver's sysfs", "mount", "-t", "sysfs", "sysfs", "/sys")
        step("mounting the receiver's own /dev/shm", "mount", "-t", "tmpfs", "tmpfs", "/dev/shm")
    except Setup as exc:
        print(f"setup: {exc}", file=sys.stderr)
        sys.exit(SETUP_FAILED)
    os.execvp(command[0], command)


def start_receiver(port, out, err):
    command = [sys.executable, "-m", "cubind.graph", str(PARTS / "ping_rx.yaml"), "--param", f"rx/signal/port={port}"]
    rx = subprocess.Popen(["unshare", "--net", "--mount", "--ipc", "--", sys.executable, __file__, "--inside", out, err,
                           *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if rx.stdout.readline().strip() != "ready":
        rx.kill()
        raise Setup(f"making the receiver's namespaces (unshare --net --mount --ipc): {rx.communicate()[1].strip()}")
    step("moving veth1 into the receiver's namespace", "ip", "link", "set", "veth1", "netns", str(rx.pid))
    rx.stdin.write("go\n")
    rx.stdin.close()
    return rx


def main(port, count):
    files = tempfile.mkdtemp()
    out, err = os.path.join(files, "rx.out"), os.path.join(files, "rx.err")
    try:
        step("mounting the transmitter's sysfs", "mount", "-t", "sysfs", "sysfs", "/sys")
        step("bringing lo up", "ip", "link", "set", "lo", "up")
        step("making a veth pair", "ip", "link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
        step("addressing veth0", "ip", "addr", "add", f"{TX_ADDRESS}/24", "dev", "veth0")
        step("bringing veth0 up", "ip", "link", "set", "veth0", "up")
        rx = start_receiver(port, out, err)
    except Setup as exc:
        print(json.dumps({"setup": str(exc)}))
        return SETUP_FAILED
    tx = subprocess.run([sys.executable, "-m", "cubind.graph", str(PARTS / "ping_tx.yaml"), "--param",
                         f"tx/signal/port={port}", "--param", f"tx/signal/receiver_address={RX_ADDRESS}", "--param",
                         f"tx/count/count={count}"], capture_output=True, text=True, timeout=90)
    try:
        rx.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rx.kill()
        rx.wait()
    rx_out, rx_err = Path(out).read_text(), Path(err).read_text()
    shutil.rmtree(files)
    if rx.returncode == SETUP_FAILED and rx_err.startswith("setup: "):
        print(json.dumps({"setup": rx_err.strip().removeprefix("setup: ")}))
        return SETUP_FAILED
    print(json.dumps({"tx": [tx.returncode, tx.stdout, tx.stderr], "rx": [rx.returncode, rx_out, rx_err]}))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--inside":
        inside(sys.argv[2], sys.argv[3], sys.argv[4:])
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
