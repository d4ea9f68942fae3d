"""Shared by the driver examples: finding a GPU, checking statuses, compiling with NVRTC.

Each example's ``main`` calls :func:`open_gpu` first; :func:`run` turns the
:class:`NoGPU` it may raise into the one line ``No GPU available: <reason>;
skipping.`` and exit status 0, so every example runs (and says why it did
nothing) on a machine without a GPU or driver.
"""

import contextlib
import sys

import nvrtc


class NoGPU(Exception):
    """No usable GPU, driver or driver package; the message says which."""


class Skip(Exception):
    """The GPU lacks a feature the example needs; the message says which."""


def call(fn, *args):
    """Call a binding; raise RuntimeError on a bad status, else return the outputs."""
    err, *outputs = fn(*args)
    if err != 0:
        raise RuntimeError(f"{fn.__name__} failed: {getattr(err, 'name', err)}")
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def open_gpu():
    """Initialise the driver; return (the cuda module, device 0) or raise NoGPU."""
    try:
        import cuda

        cuda.cuInit  # noqa: B018 (NVIDIA's bare cuda namespace package has no driver API)
    except (ImportError, AttributeError) as exc:
        raise NoGPU(f"the cuda driver package is not importable ({exc})") from exc
    try:
        (err,) = cuda.cuInit(0)
    except OSError as exc:   # cubind's LibraryNotFoundError: no libcuda.so.1
        raise NoGPU(loader_reason(exc)) from exc
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise NoGPU(f"cuInit returned {err.name}")
    err, dev = cuda.cuDeviceGet(0)
    if err != cuda.CUresult.CUDA_SUCCESS:
        raise NoGPU(f"cuDeviceGet(0) returned {err.name}")
    return cuda, dev


def loader_reason(exc):
    """The loader error's gist: its whole message lists every place searched."""
    first = str(exc).splitlines()[0].rstrip(".")
    if first.startswith("cubind: cannot find the CUDA driver library"):
        return "no CUDA driver (libcuda.so.1 not found)"
    return first.removeprefix("cubind: ")


def describe_launch(module, kernel, grid, block, args):
    """``kernel(grid, block, *args)`` as the launch would hand it to the
    driver: each argument beside its parameter's PTX type."""
    params = module.entries[module.lowered_names.get(kernel, kernel)]
    shown = ", ".join(_value(arg, param.text) for param, arg in zip(params, args))
    return f"{kernel} on grid {grid}, block {block} with ({shown})"


def _value(arg, ptx_type):
    if getattr(arg, "shape", None) is not None:
        return f"{arg.dtype}[{arg.size}] ({ptx_type} device pointer)"
    return f"{arg!r} ({ptx_type})"


def compute_capability(cuda, dev):
    """(major, minor) of ``dev``."""
    attr = cuda.CUdevice_attribute
    major = call(cuda.cuDeviceGetAttribute, attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    minor = call(cuda.cuDeviceGetAttribute, attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    return major, minor


def device_arch(cuda, dev):
    """The newest NVRTC architecture (e.g. 90) that ``dev`` runs."""
    major, minor = compute_capability(cuda, dev)
    usable = [a for a in call(nvrtc.nvrtcGetSupportedArchs) if a <= 10 * major + minor]
    if not usable:
        raise Skip(f"compute capability {major}.{minor} is older than every NVRTC architecture")
    return max(usable)


def compile_kernel(src, arch, kind="PTX", name="kernel.cu", options=()):
    """Compile CUDA C++ ``src`` with NVRTC: PTX for compute_<arch> or a CUBIN for sm_<arch>."""
    target = f"compute_{arch}" if kind == "PTX" else f"sm_{arch}"
    prog = call(nvrtc.nvrtcCreateProgram, src, name.encode(), 0, [], [])
    try:
        opts = [f"--gpu-architecture={target}".encode(), *(o.encode() for o in options)]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = bytearray(call(nvrtc.nvrtcGetProgramLogSize, prog))
            call(nvrtc.nvrtcGetProgramLog, prog, log)
            text = log.rstrip(b"\0").decode(errors="replace")
            raise RuntimeError(f"nvrtcCompileProgram failed: {err.name}\n{text}")
        size_fn, get_fn = getattr(nvrtc, f"nvrtcGet{kind}Size"), getattr(nvrtc, f"nvrtcGet{kind}")
        image = bytearray(call(size_fn, prog))
        call(get_fn, prog, image)
        return bytes(image)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


@contextlib.contextmanager
def gpu_context(cuda, dev):
    """A new context on ``dev``, current inside the block, destroyed after it."""
    # CUDA 13's cuCtxCreate_v4 takes (ctxCreateParams, flags, dev), 12.x's _v2 (flags, dev).
    ctx = call(cuda.cuCtxCreate, *((None, 0, dev) if cuda.CUDA_VERSION >= 13000 else (0, dev)))
    try:
        yield ctx
    finally:
        call(cuda.cuCtxDestroy, ctx)


def load_kernel(cuda, cleanup, src, name, arch):
    """Compile ``src``, load it as a module (unloaded by ``cleanup``); return function ``name``."""
    module = call(cuda.cuModuleLoadData, compile_kernel(src, arch))
    cleanup.callback(call, cuda.cuModuleUnload, module)
    return call(cuda.cuModuleGetFunction, module, name.encode())


def run(main):
    """Run ``main()`` (returns True when its result is right); exit 0, or 1 on a wrong result."""
    try:
        good = main()
    except NoGPU as exc:
        print(f"No GPU available: {exc}; skipping.")
        return 0
    except Skip as exc:
        print(f"{exc}; skipping.")
        return 0
    return 0 if good else 1


def exit_with(main):
    """``raise SystemExit(run(main))`` for an example's ``if __name__ == "__main__"``."""
    sys.exit(run(main))
