"""Two hosts, proved on one: the ping pair's parts in two network
namespaces joined by a veth pair (made without root, in a user namespace:
tests/graph/ucx_parts/netns.py), the receiver also with a mount and IPC
namespace of its own (its own /dev/shm and System V segments). Each part
reaches the other only through its veth end, as through a host's NIC; UCX
prints the protocols it picked (``UCX_PROTO_INFO=y``), and the test reads
them: TCP over the veth devices, never shared memory, CMA, CUDA IPC or
the loopback interface.

What it does not prove: another kernel, clock or GPU, a real NIC's
speed, a routed network or a firewall (docs/graph.md, "On several hosts").
It skips, saying which step failed, where the machine does not let an
unprivileged user make the namespaces."""

import json
import shutil
import subprocess
import sys

import pytest

from tests._helpers import free_port
from tests.graph.ucx_parts.processes import (  # noqa: F401 (ucxx_needed: the fixture)
    HELPERS,
    ROOT,
    SAME_HOST,
    counts,
    env,
    transports,
    ucxx_needed,
)

NAMESPACES = ["unshare", "--user", "--map-root-user", "--net", "--mount"]


def _unavailable():
    """Why this machine cannot make the namespaces, or None."""
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (util-linux, iproute2)"
    done = subprocess.run([*NAMESPACES, "true"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"{' '.join(NAMESPACES)} is not allowed here: {done.stderr.strip() or done.returncode}"
    return None


def test_the_ping_pair_crosses_two_network_namespaces_over_tcp_alone():
    reason = _unavailable()
    if reason:
        pytest.skip(f"two network namespaces cannot be made: {reason}")
    command = [*NAMESPACES, sys.executable, str(HELPERS / "netns.py"), str(free_port()), "10"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env(UCX_PROTO_INFO="y"), timeout=150)
    assert done.stdout.strip(), done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if "setup" in result:
        pytest.skip(f"two network namespaces cannot be made: {result['setup']}")
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = result["tx"], result["rx"]
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    assert "ping_rx: received 10 messages" in rx_out
    assert counts(tx_out)["tx/signal"]["sent"] == "10" and counts(rx_out)["rx/signal"]["received"] == "10"
    assert counts(tx_out)["tx/signal"]["peer"].startswith("10.200.0.2:")
    for side, output, device in (("transmitter", tx_out, "veth0"), ("receiver", rx_out, "veth1")):
        used = transports(output)
        assert used, f"the {side} printed no protocol rows (UCX_PROTO_INFO): {output[-2000:]}"
        assert {t for t, _ in used} & SAME_HOST == set(), f"the {side} used a same-host transport: {used}"
        assert {d for t, d in used if t == "tcp"} == {device}, f"the {side}'s TCP lanes: {used}"
