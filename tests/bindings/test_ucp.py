"""UCX's UCP API (the ``ucx`` package, generated from ucp.h by
bindings/ucx.toml alone): a context, a worker and an endpoint to itself on
host memory, a tagged message through it, and the status pointer of the
nonblocking calls. No GPU; the libucx wheel (ucxx's) gives the library."""

import os
import sys

import numpy as np
import pytest

ucx = pytest.importorskip("ucx", reason="cubind's ucx package is not built (libucx's headers missing)")


@pytest.fixture(scope="module")
def libucx():
    try:
        import libucx
    except ImportError:
        if os.environ.get("CI") and sys.version_info >= (3, 11):  # where scripts/_common.sh installs it
            pytest.fail("the libucx wheel is not installed")
        pytest.skip("the libucx wheel is not installed (pip install libucx-cu13)")
    libucx.load_library()  # the copy ucxx uses: the loader finds it loaded
    return libucx


S = ucx.ucs_status_t


@pytest.fixture
def worker(libucx):
    err, config = ucx.ucp_config_read(None, None)
    assert err == S.UCS_OK and config
    assert ucx.ucp_config_modify(config, b"TLS", b"^cma") == (S.UCS_OK,)
    params = ucx.ucp_params_t()
    params.field_mask = ucx.ucp_params_field.UCP_PARAM_FIELD_FEATURES
    params.features = ucx.ucp_feature.UCP_FEATURE_TAG
    err, context = ucx.ucp_init_version(ucx.UCP_API_MAJOR, ucx.UCP_API_MINOR, params, config)
    ucx.ucp_config_release(config)
    assert err == S.UCS_OK
    wparams = ucx.ucp_worker_params_t()
    wparams.field_mask = ucx.ucp_worker_params_field.UCP_WORKER_PARAM_FIELD_THREAD_MODE
    wparams.thread_mode = ucx.ucs_thread_mode_t.UCS_THREAD_MODE_SINGLE
    err, w = ucx.ucp_worker_create(context, wparams)
    assert err == S.UCS_OK
    yield w
    ucx.ucp_worker_destroy(w)
    ucx.ucp_cleanup(context)


def endpoint_to_itself(w):
    err, address, length = ucx.ucp_worker_get_address(w)
    assert err == S.UCS_OK and address and length > 0
    params = ucx.ucp_ep_params_t()
    params.field_mask = ucx.ucp_ep_params_field.UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
    params.address = address
    err, ep = ucx.ucp_ep_create(w, params)
    ucx.ucp_worker_release_address(w, address)
    assert err == S.UCS_OK
    return ep


def test_a_tagged_message_to_itself_arrives_through_the_status_pointers(worker):
    ep = endpoint_to_itself(worker)
    sent, got = np.arange(64, dtype=np.uint8), np.zeros(64, np.uint8)
    param = ucx.ucp_request_param_t()
    # Posted first with nothing to match: in progress, the request's address returned.
    status, receive = ucx.ucp_tag_recv_nbx(worker, got.ctypes.data, got.nbytes, 7, 2**64 - 1, param)
    assert status == S.UCS_INPROGRESS and isinstance(receive, int) and receive
    assert ucx.ucp_request_check_status(receive) == (S.UCS_INPROGRESS,)
    status, send = ucx.ucp_tag_send_nbx(ep, sent.ctypes.data, sent.nbytes, 7, param)
    assert status in (S.UCS_OK, S.UCS_INPROGRESS)  # eager to itself: done at once (None) or soon
    assert (send is None) == (status == S.UCS_OK)
    for _ in range(10000):
        ucx.ucp_worker_progress(worker)
        if ucx.ucp_request_check_status(receive) == (S.UCS_OK,) and (
                send is None or ucx.ucp_request_check_status(send) == (S.UCS_OK,)):
            break
    assert ucx.ucp_request_check_status(receive) == (S.UCS_OK,)
    assert (got == sent).all()
    ucx.ucp_request_free(receive)
    if send is not None:
        ucx.ucp_request_free(send)


def test_a_failed_call_gives_its_status_and_no_request(worker):
    """A receive into more than the buffer holds is truncated: the request
    ends with UCS_ERR_MESSAGE_TRUNCATED; a status pointer holding an error
    gives that status and None."""
    ep = endpoint_to_itself(worker)
    sent, got = np.arange(64, dtype=np.uint8), np.zeros(8, np.uint8)
    param = ucx.ucp_request_param_t()
    status, receive = ucx.ucp_tag_recv_nbx(worker, got.ctypes.data, got.nbytes, 9, 2**64 - 1, param)
    assert status == S.UCS_INPROGRESS
    status, send = ucx.ucp_tag_send_nbx(ep, sent.ctypes.data, sent.nbytes, 9, param)
    for _ in range(10000):
        ucx.ucp_worker_progress(worker)
        if ucx.ucp_request_check_status(receive) != (S.UCS_INPROGRESS,):
            break
    assert ucx.ucp_request_check_status(receive) == (S.UCS_ERR_MESSAGE_TRUNCATED,)
    ucx.ucp_request_free(receive)
    if send is not None:
        ucx.ucp_request_free(send)


def test_the_flags_of_an_enum_naming_no_type_are_constants():
    assert ucx.UCP_MEM_MAP_NONBLOCK == 1 and ucx.UCP_MEM_MAP_PROT_REMOTE_WRITE == 512


def test_the_status_text_is_ucxs_own(libucx):
    assert ucx.ucs_status_string(S.UCS_ERR_NO_MEMORY) == (S.UCS_OK, b"Out of memory")


def test_a_void_call_returns_its_outputs_after_the_status(libucx):
    err, major, minor, release = ucx.ucp_get_version()
    assert err == S.UCS_OK
    assert ucx.ucp_get_version_string() == (S.UCS_OK, f"{major}.{minor}.{release}".encode())


def test_a_probe_returns_the_message_and_its_info(worker):
    """ucp_tag_probe_nb's info (an [out] record beside its message handle)."""
    ep = endpoint_to_itself(worker)
    sent = np.arange(48, dtype=np.uint8)
    param = ucx.ucp_request_param_t()
    status, send = ucx.ucp_tag_send_nbx(ep, sent.ctypes.data, sent.nbytes, 11, param)
    assert status in (S.UCS_OK, S.UCS_INPROGRESS)
    for _ in range(10000):
        ucx.ucp_worker_progress(worker)
        status, message, info = ucx.ucp_tag_probe_nb(worker, 11, 2**64 - 1, 0)
        if message:
            break
    assert status == S.UCS_OK and message
    assert (info.sender_tag, info.length) == (11, sent.nbytes)
    assert ucx.ucp_tag_probe_nb(worker, 12, 2**64 - 1, 0)[1] == 0  # no match: a NULL handle
    if send is not None:
        ucx.ucp_request_free(send)
