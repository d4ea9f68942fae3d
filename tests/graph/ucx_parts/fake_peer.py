"""A peer that speaks to a cubind.graph UcxReceiver with ucxx directly, to
provoke what a cubind.graph UcxTransmitter never sends:

    python fake_peer.py PORT garbage        a valid hello, then a header that is not JSON
    python fake_peer.py PORT layout         a hello of another protocol version
    python fake_peer.py PORT short          a valid hello, then a goodbye claiming 5 messages sent

It prints the receiver's answer to the hello as one JSON line."""

import asyncio
import json
import sys

import ucxx

from cubind.graph.ucx.transport import receive_note, send_note
from cubind.graph.ucx.wire import LAYOUT


async def main(port, mode):
    ep = None
    for _ in range(100):  # the receiver may not be listening yet
        try:
            ep = await ucxx.create_endpoint("127.0.0.1", port, connect_timeout=1.0)
            break
        except Exception:
            await asyncio.sleep(0.1)
    layout = dict(LAYOUT, protocol="cubind.graph.ucx/0") if mode == "layout" else LAYOUT
    hello = {"hello": True, "layout": layout, "source": "fake/out", "cpu_data_only": True}
    await ep.send_obj(json.dumps(hello).encode())
    reply = json.loads(bytes(await ep.recv_obj()).decode())
    print(json.dumps(reply), flush=True)
    if reply.get("ok"):
        if mode == "garbage":
            await send_note(ep, b"\x00 this is not a header")
        elif mode == "short":
            await send_note(ep, json.dumps({"bye": True, "sent": 5}).encode())
        try:
            await asyncio.wait_for(receive_note(ep), 10)  # until the receiver closes
        except Exception:
            pass
    await ep.close()


asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
