"""A peer that speaks to a cubind.graph UcxReceiver with ucxx and a data
path of its own directly, to provoke what a cubind.graph UcxTransmitter
never sends:

    python fake_peer.py PORT garbage        a valid hello, then a header that is not JSON
    python fake_peer.py PORT layout         a hello of another protocol version
    python fake_peer.py PORT mismatch       a valid hello, then a tensor whose header says 64 bytes, sent as 16
    python fake_peer.py PORT short          a valid hello, then a goodbye claiming 5 messages sent

It prints the receiver's answer to the hello as one JSON line."""

import asyncio
import json
import sys

import ucxx

from cubind.graph.ucx.transport import place, receive_note, start_pump
from cubind.graph.ucx.wire import LAYOUT


class Owner:
    def pump_ready(self, channel):
        pass


async def main(port, mode):
    ep = None
    for _ in range(100):  # the receiver may not be listening yet
        try:
            ep = await ucxx.create_endpoint("127.0.0.1", port, connect_timeout=1.0)
            break
        except Exception:
            await asyncio.sleep(0.1)
    layout = dict(LAYOUT, protocol="cubind.graph.ucx/0") if mode == "layout" else LAYOUT
    pump, thread = start_pump()
    hello = {"hello": True, "layout": layout, "source": "fake/out", "cpu_data_only": True, "place": place(),
             "data": {"address": pump.address.hex()}}
    await ep.send_obj(json.dumps(hello).encode())
    reply = json.loads(bytes(await ep.recv_obj()).decode())
    print(json.dumps(reply), flush=True)
    if reply.get("ok"):
        data = reply["data"]
        channel = pump.open(bytes.fromhex(data["address"]), int(data["tag"]), False, False, Owner())
        if mode == "garbage":
            channel.send(b"\x00 this is not a header", [])
        elif mode == "mismatch":
            import numpy as np

            header = json.dumps({"components": [{"name": "x", "kind": "tensor", "storage": "host", "shape": [16],
                                                 "dtype": "<f4", "nbytes": 64}]}).encode()
            small = np.zeros(4, np.float32)
            channel.send(header, [(small.__array_interface__["data"][0], small.nbytes, False)])
        elif mode == "short":
            channel.bye(5)
        try:
            await asyncio.wait_for(receive_note(ep), 10)  # until the receiver closes
        except Exception:
            pass
    await ep.close()
    # Stopped before the interpreter's exit: UCX's own teardown must not meet the pump's thread in UCX.
    pump.stop()
    thread.join(5)
    pump.close()


asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
