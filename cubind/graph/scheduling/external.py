"""What a run asks of a component fed from outside it (a UCX queue's
transport thread, in another process's pace): the scheduler opens it before
the first start(), asks whether it may still make an entity ready (so that a
run waiting for a remote peer does not end as done or deadlocked), stops on
its failure, and closes it after the last stop(). The transport calls
``wake`` (the run's condition, notified) when a message or a credit arrives,
a peer ends or fails; it never holds a lock of its own while calling it (the
scheduler's lock is taken before the transport's)."""


class ExternalSource:
    def open_external(self, wake):
        """Connects before the first tick; raises a ``GraphError`` naming the
        connection when it cannot (port in use, peer not up in time, layout)."""
        raise NotImplementedError

    def external_wait(self, seconds):
        """Waits up to ``seconds`` for news from outside (the scheduler's lock
        and the GIL let go), handing it to the run on this thread (``wake``
        called here); whether any came. A source that cannot (the default)
        returns False at once and the run waits on its condition, woken by
        ``wake`` from the transport's thread."""
        return False

    def external_active(self):
        """True while something outside may still make an entity ready."""
        raise NotImplementedError

    def entity_done(self, entity):
        """``entity`` will never tick again (its terms said never): what it
        sends remotely can be closed (the scheduler's lock held: no waiting)."""

    def external_failure(self):
        """The exception that ends the run (a peer lost, a message that cannot
        be decoded), or None."""
        raise NotImplementedError

    def close_external(self, failed):
        """After the run: flushes what was sent (unless ``failed``), says
        goodbye to the peers, closes; returns an exception or None."""
        raise NotImplementedError

    def external_counts(self):
        """``{component path: {"sent"/"received": n, "dropped": n, ...}}``."""
        raise NotImplementedError
