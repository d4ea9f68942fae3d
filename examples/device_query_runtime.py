"""deviceQuery through the runtime API: every device's properties, printed as
the CUDA sample does. Without a GPU it says so and exits 0."""

import sys

from _runtime_common import device_count

from cuda import cudart


def check(result):
    err, *outputs = result
    if err != cudart.cudaError_t.cudaSuccess:
        raise RuntimeError(f"CUDA error: {err!r}")
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def text(chars):
    return chars.split(b"\0")[0].decode()


def main():
    count = device_count()
    if not count:
        return 0
    driver = check(cudart.cudaDriverGetVersion())
    runtime = check(cudart.cudaRuntimeGetVersion())
    print(f"Detected {count} CUDA capable device(s)")
    print(f"  CUDA driver / runtime version: {driver // 1000}.{driver % 1000 // 10} / "
          f"{runtime // 1000}.{runtime % 1000 // 10}")
    for device in range(count):
        p = check(cudart.cudaGetDeviceProperties(device))
        print(f"\nDevice {device}: \"{text(p.name)}\"")
        rows = [
            ("CUDA capability", f"{p.major}.{p.minor}"),
            ("Global memory", f"{p.totalGlobalMem / 2**20:.0f} MiB"),
            ("Multiprocessors", p.multiProcessorCount),
            ("L2 cache", f"{p.l2CacheSize // 1024} KiB"),
            ("Shared memory per block", f"{p.sharedMemPerBlock} bytes"),
            ("Registers per block", p.regsPerBlock),
            ("Warp size", p.warpSize),
            ("Max threads per multiprocessor", p.maxThreadsPerMultiProcessor),
            ("Max threads per block", p.maxThreadsPerBlock),
            ("Max block dimensions", tuple(p.maxThreadsDim)),
            ("Max grid dimensions", tuple(p.maxGridSize)),
            ("Memory bus width", f"{p.memoryBusWidth} bits"),
            ("Concurrent copy engines", p.asyncEngineCount),
            ("Unified addressing", bool(p.unifiedAddressing)),
            ("Managed memory", bool(p.managedMemory)),
            ("PCI domain / bus / device", f"{p.pciDomainID} / {p.pciBusID} / {p.pciDeviceID}"),
        ]
        for label, value in rows:
            print(f"  {label + ':':<34}{value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
