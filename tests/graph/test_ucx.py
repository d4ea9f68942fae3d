"""Apps split across processes over UCX, on 127.0.0.1 (host tensors: UCX's
TCP and shared-memory transports): the ping pair and the stream/verify app
in 2 and 3 processes with exact message counts, and the faults (a peer not
up yet, one that dies, a message that cannot be decoded, a port in use, an
unreachable address, two layouts) each ending in a clear error, never a hang.

Each part is ``python -m cubind.graph PART.yaml`` (or the launcher), as one
starts them by hand; ports are picked free per test. Needs RAPIDS' ucxx
(``pip install 'cubind[ucx]'``; scripts/test.sh installs it)."""

import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from cubind.graph.ucx.wire import PROTOCOL
from tests._helpers import free_port
from tests.graph.ucx_parts.processes import (  # noqa: F401  (ucxx_needed: the autouse fixture)
    HELPERS,
    PARTS,
    ROOT,
    SAME_HOST,
    counts,
    dying,
    env,
    finish,
    part,
    ping,
    run_processes,
    transports,
    ucxx_needed,
    wait_listening,
)

# -- apps split across processes


@pytest.mark.parametrize("threads", [None, 2])
def test_the_ping_pair_in_two_processes_passes_every_message_counted_on_both_sides(threads):
    port = free_port()
    tx_params, rx_params = ping(port, count=25)
    rx = part("ping_rx.yaml", *rx_params, threads=threads)
    tx = part("ping_tx.yaml", *tx_params, threads=threads)
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = finish(tx), finish(rx)
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    assert "ping_rx: received 25 messages" in rx_out
    found = counts(tx_out + rx_out)
    assert found["tx/signal"]["sent"] == "25" and found["tx/signal"]["dropped"] == "0"
    assert found["rx/signal"]["received"] == "25" and found["rx/signal"]["dropped"] == "0"
    assert "done after 25 ticks" in tx_out and "done after 25 ticks" in rx_out


def test_the_stream_app_in_two_processes_verifies_every_pair():
    p1, p2 = free_port(), free_port()
    code, out, err = run_processes("stream_generator.yaml", "stream_verifier.yaml", params=[
        "source/generator/storage=host", f"source/host_out/port={p1}", f"source/device_out/port={p2}",
        f"verifier/first/port={p1}", f"verifier/second/port={p2}"])
    assert code == 0, out + err
    assert "verify: 20 message pairs equal" in out
    found = counts(out)
    assert {found[q]["sent"] for q in ("source/host_out", "source/device_out")} == {"20"}
    assert {found[q]["received"] for q in ("verifier/first", "verifier/second")} == {"20"}


def test_the_stream_app_in_three_processes_verifies_every_pair_through_the_relay():
    p1, p2, p3 = free_port(), free_port(), free_port()
    code, out, err = run_processes("stream_generator.yaml", "stream_relay.yaml", "stream_verifier.yaml", params=[
        "source/generator/storage=host", f"source/host_out/port={p1}", f"source/device_out/port={p2}",
        f"relay/input/port={p2}", f"relay/output/port={p3}", f"verifier/first/port={p1}",
        f"verifier/second/port={p3}"])
    assert code == 0, out + err
    assert "verify: 20 message pairs equal" in out
    found = counts(out)
    assert found["relay/input"]["received"] == "20" and found["relay/output"]["sent"] == "20"
    assert found["verifier/second"]["received"] == "20" and found["verifier/second"]["peer"] == "relay/output"


def test_the_saxpy_pipeline_in_two_processes_on_host_tensors_verifies_every_pair_over_same_host_transports():
    p1, p2 = free_port(), free_port()
    code, out, err = run_processes("stream_generator.yaml", "saxpy_stages.yaml", params=[
        "source/generator/storage=host", f"source/host_out/port={p1}", f"source/device_out/port={p2}",
        f"host_saxpy/input/port={p1}", f"device_saxpy/input/port={p2}"], environ={"UCX_PROTO_INFO": "y"})
    assert code == 0, out + err
    assert "verify: 20 message pairs equal" in out
    assert counts(out)["device_saxpy/input"]["received"] == "20"
    # The tensors' data route (the peers share the host): UCX's shared-memory transports, which it
    # keeps off an endpoint with peer-failure handling (there it moved them over TCP on loopback).
    assert {t for t, _ in transports(out + err)} & SAME_HOST, sorted(transports(out + err))


# -- a peer not up yet, or never


def test_a_receiver_started_later_is_waited_for():
    port = free_port()
    tx_params, rx_params = ping(port)
    tx = part("ping_tx.yaml", *tx_params)
    time.sleep(2.0)  # the transmitter retries meanwhile
    rx = part("ping_rx.yaml", *rx_params)
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = finish(tx), finish(rx)
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    assert counts(tx_out)["tx/signal"]["sent"] == "10" and counts(rx_out)["rx/signal"]["received"] == "10"


def test_without_reconnect_a_receiver_not_up_is_an_error_at_the_first_attempt():
    port = free_port()
    tx_params, _ = ping(port, tx=["ucx/ucx_context/reconnect=false"])
    started = time.monotonic()
    code, out, err = finish(part("ping_tx.yaml", *tx_params))
    assert code == 1, out + err
    assert f"tx/signal (entity 'tx'): no UcxReceiver answered at 127.0.0.1:{port} after 1 attempt " in err, err
    assert "reconnect: False" in err and "Traceback" not in err
    assert time.monotonic() - started < 20


def test_a_transmitter_that_never_comes_is_an_error_after_the_timeout_before_the_first_tick():
    port = free_port()
    _, rx_params = ping(port, rx=["ucx/ucx_context/connect_timeout_ms=1500"])
    code, out, err = finish(part("ping_rx.yaml", *rx_params))
    assert code == 1, out + err
    assert f"rx/signal (entity 'rx'): no UcxTransmitter connected to port {port} in 1500 ms" in err, err
    assert "received" not in out  # PingRx.start() never ran, so neither did its stop()


def test_sigterm_ends_a_part_waiting_for_its_peer():
    port = free_port()
    rx = part("ping_rx.yaml", *ping(port)[1])
    time.sleep(2.0)
    rx.send_signal(signal.SIGTERM)
    code, out, err = finish(rx, timeout=20)
    assert code == 1 and "interrupted while waiting for the peers to connect" in err, out + err


def test_the_launcher_stops_the_other_parts_when_one_fails():
    port = free_port()
    started = time.monotonic()
    code, out, err = run_processes("ping_rx.yaml", "ping_tx.yaml", grace=1, params=[
        f"rx/signal/port={port}", f"tx/signal/port={port}", "tx/nothing/count=1"])
    assert code != 0
    assert "[ping_tx] error: --param tx/nothing/count: entity 'tx' has no component 'nothing'" in out, out
    assert time.monotonic() - started < 20  # the receiver did not wait its 30 s for a transmitter


def test_the_launcher_refuses_a_param_no_part_can_take():
    code, out, err = run_processes("ping_rx.yaml", "ping_tx.yaml", params=["nobody/signal/port=1"])
    assert code == 2 and "no part has an entity 'nobody'" in err


# -- a peer lost mid-run


# 1 MiB: the receiver's receives of the route's buffers are posted when the transmitter dies.
@pytest.mark.parametrize("nbytes", [0, 1 << 20])
def test_without_reconnect_a_transmitter_that_dies_ends_the_receivers_run_naming_the_connection(tmp_path, nbytes):
    port = free_port()
    tx_params, rx_params = ping(port, count=1000, rx=["ucx/ucx_context/reconnect=false"])
    rx = part("ping_rx.yaml", *rx_params)
    tx_yaml = dying(tmp_path, "ping_tx.yaml", "PingOrDie", die_at=6, extra={"nbytes": nbytes})
    tx = subprocess.Popen([sys.executable, "-m", "cubind.graph", str(tx_yaml), *sum((["--param", p] for p in tx_params),
                                                                                     [])],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    tx_code, _, _ = finish(tx)
    code, out, err = finish(rx, timeout=30)
    assert tx_code == -signal.SIGKILL
    assert code == 1, out + err
    # It published 5: the 5th may have been on its way (its capacity lets one go ahead of the credits).
    lost = re.search(r"rx/signal \(entity 'rx'\): the connection from tx/signal was lost after ([45]) "
                     r"message\(s\)", err)
    assert lost, err
    assert f"ping_rx: received {lost[1]} messages" in out  # the stops ran: the run ended cleanly


# 1 MiB: each message's tensor is in flight on the data route (a rendezvous the dead receiver never answers).
@pytest.mark.parametrize("nbytes", [0, 1 << 20])
def test_without_reconnect_a_receiver_that_dies_ends_the_transmitters_run_naming_the_connection(tmp_path, nbytes):
    port = free_port()
    tx_params, rx_params = ping(port, count=100000, tx=["ucx/ucx_context/reconnect=false"])
    rx_yaml = dying(tmp_path, "ping_rx.yaml", "ReceiveOrDie", die_at=4)
    rx = subprocess.Popen([sys.executable, "-m", "cubind.graph", str(rx_yaml), "--param", rx_params[0]],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    wait_listening(port, rx)  # the transmitter makes one attempt
    tx_yaml = dying(tmp_path, "ping_tx.yaml", "PingOrDie", die_at=0, extra={"nbytes": nbytes})
    tx = part(None, *tx_params, path=tx_yaml)
    rx_code, rx_out, rx_err = finish(rx)
    code, out, err = finish(tx, timeout=30)
    assert rx_code == -signal.SIGKILL, rx_out + rx_err
    assert code == 1, out + err
    assert f"tx/signal (entity 'tx'): the connection to the UcxReceiver at 127.0.0.1:{port}" in err, err
    assert "was lost" in err


# -- what a receiver refuses


def _fake(port, mode):
    return subprocess.Popen([sys.executable, str(HELPERS / "fake_peer.py"), str(port), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())


@pytest.mark.parametrize("mode, says", [
    ("garbage", "entity 'rx', rx/signal: message 1 from fake/out: a message that cannot be decoded"),
    # The header's prefix (what the data path received) and its JSON disagree: refused, never an array
    # viewed past its buffer.
    ("mismatch", "message 1: 'x' (64 bytes, host) does not match the buffer that arrived for it"),
    ("short", "rx/signal (entity 'rx'): fake/out sent 5 message(s), 0 arrived"),
], ids=["undecodable_header", "tensor_bytes_not_its_header", "goodbye_claiming_more_than_arrived"])
def test_what_a_peer_sends_wrong_ends_the_receivers_run_naming_it(mode, says):
    port = free_port()
    rx = part("ping_rx.yaml", f"rx/signal/port={port}")
    fake = _fake(port, mode)
    code, out, err = finish(rx, timeout=30)
    finish(fake)
    assert code == 1, out + err
    assert says in err, err


def test_another_protocol_is_refused_before_the_first_tick_on_both_sides():
    port = free_port()
    rx = part("ping_rx.yaml", f"rx/signal/port={port}")
    fake = _fake(port, "layout")
    code, out, err = finish(rx, timeout=30)
    _, fake_out, _ = finish(fake)
    assert code == 1, out + err
    text = f"the message layouts differ (protocol: theirs 'cubind.graph.ucx/0', ours {PROTOCOL!r})"
    assert text in err and text in fake_out and '"ok": false' in fake_out
    assert "received" not in out


def test_contexts_that_differ_on_cpu_data_only_are_refused_before_the_first_tick():
    port = free_port()
    tx_params, rx_params = ping(port, tx=["ucx/ucx_context/cpu_data_only=false"])
    rx = part("ping_rx.yaml", *rx_params)
    tx = part("ping_tx.yaml", *tx_params)
    (tx_code, _, tx_err), (rx_code, rx_out, rx_err) = finish(tx), finish(rx)
    assert tx_code == 1 and rx_code == 1
    assert "the UcxReceiver at 127.0.0.1" in tx_err and "refused the connection: the UcxContexts differ on " \
        "cpu_data_only" in tx_err, tx_err
    assert "refused 'tx/signal': the UcxContexts differ on cpu_data_only" in rx_err, rx_err
    assert "received" not in rx_out


def test_a_port_in_use_is_an_error_before_the_first_tick():
    with socket.socket() as held:
        held.bind(("0.0.0.0", 0))
        held.listen()
        port = held.getsockname()[1]
        code, out, err = finish(part("ping_rx.yaml", f"rx/signal/port={port}"))
    assert code == 1, out + err
    assert f"rx/signal (entity 'rx'): cannot listen on port {port}: the port is in use" in err, err
    assert "received" not in out


@pytest.mark.parametrize("address, expected", [
    ("no.such.host.invalid", "receiver_address 'no.such.host.invalid' is not an address UCX can reach"),
    ("203.0.113.1", "no UcxReceiver answered at 203.0.113.1:"),  # TEST-NET-3: routed nowhere
])
def test_an_unreachable_address_is_an_error_before_the_first_tick(address, expected):
    params = ping(free_port(), tx=[f"tx/signal/receiver_address={address}",
                                   "ucx/ucx_context/connect_timeout_ms=2000"])[0]
    started = time.monotonic()
    code, out, err = finish(part("ping_tx.yaml", *params), timeout=30)
    assert code == 1, out + err
    assert f"tx/signal (entity 'tx'): {expected}" in err, err
    assert time.monotonic() - started < 25


def test_a_receiver_that_ends_first_ends_both_parts_with_matching_counts(tmp_path):
    import yaml

    port = free_port()
    docs = list(yaml.safe_load_all((PARTS / "ping_rx.yaml").read_text()))
    docs[0]["components"].insert(1, {"name": "count", "type": "nvidia::gxf::CountSchedulingTerm",
                                     "parameters": {"count": 5}})
    for comp in docs[0]["components"]:
        if comp.get("name") == "ping_rx":
            comp["parameters"]["codelet_file"] = str(PARTS.parent / "ping.py")
    rx_yaml = tmp_path / "ping_rx.yaml"
    rx_yaml.write_text(yaml.safe_dump_all(docs))
    rx = subprocess.Popen([sys.executable, "-m", "cubind.graph", str(rx_yaml), "--param", f"rx/signal/port={port}"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())
    tx = part("ping_tx.yaml", *ping(port, count=100)[0])
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = finish(tx), finish(rx)
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    assert "ping_rx: received 5 messages" in rx_out
    sent, received = int(counts(tx_out)["tx/signal"]["sent"]), int(counts(rx_out)["rx/signal"]["received"])
    assert sent == received and 5 <= sent <= 6  # the queue holds one more than was read
