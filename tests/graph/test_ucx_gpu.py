"""Device tensors across processes over UCX, on the GPU machine (marked
``gpu``: skipped without one): the saxpy pipeline split in two processes on
one GPU, its 1 MiB device tensors moved by UCX's CUDA transports (CUDA IPC
between the processes, as UCX reports with ``UCX_PROTO_INFO=y``), values
checked by VerifyEqual; and both ends in one process, the producer's stream
ordered before the transfer."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cubind import graph as gx
from tests._helpers import free_port
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / "examples" / "graph" / "ucx"
# UCX moves the tensors with its own CUDA calls (its memory-type probes ask
# cuMemRetainAllocationHandle of plain allocations) and ucxx imports cuda.core
# on NVIDIA's bindings (whose cuGetProcAddress probes fail on purpose): the
# sanitizer would count their failed calls against cubind (H200 run, 2026-11-26).
pytestmark = [pytest.mark.gpu, pytest.mark.foreign_code("UCX's and ucxx's own CUDA calls (memory-type probes, "
                                                         "cuda.core's entry-point probes)")]


@pytest.fixture(autouse=True)
def ucxx_needed():
    if importlib.util.find_spec("ucxx") is None or importlib.util.find_spec("yaml") is None:
        pytest.skip("ucxx or PyYAML is not installed (pip install 'cubind[ucx,graph]')")



def test_the_saxpy_pipeline_in_two_processes_moves_1_mib_device_tensors_by_cuda_ipc():
    p1, p2 = free_port(), free_port()
    command = [sys.executable, "-m", "cubind.graph.apps.processes", str(PARTS / "stream_generator.yaml"),
               str(PARTS / "saxpy_stages.yaml")]
    for p in ("source/generator/shape=[512, 512]", f"source/host_out/port={p1}",
              f"source/device_out/port={p2}", f"host_saxpy/input/port={p1}", f"device_saxpy/input/port={p2}"):
        command += ["--param", p]
    env = dict(os.environ, PYTHONPATH=pythonpath(ROOT), UCX_PROTO_INFO="y", UCX_WARN_UNUSED_ENV_VARS="n")
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "verify: 20 message pairs equal" in out
    assert re.search(r"messages device_saxpy/input: received=20 ", out), out
    # UCX's own account of the protocol it chose for a tag send from GPU memory between the two
    # processes: a CUDA transport (cuda_ipc), not a copy through host memory.
    gpu_lines = [line for line in out.splitlines() if "from cuda" in line or "cuda_ipc" in line]
    assert any("cuda_ipc" in line for line in gpu_lines), "\n".join(gpu_lines) or out


def test_device_tensors_cross_in_one_process_after_their_producers_stream():
    import cubind

    port = free_port()

    class Produce(gx.Codelet):
        def start(self):
            self.own = cubind.Stream()

        def tick(self):
            n = self.get_execution_count()
            values = np.full((256, 1024), float(n), np.float32)  # 1 MiB
            with self.own:
                a = cubind.empty(values.shape, np.float32)
                a.set(values, stream=self.own)  # queued: the transfer must wait for it
                m = gx.Message()
                m.add_tensor("a", a)
                self.tx("out").publish(m)

    class Check(gx.Codelet):
        def start(self):
            self.sums = []

        def tick(self):
            t = self.rx("in").receive().tensor("a")
            assert t.is_device
            self.sums.append(float(t.host().sum()))

    g = gx.Graph()
    g.entity("ucx").add(gx.UcxContext(), "context")
    a = g.entity("a")
    a.add(gx.UcxTransmitter(receiver_address="127.0.0.1", port=port, capacity=2), "out")
    a.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    a.add(gx.CountSchedulingTerm(count=10))
    a.add(Produce(), "produce")
    b = g.entity("b")
    b.add(gx.UcxReceiver(port=port, capacity=2), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    check = b.add(Check(), "check")
    result = g.run()
    assert check.sums == [float(n) * 256 * 1024 for n in range(1, 11)]
    assert result.messages["a/out"]["sent"] == 10 and result.messages["b/in"]["received"] == 10
