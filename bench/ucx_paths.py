"""What a message between two processes costs on each way into UCX (issue
47, item 1): ucxx's asyncio API (what cubind.graph's transport uses now),
tag sends and receives posted from compiled code on ucxx's own worker and
endpoint (``_ucp_tags.pyx``, built here against the libucx wheel's
``ucp.h``: the whole loop in C, and one post per message from a Python
loop, as a transport would post what a codelet publishes), and with
``--ucx-floor`` UCX's own tag API from C (``bench/ucx_floor.c``, host memory).

Host memory (numpy) of 8 bytes, 64 KiB and 1 MiB, ``--window`` messages in
flight; the rate is the receiver's, from the transmitter's hello to the last
message. Runs with ucxx installed (scripts/test.sh installs it for Python
3.11+); no GPU needed. Prints one JSON object per row, then a table.

    python bench/ucx_paths.py [--count N] [--window W] [--ucx-floor BINARY]
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

from two_parts import free_port, receiver_result

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, ".bench", "ucp_tags")
TAG = 0xC0B1_D000_0000_0047  # ucxx's own tags are hashes of its endpoints' ids: this one is ours alone
MODES = ("ucxx asyncio API", "compiled, the loop in C", "compiled, one post per message from Python")
SIZES = (8, 64 << 10, 1 << 20)


def build():
    """_ucp_tags.pyx against the libucx wheel's headers and libraries (ucxx loads the same ones)."""
    import libucx

    ucx = os.path.dirname(libucx.__file__)
    ext = dict(include_dirs=[os.path.join(ucx, "include")], library_dirs=[os.path.join(ucx, "lib")],
               runtime_library_dirs=[os.path.join(ucx, "lib")], libraries=["ucp", "ucs"])
    os.makedirs(BUILD, exist_ok=True)
    code = ("from setuptools import setup, Extension; from Cython.Build import cythonize; "
            f"setup(script_args=['build_ext', '-b', {BUILD!r}, '-t', {BUILD + '/tmp'!r}], "
            f"ext_modules=cythonize([Extension('_ucp_tags', [{os.path.join(HERE, '_ucp_tags.pyx')!r}], **{ext!r})], "
            f"quiet=True, build_dir={BUILD + '/src'!r}))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=BUILD, stdout=subprocess.DEVNULL)


def _tags():
    sys.path.insert(0, BUILD)
    import _ucp_tags

    return _ucp_tags


async def _windowed(op, buf, count, window):
    """``count`` calls of ucxx's ``op`` (an endpoint's send or recv) on ``buf``, ``window`` in flight."""
    pending = []
    for _ in range(count):
        pending.append(asyncio.ensure_future(op(buf)))
        if len(pending) >= window:
            await pending.pop(0)
    await asyncio.gather(*pending)


def _post_each(tags, worker, endpoint, buf, count, window):
    sender = tags.Sender(worker, endpoint, TAG, window)
    for _ in range(count):
        sender.post(buf.ctypes.data, buf.nbytes)
    sender.drain()


async def receiver(port, mode, size, count, window):
    import numpy as np
    import ucxx

    tags = None if mode == 0 else _tags()
    done, result = asyncio.Event(), {}

    async def serve(ep):
        buf = np.empty(size, np.uint8)
        await ep.recv_obj()  # the transmitter's hello: both ends are up
        start = time.perf_counter()
        if mode == 0:
            await _windowed(ep.recv, buf, count, window)
        else:
            worker = ucxx.core._get_ctx().worker.handle
            await asyncio.get_running_loop().run_in_executor(None, tags.recv_many, worker, TAG, buf.ctypes.data,
                                                             size, count, window)
        result["messages_per_s"] = count / (time.perf_counter() - start)
        await ep.send_obj(b"done")
        await ep.recv_obj()  # the transmitter's goodbye: its endpoint closes first
        done.set()

    listener = ucxx.create_listener(serve, port)
    await done.wait()
    listener.close()
    print(json.dumps(result))


async def transmitter(port, mode, size, count, window):
    import numpy as np
    import ucxx

    tags = None if mode == 0 else _tags()
    ep = await ucxx.create_endpoint("127.0.0.1", port)
    buf = np.ones(size, np.uint8)
    await ep.send_obj(b"hello")
    loop = asyncio.get_running_loop()
    if mode == 0:
        await _windowed(ep.send, buf, count, window)
    elif mode == 1:
        await loop.run_in_executor(None, tags.send_many, ep._ep.worker_handle, ep._ep.handle, TAG, buf.ctypes.data,
                                   size, count, window)
    else:
        await loop.run_in_executor(None, _post_each, tags, ep._ep.worker_handle, ep._ep.handle, buf, count, window)
    await ep.recv_obj()
    await ep.send_obj(b"bye")
    await ep.close()


def row(mode, size, count, window):
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n")
    port = free_port()
    args = [str(port), str(mode), str(size), str(count), str(window)]
    name = f"{MODES[mode]}, {size} B, {window} in flight"
    try:
        r = receiver_result([sys.executable, __file__, "--role", "rx", *args],
                            [sys.executable, __file__, "--role", "tx", *args], env, 120, head_start_s=1.0)
    except (RuntimeError, ValueError, IndexError) as exc:
        return {"row": name, "failed": str(exc)}
    return {"row": name, "size": size, "messages_per_s": r["messages_per_s"],
            "us_per_message": 1e6 / r["messages_per_s"]}


def floor_row(binary, size, count, window):
    env = dict(os.environ, UCX_WARN_UNUSED_ENV_VARS="n", FLOOR_HOST_MEMORY="1")
    port = free_port()
    args = [str(count), str(size), str(window)]
    name = f"UCX's tag API in C (bench/ucx_floor.c), {size} B, {window} in flight"
    try:
        r = receiver_result([binary, "recv", str(port), *args], [binary, "send", "127.0.0.1", str(port), *args], env,
                            120, head_start_s=1.0)
    except (RuntimeError, ValueError, IndexError) as exc:
        return {"row": name, "failed": str(exc)}
    return {"row": name, "size": size, "messages_per_s": r["messages_per_s"],
            "us_per_message": 1e6 / r["messages_per_s"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=20000, help="messages of each row (a tenth at 1 MiB)")
    parser.add_argument("--window", type=int, default=4)
    parser.add_argument("--ucx-floor", metavar="BINARY", help="bench/ucx_floor.c built (see its header)")
    parser.add_argument("--role", choices=("rx", "tx"), help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.role:
        port, mode, size, count, window = (int(v) for v in a.args)
        part = receiver if a.role == "rx" else transmitter
        asyncio.run(part(port, mode, size, count, window))
        return
    build()
    rows = []
    for size in SIZES:
        count = a.count if size < (1 << 20) else max(100, a.count // 10)
        for mode in range(len(MODES)):
            rows.append(row(mode, size, count, a.window))
            print(json.dumps(rows[-1]), flush=True)
        if a.ucx_floor:
            rows.append(floor_row(a.ucx_floor, size, count, a.window))
            print(json.dumps(rows[-1]), flush=True)
    print("\n| row | messages/s | µs a message |\n|---|---|---|")
    for r in rows:
        if "messages_per_s" in r:
            print(f"| {r['row']} | {r['messages_per_s']:.0f} | {r['us_per_message']:.1f} |")
        else:
            print(f"| {r['row']} | {r['failed']} | |")


if __name__ == "__main__":
    main()
