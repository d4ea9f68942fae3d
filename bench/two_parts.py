"""Two processes on one host, a receiver and a transmitter, for the benches
that time messages between them (graph_messages.py, ucx_paths.py)."""

import json
import random
import socket
import subprocess
import time


def free_port():
    """A TCP port free on every interface (as a UCX listener binds), chosen
    below the kernel's ephemeral range: a port bind(0) gives is one the
    kernel also hands to outgoing connections and to other bind(0)s (UCX's
    own TCP interfaces, in the part about to listen or its peer), which
    may take it before the listener binds it (CI saw "listen: Address
    already in use" from bench/ucx_floor.c)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral_low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral_low = 32768
    high = min(ephemeral_low, 65536)
    low = max(1024, high - 12000)
    for _ in range(200):
        port = random.randrange(low, max(low + 1, high))
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:  # a crowded machine: the kernel's choice
        s.bind(("0.0.0.0", 0))
        return s.getsockname()[1]


def receiver_result(rx_command, tx_command, env, timeout, head_start_s=0.0):
    """Starts the receiving part, then (after ``head_start_s``, for a
    transmitter that does not dial again) the transmitting one; the
    receiver's last line as JSON. A part that fails or outlives ``timeout``
    seconds (both are then ended) is a ``RuntimeError``."""
    return both_results(rx_command, tx_command, env, timeout, head_start_s)[0]


def both_results(rx_command, tx_command, env, timeout, head_start_s=0.0, tx_result=False):
    """As ``receiver_result``, with the transmitter's last line as JSON
    beside the receiver's where ``tx_result`` (else None)."""
    rx = subprocess.Popen(rx_command, stdout=subprocess.PIPE, text=True, env=env)
    time.sleep(head_start_s)
    tx = subprocess.Popen(tx_command, stdout=subprocess.PIPE if tx_result else None, text=True, env=env)
    try:
        out, _ = rx.communicate(timeout=timeout)
        tx_out, _ = tx.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for part in (rx, tx):
            part.kill()
            part.wait()
        raise RuntimeError(f"the parts did not end in {timeout} s") from None
    if rx.returncode or tx.returncode:
        raise RuntimeError(f"a part failed: rx {rx.returncode}, tx {tx.returncode}")
    return json.loads(out.splitlines()[-1]), json.loads(tx_out.splitlines()[-1]) if tx_result else None
