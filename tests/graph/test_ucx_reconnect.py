"""A peer that dies mid-run and comes back, with the UcxContext's
``reconnect`` (GXF's): a receiver restarted on its port gets the messages
sent once it is back while the transmitter's counts say how many were lost
in between; a restarted transmitter is accepted by the receiver that kept
running; a peer that does not come back ends the run naming the connection
and the bound. Each part is a process killed as a crash kills it
(SIGKILL, no goodbye) and started again by the same command.

The counts are exact because the ping pair's queues hold one message and
its producer waits for room (tests/graph/ucx_parts/codelets.py): a receiver
dies at a tick that comes once everything before it arrived, and the one
message its transmitter keeps waiting for a credit (its capacity) goes on
the next connection. A transmitter that dies may have its last message on
its way: the receiver's counts say whether it arrived."""

import re
import signal
import time

import numpy as np
import pytest

from cubind import graph as gx
from tests._helpers import free_port
from tests.graph.ucx_parts.processes import (  # noqa: F401  (ucxx_needed: the autouse fixture)
    counts,
    dying,
    finish,
    listening,
    part,
    ping,
    ucxx_needed,
)


def _await(condition, timeout=30):
    """Waits for ``condition()`` (a part's port, say) to hold, a bounded poll."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


# 1 MiB: the tensors go on the data route, whose endpoint does not see the receiver die (its connection does).
@pytest.mark.parametrize("nbytes", [0, 1 << 20])
def test_a_receiver_that_dies_and_restarts_gets_what_is_sent_after_and_the_sender_counts_the_lost(tmp_path, nbytes):
    port = free_port()
    tx_params, rx_params = ping(port, count=20)
    first = part(None, rx_params[0], path=dying(tmp_path, "ping_rx.yaml", "ReceiveOrDie", die_at=4))
    tx = part(None, *tx_params, path=dying(tmp_path, "ping_tx.yaml", "PingOrDie", die_at=0, extra={"nbytes": nbytes}))
    assert finish(first)[0] == -signal.SIGKILL  # read 3 messages; the 4th died with it
    second = part("ping_rx.yaml", *rx_params)
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = finish(tx), finish(second)
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    assert "ping_rx: received 16 messages" in rx_out  # the 5th to the 20th
    sent, received = counts(tx_out)["tx/signal"], counts(rx_out)["rx/signal"]
    # Delivered: 3 read by the first receiver, 16 by the second; the 4th died in the first's queue.
    assert (sent["sent"], sent["lost"], sent["dropped"], sent["reconnects"]) == ("19", "1", "0", "1"), sent
    assert received["received"] == "16" and received["reconnects"] == "0"
    lost = (f"cubind.graph.ucx: tx/signal (entity 'tx'): the connection to the UcxReceiver at 127.0.0.1:{port}")
    assert lost in tx_err and "was lost" in tx_err, tx_err
    assert "1 message(s) it had not confirmed may be lost; connecting again (UcxContext reconnect: True" in tx_err
    assert f"connected again to the UcxReceiver at 127.0.0.1:{port} (rx/signal) after " in tx_err
    assert "sending resumes (1 message(s) lost in all)" in tx_err


def test_a_transmitter_that_dies_and_restarts_is_taken_by_the_receiver_which_kept_running(tmp_path):
    port = free_port()
    tx_params, rx_params = ping(port, count=10)
    rx = part("ping_rx.yaml", *rx_params)
    first = part(None, *ping(port, count=1000)[0], path=dying(tmp_path, "ping_tx.yaml", "PingOrDie", die_at=6))
    assert finish(first)[0] == -signal.SIGKILL  # published 5 messages; the 5th may have been on its way
    second = part("ping_tx.yaml", *tx_params)
    (tx_code, tx_out, tx_err), (rx_code, rx_out, rx_err) = finish(second), finish(rx)
    assert tx_code == 0 and rx_code == 0, tx_err + rx_err
    first_ones = re.search(r"rx/signal \(entity 'rx'\): the connection from tx/signal was lost after ([45]) "
                           r"message\(s\)", rx_err)
    assert first_ones and "waiting up to 30000 ms for a UcxTransmitter to connect again" in rx_err, rx_err
    total = str(int(first_ones[1]) + 10)  # and 10 from the second
    assert f"ping_rx: received {total} messages" in rx_out
    received, sent = counts(rx_out)["rx/signal"], counts(tx_out)["tx/signal"]
    assert (received["received"], received["reconnects"], received["peer"]) == (total, "1", "tx/signal"), received
    assert (sent["sent"], sent["lost"], sent["reconnects"]) == ("10", "0", "0"), sent
    assert "rx/signal (entity 'rx'): tx/signal connected (again, after a lost connection)" in rx_err


def test_a_receiver_that_does_not_come_back_ends_the_run_after_the_transmitters_retries(tmp_path):
    port = free_port()
    tx_params, rx_params = ping(port, count=1000, tx=["tx/signal/maximum_connection_retries=3"])
    rx = part(None, rx_params[0], path=dying(tmp_path, "ping_rx.yaml", "ReceiveOrDie", die_at=3))
    _await(lambda: listening(port))  # the first connection must not need the retries the reconnect is given
    started = time.monotonic()
    tx = part("ping_tx.yaml", *tx_params)
    assert finish(rx)[0] == -signal.SIGKILL
    code, out, err = finish(tx, timeout=30)
    assert code == 1, out + err
    assert (f"error: tx/signal (entity 'tx'): the connection to the UcxReceiver at 127.0.0.1:{port}" in err
            and f"was not made again: no UcxReceiver answered at 127.0.0.1:{port} after 3 attempts in " in err
            and "UcxTransmitter maximum_connection_retries: 3" in err), err
    assert "Traceback" not in err and time.monotonic() - started < 25


def test_a_transmitter_that_does_not_come_back_ends_the_run_after_the_receivers_timeout(tmp_path):
    port = free_port()
    tx_params, rx_params = ping(port, count=1000, rx=["ucx/ucx_context/connect_timeout_ms=3000"])
    tx = part(None, *tx_params, path=dying(tmp_path, "ping_tx.yaml", "PingOrDie", die_at=4))
    rx = part("ping_rx.yaml", *rx_params)  # the transmitter is waiting for it: connected at once
    assert finish(tx)[0] == -signal.SIGKILL
    code, out, err = finish(rx, timeout=30)
    assert code == 1, out + err
    assert ("error: rx/signal (entity 'rx'): the connection from tx/signal was lost after 3 message(s)" in err
            and "and no UcxTransmitter connected again in 3000 ms (UcxContext reconnect: True" in err), err
    assert "ping_rx: received 3 messages" in out  # the stops ran: the run ended cleanly


# -- both ends in one process: the connection breaks, both peers live on


class BreakOnce(gx.Codelet):
    """Publishes message ``n`` (a small tensor too); at tick ``break_at`` it
    also aborts its transmitter's UCX endpoint, as a broken network would end
    it: both ends see the connection go, and neither process dies."""

    break_at = gx.Parameter(int, 0)

    def tick(self):
        n = self.get_execution_count()
        m = gx.Message()
        m.add_tensor("values", np.full(4, n, np.int64))
        m.add("n", n)
        self.tx("out").publish(m)
        if n == self.break_at:
            link = self.tx("out").link
            link.context.engine.soon(link.conn.ep.abort)


class SlowSink(gx.Codelet):
    def start(self):
        self.seen = []

    def tick(self):
        m = self.rx("in").receive()
        assert np.array_equal(m.tensor("values").data, np.full(4, m.get("n"), np.int64))
        self.seen.append(m.get("n"))
        time.sleep(0.005)  # the queue holds messages when the connection breaks


def test_a_connection_that_breaks_is_made_again_and_the_counts_say_exactly_what_did_not_arrive():
    port = free_port()
    g = gx.Graph()
    g.entity("ucx").add(gx.UcxContext(cpu_data_only=True, connect_timeout_ms=20000), "context")
    a = g.entity("a")
    a.add(gx.UcxTransmitter(receiver_address="127.0.0.1", port=port), "out")
    a.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    a.add(gx.CountSchedulingTerm(count=40))
    a.add(BreakOnce(break_at=15), "source")
    b = g.entity("b")
    b.add(gx.UcxReceiver(port=port, capacity=3), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    sink = b.add(SlowSink(), "sink")
    result = g.run(gx.MultiThreadScheduler(worker_thread_number=2))
    sent, received = result.messages["a/out"], result.messages["b/in"]
    assert result.reason == "done"
    assert sink.seen == sorted(set(sink.seen)) and sink.seen[0] == 1 and sink.seen[-1] == 40  # in order, once
    # The receiver lived on: it says what arrived of the lost connection's messages; the rest is lost.
    assert len(sink.seen) + sent["lost"] == 40 and received["received"] == len(sink.seen), (sent, received)
    assert sent["sent"] == len(sink.seen) and sent["reconnects"] == 1 and received["reconnects"] == 1
    assert received["dropped"] == 0 and sent["dropped"] == 0
