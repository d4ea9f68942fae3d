"""The overhead benchmark: C floor, cubind, cuda.bindings, cuda.core, CuPy, Python-call floor.

    python bench/run.py                  # on a GPU machine; prints the table
    python bench/run.py --smoke          # anywhere: a fake driver, tiny counts

Builds the C floor program and the floor extensions under .bench/, compiles the
kernels to PTX with cubind's NVRTC, then starts one worker process per backend
and, round after round, asks every backend in turn for one sample of the same
call (the order rotating each round): the samples of one call are taken within
milliseconds of each other, so that the machine's drift falls on all backends
alike. Each cell is the median over the rounds. Import times are measured in
fresh interpreters, interleaved the same way. The table goes to stdout and to
bench/results.md, the raw samples to bench/results.json (--json elsewhere).
See bench/README.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, ".bench")
sys.path.insert(0, HERE)
import toolkit  # noqa: E402
import worker  # noqa: E402  (the call list and shapes)

_PARAMS16 = ", ".join(f"float* p{i}" for i in range(16))
_PARAMS256 = ", ".join(f"int a{i}" for i in range(256))
KERNELS = rf"""
extern "C" __global__ void k0() {{}}
extern "C" __global__ void saxpy(float a, const float* x, const float* y, float* out, size_t n) {{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}}
extern "C" __global__ void ptr16({_PARAMS16}) {{}}
extern "C" __global__ void int256({_PARAMS256}) {{}}
"""

# (label, statement timed in a fresh interpreter) per backend; the binding's
# import, then import plus the first driver call.
IMPORTS = {
    "import cuda": {"cubind": "import cuda", "cuda_bindings": "import cuda.bindings.driver"},
    "import nvrtc": {"cubind": "import nvrtc", "cuda_bindings": "import cuda.bindings.nvrtc"},
    "import cuda; cuInit(0)": {"cubind": "import cuda; cuda.cuInit(0)",
                               "cuda_bindings": "import cuda.bindings.driver as d; d.cuInit(0)"},
}

BACKENDS = ("c", "cubind", "cuda_bindings", "cuda_core", "cupy", "pyfloor", "bare")
LABELS = {"c": "C", "cubind": "cubind", "cuda_bindings": "cuda.bindings", "cuda_core": "cuda.core", "cupy": "CuPy",
          "pyfloor": "Python-call floor", "bare": "bare call"}

# Iterations per sample: a few milliseconds of each backend's calls. The
# copies scale with their size: 4 KiB about 5-10 µs a copy (pageable memory
# goes through the driver's staging buffer), 1 MiB about 50-100 µs, 256 MiB
# 20-40 ms (a sample of 3 after 1 of warm-up).
ITERATIONS = {"cuMemcpyHtoDAsync_8B": 5000, "cuLaunchKernel_256int": 500}
QUERY_ITERATIONS, LAUNCH_ITERATIONS = 20000, 2000
COPY_ITERATIONS = {"4KiB": 500, "1MiB": 40, "256MiB": 3}
ITERATIONS.update({f"{kind}_{size}": n for kind in worker.COPY_KINDS for size, n in COPY_ITERATIONS.items()})
# The 256 MiB rows take ~0.1 s a sample: they are sampled in the first
# --big-copy-rounds rounds only (the medians of 30 ms samples settle fast).
BIG_COPIES = {f"{kind}_256MiB" for kind in worker.COPY_KINDS}


def cuda_root():
    return toolkit.cuda_root() or sys.exit("bench: CUDA toolkit not found: set CUDA_HOME")


def build_fake_driver():
    """tests/fake_driver/: fake_libcuda.c as libcuda.so.1 and fake_libcudart.c as
    libcudart.so.13 (each with the unversioned name to link against), built by
    tests/fake_driver/build.py, the suite's builder, loaded by its path: the
    bench imports nothing else of the tests."""
    import importlib.util

    path = os.path.join(ROOT, "tests", "fake_driver", "build.py")
    spec = importlib.util.spec_from_file_location("cubind_fake_driver_build", path)
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    fake = os.path.join(BUILD, "fake")
    builder.build(fake, ("cuda", "cudart"), soname=True)
    return fake


def build_c_floor(cuda, fake):
    exe = os.path.join(BUILD, "c_floor")
    lib64 = os.path.join(cuda, "lib64")
    driver_dir = fake or os.path.join(lib64, "stubs")   # link-time only: the real one loads at run time
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "c_floor.c"), f"-I{cuda}/include",
                    f"-L{driver_dir}", f"-L{lib64}", f"-Wl,-rpath,{lib64}", "-lnvrtc", "-lcudart", "-lcuda"],
                   check=True)
    return exe


def build_floors(cuda, fake):
    """_pyfloor.pyx and _bare.pyx (linked against the driver and NVRTC)."""
    out = os.path.join(BUILD, "pyfloor")
    lib64 = os.path.join(cuda, "lib64")
    driver_dir = fake or os.path.join(lib64, "stubs")
    bare = dict(include_dirs=[os.path.join(cuda, "include")], library_dirs=[driver_dir, lib64],
                runtime_library_dirs=[lib64], libraries=["cuda", "nvrtc", "cudart"])
    code = ("import sys; from setuptools import setup, Extension; from Cython.Build import cythonize; "
            f"setup(script_args=['build_ext', '-b', {out!r}, '-t', {out + '/tmp'!r}], "
            f"ext_modules=cythonize([Extension('_pyfloor', [{os.path.join(HERE, '_pyfloor.pyx')!r}]), "
            f"Extension('_bare', [{os.path.join(HERE, '_bare.pyx')!r}], **{bare!r})], quiet=True, "
            f"build_dir={out + '/src'!r}))")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=BUILD, stdout=subprocess.DEVNULL)
    return out


def compile_ptx():
    sys.path.insert(0, ROOT)
    import nvrtc
    err, prog = nvrtc.nvrtcCreateProgram(KERNELS.encode(), b"bench.cu", 0, None, None)
    assert err == 0, err
    err, = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_75"])
    if err != 0:
        log = bytearray(nvrtc.nvrtcGetProgramLogSize(prog)[1])
        nvrtc.nvrtcGetProgramLog(prog, log)
        sys.exit(f"bench: kernels do not compile: {log.decode()}")
    ptx = bytearray(nvrtc.nvrtcGetPTXSize(prog)[1])
    err, = nvrtc.nvrtcGetPTX(prog, ptx)
    assert err == 0, err
    nvrtc.nvrtcDestroyProgram(prog)
    path = os.path.join(BUILD, "kernels.ptx")
    with open(path, "wb") as f:
        f.write(bytes(ptx))
    return path


def env_for(backend, fake, pyfloor_dir, cudart):
    """cubind's workers see the repository; the others must not (our `cuda`
    package would be imported in place of the namespace package). cubind
    opens `cudart`, the runtime the C floor and the bare call link against,
    so that the runtime rows compare one library (its loader would otherwise
    prefer NVIDIA's wheel, a different build)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CUBIND_CUDA_LIBRARY", "CUBIND_CUDART_LIBRARY")}
    if backend == "cubind":
        env["PYTHONPATH"] = ROOT
    elif backend == "pyfloor":
        env["PYTHONPATH"] = pyfloor_dir
    elif backend == "bare":   # cubind makes the context, the module, the stream
        env["PYTHONPATH"] = ROOT + os.pathsep + pyfloor_dir
    # cuda_bindings, cuda_core, cupy: the installed packages only.
    if backend in ("cubind", "bare") and not fake:
        env["CUBIND_CUDART_LIBRARY"] = cudart
    if fake:
        env["CUBIND_CUDA_LIBRARY"] = os.path.join(fake, "libcuda.so.1")
        env["CUBIND_CUDART_LIBRARY"] = os.path.join(fake, "libcudart.so.13")
        env["LD_LIBRARY_PATH"] = fake + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    return env


def available(backend, env):
    if backend in ("c", "cubind", "pyfloor", "bare"):
        return True
    probe = {"cuda_bindings": "import cuda.bindings.driver", "cupy": "import cupy",
             # recent cuda.core releases are `cuda.core`, older ones `cuda.core.experimental` (worker.py takes either)
             "cuda_core": "try:\n    from cuda.core import launch\n"
                          "except ImportError:\n    from cuda.core.experimental import launch"}[backend]
    done = subprocess.run([sys.executable, "-c", probe], env=env, cwd=tempfile.gettempdir(), capture_output=True,
                          text=True)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["?"])[-1]
        print(f"bench: no {LABELS[backend]} column: {why}", file=sys.stderr)
    return done.returncode == 0


def _pinned():
    """Each worker runs on one core (the same for all), away from migrations."""
    if hasattr(os, "sched_setaffinity") and BENCH_CPU is not None:
        os.sched_setaffinity(0, {BENCH_CPU})


BENCH_CPU = None


class Worker:
    """One backend's process, serving samples on request (worker.py's protocol)."""

    def __init__(self, backend, args, env):
        if backend == "c":
            cmd = [args.c_floor, args.ptx]
        else:
            cmd = [sys.executable, os.path.join(HERE, "worker.py"), backend, args.ptx]
        self.backend = backend
        self.proc = subprocess.Popen(cmd, env=env, cwd=tempfile.gettempdir(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_pinned)
        ready = json.loads(self._line())
        self.calls = set(ready["calls"])
        self.errors = ready["errors"]
        self.init_ns = ready.get("cuInit_first_call")

    def _line(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.kill()
            sys.exit(f"bench: {self.backend} worker failed:\n{self.proc.stderr.read()}")
        return line

    def sample(self, call, iters):
        self.proc.stdin.write(f"{call} {iters}\n")
        self.proc.stdin.flush()
        return float(self._line())

    def close(self):
        self.proc.stdin.close()
        if self.proc.wait(timeout=60) != 0:
            sys.exit(f"bench: {self.backend} worker failed at exit:\n{self.proc.stderr.read()}")


def time_import(statement, env):
    code = ("import time, sys; t0 = time.perf_counter_ns(); " + statement +
            "; sys.stdout.write(str(time.perf_counter_ns() - t0))")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tempfile.gettempdir(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return float(done.stdout)


def iterations(call, scale):
    default = LAUNCH_ITERATIONS if call in worker.LAUNCHES else QUERY_ITERATIONS
    return ITERATIONS.get(call, default) * scale


def collect(args, backends, envs):
    workers = [Worker(b, args, envs[b]) for b in backends]
    # A call a backend cannot make: {"error": why} in place of its samples.
    samples = {w.backend: {call: {"error": why} for call, why in w.errors.items()} for w in workers}
    for r in range(args.rounds):
        for call in worker.CALLS:
            if call in BIG_COPIES and r >= args.big_copy_rounds:
                continue
            serving = [w for w in workers if call in w.calls]
            turn = r % len(serving) if serving else 0
            for w in serving[turn:] + serving[:turn]:
                samples[w.backend].setdefault(call, []).append(w.sample(call, iterations(call, args.scale)))
        for label, statements in IMPORTS.items():
            for backend in (("cubind", "cuda_bindings") if r % 2 == 0 else ("cuda_bindings", "cubind")):
                if backend in statements and backend in backends and r < args.import_rounds:
                    ns = time_import(statements[backend], envs[backend])
                    if ns is not None:
                        samples[backend].setdefault(label, []).append(ns)
    for w in workers:
        w.close()
        if w.backend == "c" and w.init_ns is not None:
            samples["c"]["import cuda; cuInit(0)"] = [w.init_ns]
    return samples


def summarise(samples, statistic):
    return {b: {call: (v if isinstance(v, dict) else {"error": v} if isinstance(v, str) else statistic(v))
                for call, v in calls.items()}
            for b, calls in samples.items()}


def quiet(values):
    """The 10th percentile: the machine's fast state, less its outliers."""
    ordered = sorted(values)
    return ordered[len(ordered) // 10]


def paired(samples, call, minus):
    """Median over rounds of cubind's sample less the sum of `minus`' samples
    of the same round (the samples of a round are milliseconds apart)."""
    rows = [samples.get(b, {}).get(call) for b in ("cubind",) + minus]
    if not all(isinstance(v, list) for v in rows) or len({len(v) for v in rows}) != 1:
        return None
    return statistics.median(ours - sum(others) for ours, *others in zip(*rows))


def paired_table(samples):
    head = ["call", "cubind − (floor + C)", "cubind − bare call", "bare call − (floor + C)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for call in list(worker.SHAPES) + list(worker.COPIES):
        cells = [paired(samples, call, ("pyfloor", "c")), paired(samples, call, ("bare",))]
        bare = [samples.get(b, {}).get(call) for b in ("bare", "pyfloor", "c")]
        if all(isinstance(v, list) for v in bare) and len({len(v) for v in bare}) == 1:
            cells.append(statistics.median(b - f - c for b, f, c in zip(*bare)))
        else:
            cells.append(None)
        lines.append("| " + " | ".join([call] + ["–" if v is None else f"{v:.0f} ns" for v in cells]) + " |")
    return "\n".join(lines)


PYTHONIC_TARGET = ("saxpy_pythonic", "saxpy_pythonic_stream", "saxpy_launch_config")


def target(call, m):
    """(target text, met?) for one row, following the issues' targets."""
    c, ours, theirs, floor = (m.get(b, {}).get(call) for b in ("c", "cubind", "cuda_bindings", "pyfloor"))
    if call == "import cuda" and isinstance(ours, float) and isinstance(theirs, float):
        return "≤ 0.5× cuda.bindings", ours <= 0.5 * theirs
    if call.startswith("import") or not all(isinstance(v, float) for v in (c, ours)):
        return "", None
    if call in PYTHONIC_TARGET:   # issue 14: the Pythonic launch, plain Python values
        others = [m.get(b, {}).get(call) for b in ("cupy", "cuda_core")]
        ok = ours <= 1.3 * c and all(ours < v for v in others if isinstance(v, float))
        return "≤ 1.3× C, < CuPy, < cuda.core", ok
    if call in worker.COPIES:   # issue 14: copies within 5% of C from 1 MiB
        if worker.copy_bytes(call) < 1 << 20:
            return "", None
        bare = m.get("bare", {}).get(call)
        if call.startswith("HtoD_to_gpu") and isinstance(bare, float):
            # What a cuMemAlloc/cuMemFree costs depends on the allocations
            # live in the process (alloc_state.c): the bare call makes C's
            # calls in a process with the cubind worker's allocations.
            return "≤ 1.05× C, or × the bare call", ours <= 1.05 * c or ours <= 1.05 * bare
        return "≤ 1.05× C", ours <= 1.05 * c
    if call in ("cuLaunchKernel_5_values", "cudaLaunchKernel_5_values"):
        ok = ours <= 1.3 * c and (not isinstance(theirs, float) or ours <= 0.6 * theirs)
        return "≤ 1.3× C, ≤ 0.6× cuda.bindings", ok
    if call in ("cuLaunchKernel_5_packed", "cudaLaunchKernel_5_packed"):
        return "≤ 1.15× C", ours <= 1.15 * c
    if call in worker.LAUNCHES:
        return "", None
    by_ratio = isinstance(theirs, float) and ours - c <= 0.25 * (theirs - c)
    by_floor = isinstance(floor, float) and ours <= floor + c + 15
    return "overhead ≤ ¼ cuda.bindings', or ≤ floor + C + 15 ns", by_ratio or by_floor


def fmt(v):
    if v is None:
        return "–"
    if isinstance(v, dict):
        return "error"
    return f"{v / 1e6:.1f} ms" if v >= 1e6 else (f"{v / 1e3:.2f} µs" if v >= 1e4 else f"{v:.0f} ns")


def errors_text(samples):
    """The calls a backend could not make, and why."""
    lines = [f"- {LABELS[b]}, {call}: {v['error']}" for b, calls in samples.items()
             for call, v in calls.items() if isinstance(v, dict)]
    return "Not timed (the cells marked error):\n" + "\n".join(lines) if lines else ""


def table(m, backends):
    calls = list(worker.CALLS) + list(IMPORTS)
    head = ["call"] + [LABELS[b] for b in backends] + ["cubind − C", "cubind / C", "cubind / cuda.bindings",
                                                       "target", "met"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for call in calls:
        cells = [m.get(b, {}).get(call) for b in backends]
        c, ours, theirs = (m.get(b, {}).get(call) for b in ("c", "cubind", "cuda_bindings"))
        num = all(isinstance(v, float) for v in (c, ours))
        over = fmt(ours - c) if num and not call.startswith("import") else "–"
        ratio_c = f"{ours / c:.2f}" if num else "–"
        ratio_b = f"{ours / theirs:.2f}" if isinstance(ours, float) and isinstance(theirs, float) else "–"
        text, met = target(call, m)
        lines.append("| " + " | ".join([call] + [fmt(v) for v in cells] + [over, ratio_c, ratio_b, text,
                                                                        {True: "yes", False: "NO", None: ""}[met]])
                     + " |")
    return "\n".join(lines)


def machine():
    info = {"python": sys.version.split()[0], "platform": sysconfig.get_platform()}
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=True).stdout.strip()
        info["gpu"] = gpu
    except (OSError, subprocess.CalledProcessError):
        info["gpu"] = None
    return info


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Many rounds of short samples: the H100 machine drifts between a fast and
    # a slow state every few seconds (see README).
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--import-rounds", type=int, default=12, help="rounds that also time the imports")
    parser.add_argument("--big-copy-rounds", type=int, default=20, help="rounds that also time the 256 MiB copies")
    parser.add_argument("--scale", type=int, default=1, help="multiplies the iteration counts")
    parser.add_argument("--smoke", action="store_true",
                        help="no GPU: a fake libcuda that returns success, tiny counts (checks the harness only)")
    parser.add_argument("--json", default=os.path.join(HERE, "results.json"))
    parser.add_argument("--markdown", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--cpu", type=int, default=None,
                        help="core the workers run on (default: the last one this process may use)")
    parser.add_argument("--tables-from", metavar="JSON",
                        help="print and write the tables of a saved run's results.json; runs nothing")
    args = parser.parse_args()
    if args.tables_from:
        with open(args.tables_from) as f:
            saved = json.load(f)
        args.rounds, args.import_rounds, args.smoke = saved["rounds"], saved["import_rounds"], saved["smoke"]
        args.big_copy_rounds = saved.get("big_copy_rounds")
        report(args, saved["samples"], tuple(b for b in BACKENDS if b in saved["samples"]), saved["machine"],
               saved["cpu"])
        return
    global BENCH_CPU
    if hasattr(os, "sched_getaffinity"):
        BENCH_CPU = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    if args.smoke:
        args.rounds, args.import_rounds, args.scale = min(args.rounds, 2), min(args.import_rounds, 2), 1
        args.big_copy_rounds = min(args.big_copy_rounds, 2)

    os.makedirs(BUILD, exist_ok=True)
    cuda = cuda_root()
    fake = build_fake_driver() if args.smoke else None
    args.c_floor = build_c_floor(cuda, fake)
    pyfloor_dir = build_floors(cuda, fake)
    args.ptx = compile_ptx()
    wanted = tuple(b for b in BACKENDS if b in args.backends.split(","))
    cudart = os.path.realpath(os.path.join(cuda, "lib64", "libcudart.so"))
    envs = {b: env_for(b, fake, pyfloor_dir, cudart) for b in wanted}
    # The fake driver stands in for cubind only: the others would need a real one.
    backends = tuple(b for b in wanted
                     if available(b, envs[b]) and not (fake and b in ("cuda_bindings", "cuda_core", "cupy")))

    report(args, collect(args, backends, envs), backends, machine(), BENCH_CPU)


def report(args, samples, backends, info, cpu):
    """The three tables on stdout and in args.markdown; everything in args.json."""
    m = summarise(samples, statistics.median)
    fastest = summarise(samples, quiet)
    text = table(m, backends)
    big = f", {args.big_copy_rounds} for 256 MiB copies" if args.big_copy_rounds is not None else ""
    header = (f"{'SMOKE RUN (fake driver, numbers meaningless)  ' if args.smoke else ''}"
              f"GPU: {info['gpu']}, Python {info['python']}; {args.rounds} rounds "
              f"({args.import_rounds} for imports{big}), medians; workers on CPU {cpu}")
    fastest_text = table(fastest, backends)
    pairs_text = paired_table(samples)
    errors = errors_text(samples)
    print(header)
    print(text)
    print("\nThe 10th percentile of each cell (the machine's fast state):")
    print(fastest_text)
    print("\nPaired: the median over rounds of the difference within a round:")
    print(pairs_text)
    if errors:
        print("\n" + errors)
    with open(args.json, "w") as f:   # a re-render writes the saved run back as it was
        json.dump({"machine": info, "smoke": args.smoke, "cpu": cpu, "rounds": args.rounds,
                   "import_rounds": args.import_rounds, "big_copy_rounds": args.big_copy_rounds,
                   "scale": args.scale, "medians": m, "p10": fastest, "samples": samples}, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write(header + "\n\n" + text + "\n\nThe 10th percentile of each cell:\n\n" + fastest_text
                + "\n\nPaired, the median over rounds of the difference within a round:\n\n" + pairs_text + "\n"
                + ("\n" + errors + "\n" if errors else ""))


if __name__ == "__main__":
    main()
