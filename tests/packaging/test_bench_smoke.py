"""bench/run.py end to end without a GPU (--smoke: the fake driver, tiny
counts), so the harness that produces bench/README.md's table cannot rot
between GPU runs. The numbers it prints mean nothing; the shape is checked."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._helpers import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_smoke_run_fills_every_row_for_c_cubind_and_the_floor(tmp_path):
    pytest.importorskip("Cython")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    try:
        import cuda._driver
        import nvrtc._nvrtc  # noqa: F401
    except ImportError:
        pytest.skip("cubind's packages are not built")
    if cuda._driver.CUDA_VERSION < 13000:
        # bench/worker.py and c_floor.c call CUDA 13's cuCtxCreate(ctxCreateParams, flags, dev).
        pytest.skip(f"bench/ uses the CUDA 13 API (cuCtxCreate with ctxCreateParams); this build is CUDA "
                    f"{cuda._driver.CUDA_VERSION // 1000}.{cuda._driver.CUDA_VERSION % 1000 // 10}'s, "
                    "whose cuCtxCreate is cuCtxCreate_v2(flags, dev)")
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--json", str(out_json),
                           "--markdown", str(out_md)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(out_json.read_text())
    sys.path.insert(0, str(ROOT / "bench"))
    import worker
    # The 1:1 rows for the floor too; the Pythonic launch and the copies (issue
    # 14 item 7) for C and cubind: the fake returns success and writes nothing.
    for backend, calls in (("c", worker.CALLS), ("cubind", worker.CALLS), ("pyfloor", worker.SHAPES)):
        for call in calls:
            value = result["medians"][backend][call]
            assert isinstance(value, float) and value > 0, (backend, call, value)
    assert isinstance(result["medians"]["cubind"]["import cuda"], float)
    # The 256 MiB copies are sampled in the first --big-copy-rounds rounds only.
    assert len(result["samples"]["cubind"]["HtoD_set_256MiB"]) == min(result["rounds"], result["big_copy_rounds"])
    table = out_md.read_text()
    assert "SMOKE RUN" in table and "| cuLaunchKernel_5_values |" in table
    for row in ("saxpy_pythonic", "saxpy_pythonic_stream", "HtoD_set_1MiB", "DtoH_get_256MiB", "HtoD_to_gpu_4KiB"):
        assert f"| {row} |" in table, row
    assert "error" not in table, table


def test_copy_iterations_scale_with_size():
    """A sample is a few milliseconds whatever the size: fewer copies of more bytes."""
    sys.path.insert(0, str(ROOT / "bench"))
    import run
    for kind in ("HtoD_set", "DtoH_get", "HtoD_to_gpu"):
        counts = [run.iterations(f"{kind}_{size}", 1) for size in ("4KiB", "1MiB", "256MiB")]
        assert counts == sorted(counts, reverse=True) and counts[-1] <= 5, (kind, counts)


def built_ucx_floor(tmp_path):
    """bench/ucx_floor.c built against the libucx wheel (skips where it or a compiler is missing)."""
    from tests._toolkit import header

    libucx = pytest.importorskip("libucx", reason="UCX's wheel (libucx-cu13, with cubind[ucx]) is not installed")
    cuda_h = header("cuda.h")
    if shutil.which("cc") is None or cuda_h is None:
        pytest.skip("no C compiler or no cuda.h")
    ucx = Path(libucx.__file__).parent
    binary = tmp_path / "ucx_floor"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(ROOT / "bench" / "ucx_floor.c"), f"-I{ucx / 'include'}",
                    f"-L{ucx / 'lib'}", f"-Wl,-rpath,{ucx / 'lib'}", "-lucp", "-lucs", f"-I{cuda_h.parent}",
                    "-ldl"], check=True, timeout=120)
    return binary


def test_ucx_floor_sends_every_message_between_two_processes(tmp_path):
    """bench/ucx_floor.c (UCX's own rate, the floor of graph_messages.py's
    rows across processes) built against the libucx wheel and run with host
    buffers (FLOOR_HOST_MEMORY): both parts end and the receiver counts them all."""
    binary = built_ucx_floor(tmp_path)
    env = {**os.environ, "FLOOR_HOST_MEMORY": "1", "UCX_WARN_UNUSED_ENV_VARS": "n"}
    port = str(free_port())
    args = ["300", str(64 << 10), "4"]
    rx = subprocess.Popen([str(binary), "recv", port, *args], stdout=subprocess.PIPE, text=True, env=env)
    tx = subprocess.run([str(binary), "send", "127.0.0.1", port, *args], env=env, timeout=60)
    out, _ = rx.communicate(timeout=60)
    assert tx.returncode == 0 and rx.returncode == 0
    row = json.loads(out.splitlines()[-1])
    assert row["messages"] == 300 and row["bytes"] == 64 << 10 and row["messages_per_s"] > 0


def test_graph_messages_runs_its_two_parts_with_the_messages_in_flight_asked():
    """graph_messages.py's rows across processes: the receiving queue's
    capacity (``--in-flight``) reaches both parts, every message is
    received, and each side's data path counters are in the row; a device
    row moves about DEVICE_ROW_BYTES, not a host row's."""
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import graph_messages
    finally:
        sys.path.remove(str(ROOT / "bench"))
    row = graph_messages.two_process_row("host, 2 in flight", 300, 4096, in_flight=2)
    assert row["received"] == 300 and row["in_flight"] == 2 and row["messages_per_s"] > 0
    assert {"rx_take", "rx_parts"} <= set(row["receiver_pump_us_per_message"]), row
    assert {"tx_ready", "tx_done"} <= set(row["transmitter_pump_us_per_message"]), row
    for side in ("receiver", "transmitter"):
        assert set(row[f"{side}_pump_turns_per_message"]) == set(graph_messages.PUMP_TURNS), row
    assert graph_messages.sweep_count(16 << 20, 20000) == 256
    assert graph_messages.device_count(16 << 20, 20000) == 16384
    assert graph_messages.device_count(1 << 20, 20000) == 20000


def test_ucx_in_flight_reads_ours_against_the_floor_at_each_count_in_turn(tmp_path):
    """bench/ucx_in_flight.py (host messages here): per count in flight, each
    run of both as it ends, then the medians, their ratio and where ours went."""
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    binary = built_ucx_floor(tmp_path)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import ucx_in_flight
    finally:
        sys.path.remove(str(ROOT / "bench"))
    lines = []
    summary = ucx_in_flight.measure(str(binary), 64 << 10, "host", [1, 2], 1, 200, report=lines.append)
    runs = [json.loads(line) for line in lines if "what" in json.loads(line)]
    assert [(r["in_flight"], r["what"]) for r in runs] == [(1, "UCX in C"), (1, "cubind.graph"), (2, "UCX in C"),
                                                           (2, "cubind.graph")], runs
    assert [s["in_flight"] for s in summary] == [1, 2]
    for line in summary:
        assert line["ratio"] == line["messages_per_s"] / line["ucx_messages_per_s"] > 0, line
        assert line["rx_parts"] is not None and line["tx_done"] is not None, line


def test_graph_messages_takes_rows_in_turn_and_reports_each_ones_median():
    """``--remote-rounds``: the device rows and their floors measured in
    turn, round after round; each row the run of median rate with every
    run's rate beside it; a run that failed is the row, not averaged away."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import graph_messages
    finally:
        sys.path.remove(str(ROOT / "bench"))
    order, rates = [], {"a": iter([3, 1, 2]), "b": iter([10, 30, 20])}

    def run(name):
        order.append(name)
        return {"row": name, "messages_per_s": next(rates[name])}

    a, b = graph_messages.take_turns(3, lambda: run("a"), lambda: run("b"))
    assert order == ["a", "b"] * 3
    assert a == {"row": "a", "messages_per_s": 2, "runs": [3, 1, 2]}
    assert b == {"row": "b", "messages_per_s": 20, "runs": [10, 30, 20]}
    failed = {"row": "a", "failed": "a part failed"}
    assert graph_messages.median_row([{"row": "a", "messages_per_s": 1}, failed]) == failed


def test_the_receive_path_is_timed_per_message_without_ucx():
    """bench/ucx_receive_path.py with host tensors (no driver): the delivery,
    and the delivery with the read and the drop, each timed a message."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import ucx_receive_path
    finally:
        sys.path.remove(str(ROOT / "bench"))
    row = ucx_receive_path.run(4096, "host", 200, 2)
    assert row["us_delivery_read_and_drop"] > row["us_stand_in_block"] > 0, row
    assert row["us_delivery_and_drop"] > 0 and row["storage"] == "host", row


def test_the_transmitters_calls_are_timed_between_two_processes():
    """bench/ucx_transmitter_calls.py with host tensors: every wrapped call of
    the publishing path is counted once per message (its first left out),
    the scheduler's loop calls at least once, and a message's cycle is
    timed over the messages after the first."""
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import ucx_transmitter_calls
    finally:
        sys.path.remove(str(ROOT / "bench"))
    row = ucx_transmitter_calls.run(4096, "host", 200, timeout=120)
    assert row["messages_per_s"] > 0
    calls = row["transmitter_calls"]
    per_message = {"message add_tensor", "publish: the header (sendpath.encode_published)",
                   "publish: the ready event (ordering.publish_order)", "publish: the queue, ready event included",
                   "publish, all of it", "delivery (OutLink.deliver)",
                   "a message's cycle, wall", "a message's cycle, the scheduler thread's CPU"}
    loop = {"loop: the room (OutLink.free)", "loop: UcxContext.external_failure"}  # before each tick at least
    settled = "delivery: the sent settled (OutLink._settle_sent)"  # where the data path sent more since
    assert per_message | loop | {settled} <= set(calls), calls
    assert all(calls[label]["calls"] == 199 and calls[label]["us"] > 0 for label in per_message), calls
    assert all(calls[label]["calls"] >= 199 for label in loop), calls
    assert "delivery: staging (DeviceStaging.stage)" not in calls  # host tensors are never staged


def test_a_messages_credit_is_followed_round_through_both_sides_traces(tmp_path):
    """bench/ucx_cycle.py with host tensors: both parts trace their data
    path; each message's steps, read across the two traces, are consecutive
    (their means add up to the cycle's), both sides' turns are read, and
    the transmitting scheduler's time splits into its waits and the rest."""
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import ucx_cycle
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from cubind.graph.ucx import pump
    # The bench keeps the codes to read kept traces without cubind: they are pump's.
    for name in ("POSTED", "SENT", "CREDIT_IN", "ARRIVED", "CREDIT_OUT", "TAKEN", "CREDITED", "TURN", "PROGRESS",
                 "POLL_START", "POLL_END", "OWNERS"):
        assert getattr(ucx_cycle, name) == pump.TRACE_EVENTS[name], name
    prefix = str(tmp_path / "trace")
    # Room for the idle turns of a loaded 2-core machine: with a million events a side, 170 to 300 of
    # the 400 messages were traced whole there (the turns filled the rest).
    assert ucx_cycle.run(4096, "host", 400, 4, prefix, timeout=120, room=8_000_000) > 0
    row = ucx_cycle.cycle(ucx_cycle.load(prefix + "_rx.bin"), ucx_cycle.load(prefix + "_tx.bin"), 4)
    steps = row["steps"]
    assert row["messages"] >= 390
    assert sum(steps[k]["mean_us"] for k in "ABCDEFG") == pytest.approx(steps["cycle"]["mean_us"], abs=0.1)
    assert steps["D"]["p10_us"] >= 0 and steps["E"]["p10_us"] >= 0  # each read, then its credit, then its note
    assert sum(row["backlog_at_credit"].values()) > 300
    assert row["tx_turns"]["turns"] > 0 and row["rx_turns"]["turns"] > 0
    producer = row["producer"]
    assert producer["in_poll_us"] + producer["out_of_poll_us"] == pytest.approx(producer["per_message_us"], abs=0.02)
    assert producer["polls_per_message"] > 0 and producer["poll_end_to_queued"]["median_us"] > 0


def test_the_trace_is_off_unless_asked_and_a_bad_count_names_the_variable():
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    code = "from cubind.graph.ucx import pump; print(len(pump.trace()))"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("CUBIND_UCX_TRACE", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "0", done.stderr
    env["CUBIND_UCX_TRACE"] = "lots"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "CUBIND_UCX_TRACE: 'lots' is not a count" in done.stderr


@pytest.mark.parametrize("side, function", [("tx", "components.py:{} publish"), ("rx", "components.py:{} receive")])
def test_the_python_calls_of_a_message_are_counted_on_either_side(side, function):
    """bench/ucx_python_calls.py with host tensors: the profiled side's
    UcxTransmitter.publish or UcxReceiver.receive runs once a message."""
    pytest.importorskip("ucxx", reason="ucxx is not installed (cubind[ucx])")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import ucx_python_calls
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from cubind.graph.ucx import components

    method = components.UcxTransmitter.publish if side == "tx" else components.UcxReceiver.receive
    row = ucx_python_calls.run(side, 4096, "host", 200, min_calls=0.3, timeout=120)
    assert row["messages_per_s"] > 0 and row["side"] == side
    calls = {f["function"]: f for f in row["functions"]}
    found = calls[function.format(method.__code__.co_firstlineno)]
    assert 0.95 <= found["calls"] <= 1.05 and found["cumulative_us"] > 0, found


def test_pipeline_floor_runs_its_calls_on_the_emulated_driver(tmp_path, fake_driver):
    """bench/pipeline_floor.c (the resident pipeline's driver calls from C, the
    floor of graph_messages.py's row) builds against the toolkit and runs
    every call of its loop against the fake driver, which answers them all."""
    from tests._toolkit import header

    cuda_h, nvrtc_h = header("cuda.h"), header("nvrtc.h")
    if shutil.which("cc") is None or cuda_h is None or nvrtc_h is None:
        pytest.skip("no C compiler, cuda.h or nvrtc.h")
    lib = next((d for d in (cuda_h.parent.parent / "lib64", cuda_h.parent.parent / "lib")
                if any(d.glob("libnvrtc.so*"))), None)
    if lib is None:
        pytest.skip("no libnvrtc.so beside cuda.h")
    binary = tmp_path / "pipeline_floor"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(ROOT / "bench" / "pipeline_floor.c"), f"-I{cuda_h.parent}",
                    f"-I{nvrtc_h.parent}", f"-L{lib}", f"-Wl,-rpath,{lib}", "-lnvrtc", "-ldl"], check=True, timeout=120)
    env = {**os.environ, "CUBIND_CUDA_LIBRARY": str(fake_driver), "FAKE_DEVICE_COUNT": "1"}
    done = subprocess.run([str(binary), "500"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout.splitlines()[-1])
    assert row["messages"] == 500 and row["us_per_message"] > 0


def test_the_lock_model_times_its_takes_either_way(tmp_path):
    """bench/lock_let_in.c (the pump's lock as a model) built and run both
    ways: each prints its takes and their waits."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    binary = tmp_path / "lock_let_in"
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(binary), str(ROOT / "bench" / "lock_let_in.c")], check=True,
                   timeout=120)
    for mode, let_in in (("at-once", False), ("let-in", True)):
        row = json.loads(subprocess.run([str(binary), mode, "50"], capture_output=True, text=True, check=True,
                                        timeout=60).stdout)
        assert row["let_in"] is let_in and row["takes"] == 50
        assert 0 < row["mean_wait_us"] <= row["worst_wait_us"]


def test_the_legacy_record_bench_builds_against_the_toolkit(tmp_path):
    """bench/legacy_record.c (a ready event's cost beside device copies)
    needs a GPU to run, and calls more of the driver than the fake one
    exports: here it builds, warnings as errors, against the toolkit's stub."""
    from tests._toolkit import header

    cuda_h = header("cuda.h")
    stubs = None if cuda_h is None else cuda_h.parent.parent / "lib64" / "stubs"
    if shutil.which("cc") is None or stubs is None or not any(stubs.glob("libcuda.so*")):
        pytest.skip("no C compiler, cuda.h or the stub libcuda.so beside it")
    binary = tmp_path / "legacy_record"
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-pthread", "-o", str(binary),
                    str(ROOT / "bench" / "legacy_record.c"), f"-I{cuda_h.parent}", f"-L{stubs}", "-lcuda"],
                   check=True, timeout=120)
    assert binary.stat().st_size > 0
