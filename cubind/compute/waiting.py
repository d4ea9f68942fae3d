"""Waiting for an evaluation: with a timeout (polling the event, since CUDA
has no timed wait), and under asyncio without blocking the event loop."""

import asyncio
import time

import cubind


def wait(event, timeout, what):
    """Returns when ``event`` is reached; TimeoutError after ``timeout``
    seconds (None: no limit, a plain cuEventSynchronize)."""
    if timeout is None:
        event.synchronize()
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout: expected seconds as a number or None, not {type(timeout).__name__}")
    if timeout < 0:
        raise ValueError(f"timeout: must be at least 0, got {timeout}")
    deadline = time.monotonic() + timeout
    pause = 20e-6
    while not event.query():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{what}: the evaluation is still running after the timeout of {timeout} s "
                               f"(it goes on; eval_await() again to wait for it)")
        time.sleep(min(pause, left))
        pause = min(pause * 2, 1e-3)


def notify_when_reached(event, stream, device):
    """An asyncio future of the running loop, done when ``event`` is reached.

    ``stream`` waits for the event, then runs a host function that wakes
    the loop with call_soon_threadsafe: no thread of ours blocks and the
    loop is woken at once, not at the next poll. The host function runs on
    the driver's thread and calls no CUDA function, as CUDA requires."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def reached(_user_data):
        try:
            loop.call_soon_threadsafe(_set_done, future)
        except RuntimeError:  # the loop was closed meanwhile: nobody is waiting
            pass

    import cuda as driver  # the 1:1 module: cubind has no object for a host function

    with device:
        cubind.check(driver.cuStreamWaitEvent(stream.handle, event.handle, 0), "cuStreamWaitEvent")
        cubind.check(driver.cuLaunchHostFunc(stream.handle, reached, None), "cuLaunchHostFunc")
    return future


def _set_done(future):
    if not future.done():  # a cancelled await leaves it cancelled
        future.set_result(None)
