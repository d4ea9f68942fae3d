"""The seed's tensor codelets (GXF's StreamGenerator and VerifyEqual) and a
saxpy stage for the pipeline app."""

import numpy as np

import cubind
from cubind.graph import Codelet, Message, Parameter, TensorDescription

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}"""


class StreamGenerator(Codelet):
    """Each tick: two host and two device tensors of the same values, shaped
    by a TensorDescription; the host message goes out on the first
    transmitter, the device message on the second (``storage: host`` makes
    the second message's tensors host ones too: the app runs without a GPU)."""

    shape = Parameter(list, [2, 2], "the tensors' shape")
    seed = Parameter(int, 0)
    storage = Parameter(str, "device", "the second message's storage: device, or host")

    @property
    def needs_gpu(self):
        return self.storage == "device"

    def start(self):
        self.random = np.random.default_rng(self.seed)

    def tick(self):
        host, device = Message(), Message()
        for i in range(2):
            values = self.random.random(self.shape, dtype=np.float32)
            h = self.allocator.tensor(TensorDescription(f"host_{i}", "host", self.shape, np.float32))
            h.data[...] = values
            host.add_tensor(h.name, h)
            d = self.allocator.tensor(TensorDescription(f"device_{i}", self.storage, self.shape, np.float32))
            if d.is_device:
                d.data.set(values, stream=self.stream)  # queued on this codelet's stream, ordered by the edge's event
            else:
                d.data[...] = values
            device.add_tensor(d.name, d)
        host.add_timestamp(acqtime=self.get_execution_timestamp())
        self.get_transmitters()[0].publish(host)
        self.get_transmitters()[1].publish(device)


class Forward(Codelet):
    """Publishes each message it receives on its first transmitter, as it is
    (a stage in another process, between a producer and its consumer)."""

    def tick(self):
        self.get_transmitters()[0].publish(self.get_receivers()[0].receive())


class VerifyEqual(Codelet):
    """Receives one message on each receiver, copies device tensors to the
    host and checks the two messages' tensors are equal, in order."""

    tolerance = Parameter(float, 0.0, "largest absolute difference allowed")

    def start(self):
        self.verified = 0

    def tick(self):
        first, second = (rx.receive() for rx in self.get_receivers())
        a, b = list(first.tensors().values()), list(second.tensors().values())
        if len(a) != len(b):
            raise AssertionError(f"{len(a)} tensors against {len(b)}")
        for x, y in zip(a, b):
            hx, hy = x.host(), y.host()
            if hx.shape != hy.shape or not np.allclose(hx, hy, rtol=0, atol=self.tolerance):
                raise AssertionError(f"{x.name} and {y.name} differ")
        self.verified += 1

    def stop(self):
        print(f"{self.name()}: {self.verified} message pairs equal")


class Saxpy(Codelet):
    """out = a * x + y for each pair of tensors of the message received:
    on the device with a kernel on this codelet's stream, on the host with numpy."""

    a = Parameter(float, 2.0)

    def start(self):
        self.kernel = None

    def tick(self):
        message = self.get_receivers()[0].receive()
        x, y = list(message.tensors().values())[:2]
        out = Message()
        result = self.allocator.tensor(TensorDescription("out", x.storage, x.shape, np.float32))
        if x.is_device:
            if self.kernel is None:
                self.kernel = cubind.Program(SAXPY).compile().get_kernel("saxpy")
            n = x.data.size
            self.kernel((n + 255) // 256, 256, self.a, x.data, y.data, result.data, n)  # the current stream: ours
        else:
            np.multiply(self.a, x.data, out=result.data)
            result.data += y.data
        out.add_tensor("out", result)
        self.get_transmitters()[0].publish(out)
