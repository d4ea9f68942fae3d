"""The seed's ping codelets (GXF's gxf/python/tests PingTx.py and PingRx.py)."""

from cubind.graph import Codelet, Message, Parameter


class PingTx(Codelet):
    """Publishes an empty message on its first transmitter each tick."""

    def tick(self):
        self.get_transmitters()[0].publish(Message())


class PingRx(Codelet):
    """Receives a message on its first receiver each tick; a missing one is an error."""

    log_count = Parameter(int, 0, "print every this many messages (0: never)")

    def start(self):
        self.received = 0

    def tick(self):
        message = self.get_receivers()[0].receive()
        if message is None:
            raise RuntimeError("ticked without a message")
        self.received += 1
        if self.log_count and self.received % self.log_count == 0:
            print(f"{self.name()}: {self.received} messages")

    def stop(self):
        print(f"{self.name()}: received {self.received} messages")
