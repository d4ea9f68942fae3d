"""The overhead benchmark: C floor, cubind, cuda.bindings, CuPy, Python-call floor.

    python bench/run.py                  # on a GPU machine; prints the table
    python bench/run.py --smoke          # anywhere: a fake driver, tiny counts

Builds the C floor program and the Python-call floor extension under .bench/,
compiles the kernels to PTX with cubind's NVRTC, then runs one worker process
per backend and round, interleaved (A/B/C/.. then reversed), so that drift of
the machine cancels. Each cell is the median over every repeat of every round.
Import times are measured the same way, each in a fresh interpreter. The table
goes to stdout and to bench/results.md, the raw samples to bench/results.json
(--json elsewhere). See bench/README.md.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, ".bench")
sys.path.insert(0, HERE)
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

BACKENDS = ("c", "cubind", "cuda_bindings", "cupy", "pyfloor")
LABELS = {"c": "C", "cubind": "cubind", "cuda_bindings": "cuda.bindings", "cupy": "CuPy",
          "pyfloor": "Python-call floor"}


def cuda_root():
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("nvcc") or "/x/bin/nvcc"))),
                 "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "include", "cuda.h")):
            return root
    sys.exit("bench: CUDA toolkit not found: set CUDA_HOME")


def build_fake_driver():
    """tests/fake_driver/fake_libcuda.c as libcuda.so.1 (and libcuda.so to link against)."""
    fake = os.path.join(BUILD, "fake")
    os.makedirs(fake, exist_ok=True)
    lib = os.path.join(fake, "libcuda.so.1")
    source = os.path.join(ROOT, "tests", "fake_driver", "fake_libcuda.c")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, source], check=True)
    link = os.path.join(fake, "libcuda.so")
    if not os.path.lexists(link):
        os.symlink("libcuda.so.1", link)
    return fake


def build_c_floor(cuda, fake):
    exe = os.path.join(BUILD, "c_floor")
    lib64 = os.path.join(cuda, "lib64")
    driver_dir = fake or os.path.join(lib64, "stubs")   # link-time only: the real one loads at run time
    subprocess.run(["cc", "-O2", "-o", exe, os.path.join(HERE, "c_floor.c"), f"-I{cuda}/include",
                    f"-L{lib64}", f"-L{driver_dir}", f"-Wl,-rpath,{lib64}", "-lnvrtc", "-lcuda"], check=True)
    return exe


def build_pyfloor():
    out = os.path.join(BUILD, "pyfloor")
    code = ("import sys; from setuptools import setup; from Cython.Build import cythonize; "
            f"setup(script_args=['build_ext', '-b', {out!r}, '-t', {out + '/tmp'!r}], "
            f"ext_modules=cythonize([{os.path.join(HERE, '_pyfloor.pyx')!r}], quiet=True, "
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


def env_for(backend, fake, pyfloor_dir):
    """cubind's workers see the repository; the others must not (our `cuda`
    package would be imported in place of the namespace package)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUBIND_CUDA_LIBRARY")}
    if backend == "cubind":
        env["PYTHONPATH"] = ROOT
    elif backend == "pyfloor":
        env["PYTHONPATH"] = pyfloor_dir
    if fake:
        env["CUBIND_CUDA_LIBRARY"] = os.path.join(fake, "libcuda.so.1")
        env["LD_LIBRARY_PATH"] = fake + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    return env


def available(backend, env):
    if backend in ("c", "cubind", "pyfloor"):
        return True
    module = {"cuda_bindings": "cuda.bindings.driver", "cupy": "cupy"}[backend]
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, cwd=tempfile.gettempdir(),
                           capture_output=True)
    return probe.returncode == 0


def _pinned():
    """Each worker runs on one core (the same for all), away from migrations."""
    if hasattr(os, "sched_setaffinity") and BENCH_CPU is not None:
        os.sched_setaffinity(0, {BENCH_CPU})


BENCH_CPU = None


def run_worker(backend, args, env):
    if backend == "c":
        cmd = [args.c_floor, args.ptx, str(args.repeats), str(args.scale)]
    else:
        cmd = [sys.executable, os.path.join(HERE, "worker.py"), backend, args.ptx, str(args.repeats), str(args.scale)]
    done = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          preexec_fn=_pinned)
    if done.returncode != 0:
        sys.exit(f"bench: {backend} worker failed:\n{done.stderr}")
    return json.loads(done.stdout)


def time_import(statement, env):
    code = ("import time, sys; t0 = time.perf_counter_ns(); " + statement +
            "; sys.stdout.write(str(time.perf_counter_ns() - t0))")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tempfile.gettempdir(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return float(done.stdout)


def collect(args, backends, envs):
    samples = {b: {} for b in backends}
    for r in range(args.rounds):
        order = backends if r % 2 == 0 else tuple(reversed(backends))
        for backend in order:
            for call, values in run_worker(backend, args, envs[backend]).items():
                if isinstance(values, dict):
                    samples[backend].setdefault(call, values)
                elif not isinstance(samples[backend].get(call, []), dict):
                    samples[backend].setdefault(call, []).extend(values)
        for label, statements in IMPORTS.items():
            for backend in (("cubind", "cuda_bindings") if r % 2 == 0 else ("cuda_bindings", "cubind")):
                if backend in statements and backend in backends:
                    ns = time_import(statements[backend], envs[backend])
                    if ns is not None:
                        samples[backend].setdefault(label, []).append(ns)
    if "c" in samples and "cuInit_first_call" in samples["c"]:
        samples["c"]["import cuda; cuInit(0)"] = samples["c"].pop("cuInit_first_call")
    return samples


def summarise(samples, statistic):
    return {b: {call: (v if isinstance(v, dict) else statistic(v)) for call, v in calls.items()}
            for b, calls in samples.items()}


def target(call, m):
    """(target text, met?) for one row, following the issue's targets."""
    c, ours, theirs, floor = (m.get(b, {}).get(call) for b in ("c", "cubind", "cuda_bindings", "pyfloor"))
    if not all(isinstance(v, float) for v in (c, ours)):
        return "", None
    if call.startswith("import"):
        if call == "import cuda" and isinstance(theirs, float):
            return "≤ 0.5× cuda.bindings", ours <= 0.5 * theirs
        return "", None
    if call == "cuLaunchKernel_5_values":
        ok = ours <= 1.3 * c and (not isinstance(theirs, float) or ours <= 0.6 * theirs)
        return "≤ 1.3× C, ≤ 0.6× cuda.bindings", ok
    if call == "cuLaunchKernel_5_packed":
        return "≤ 1.15× C", ours <= 1.15 * c
    if call.startswith("cuLaunchKernel"):
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


def table(m, backends):
    calls = list(worker.SHAPES) + list(IMPORTS)
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
    # Many short rounds: the H100 machine drifts between a fast and a slow
    # state every few seconds (see README), so each backend needs many visits.
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=int, default=1, help="multiplies the iteration counts")
    parser.add_argument("--smoke", action="store_true",
                        help="no GPU: a fake libcuda that returns success, tiny counts (checks the harness only)")
    parser.add_argument("--json", default=os.path.join(HERE, "results.json"))
    parser.add_argument("--markdown", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--cpu", type=int, default=None,
                        help="core the workers run on (default: the last one this process may use)")
    args = parser.parse_args()
    global BENCH_CPU
    if hasattr(os, "sched_getaffinity"):
        BENCH_CPU = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    if args.smoke:
        args.rounds, args.repeats, args.scale = min(args.rounds, 2), min(args.repeats, 2), 1

    os.makedirs(BUILD, exist_ok=True)
    cuda = cuda_root()
    fake = build_fake_driver() if args.smoke else None
    args.c_floor = build_c_floor(cuda, fake)
    pyfloor_dir = build_pyfloor()
    args.ptx = compile_ptx()
    wanted = tuple(b for b in BACKENDS if b in args.backends.split(","))
    envs = {b: env_for(b, fake, pyfloor_dir) for b in wanted}
    # The fake driver stands in for cubind only: the others would need a real one.
    backends = tuple(b for b in wanted if available(b, envs[b]) and not (fake and b in ("cuda_bindings", "cupy")))

    samples = collect(args, backends, envs)
    m = summarise(samples, statistics.median)
    fastest = summarise(samples, min)
    text = table(m, backends)
    info = machine()
    header = (f"{'SMOKE RUN (fake driver, numbers meaningless)  ' if args.smoke else ''}"
              f"GPU: {info['gpu']}, Python {info['python']}; {args.rounds} rounds x {args.repeats} repeats, "
              f"medians; workers on CPU {BENCH_CPU}")
    fastest_text = table(fastest, backends)
    print(header)
    print(text)
    print("\nFastest sample of each cell (the machine's quiet state):")
    print(fastest_text)
    with open(args.json, "w") as f:
        json.dump({"machine": info, "smoke": args.smoke, "cpu": BENCH_CPU, "rounds": args.rounds,
                   "repeats": args.repeats, "scale": args.scale, "medians": m, "fastest": fastest,
                   "samples": samples}, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write(header + "\n\n" + text + "\n\nFastest sample of each cell:\n\n" + fastest_text + "\n")


if __name__ == "__main__":
    main()
