"""What a cubind.Event costs, against the 1:1 calls it makes.

    python bench/event_cost.py [--number N] [--repeat R]                 # on a GPU machine
    CUBIND_CUDA_LIBRARY=.bench/fake/libcuda.so.1 python bench/event_cost.py   # no GPU

A codelet graph makes, records and drops events per message (its ready
events, a timing pair per stage), so their cost is a per-message cost. Rows,
each the best of ``--repeat`` runs of ``--number`` calls, ns a call:

- ``Event()`` made and dropped (its destroy runs as the last reference goes);
- ``Event(timing=False).record(stream)`` made, recorded and dropped;
- ``event.record(stream)`` on a kept event, and the 1:1 ``cuEventRecord``
  of the same handles (what ``record`` adds);
- the 1:1 ``cuEventCreate`` + ``cuEventDestroy`` (what making one adds).
"""

import argparse
import timeit

import cubind
from cubind._core import driver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cubind.Device(0).set_current()
    cuda = driver.module()
    stream = cubind.Stream()
    kept = cubind.Event()
    handle, raw = kept.handle, int(stream)
    rows = {
        "Event()": lambda: cubind.Event(),
        "Event(timing=False).record(stream)": lambda: cubind.Event(timing=False).record(stream),
        "event.record(stream)": lambda: kept.record(stream),
        "1:1 cuEventRecord": lambda: cuda.cuEventRecord(handle, raw),
        "1:1 cuEventCreate + cuEventDestroy": lambda: cuda.cuEventDestroy(cuda.cuEventCreate(0)[1]),
    }
    print("| call | ns |\n|---|---|")
    for name, call in rows.items():
        best = min(timeit.repeat(call, number=args.number, repeat=args.repeat)) / args.number
        print(f"| {name} | {best * 1e9:.0f} |")
    stream.synchronize()


if __name__ == "__main__":
    main()
