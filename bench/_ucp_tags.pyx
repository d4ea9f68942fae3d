# cython: language_level=3
"""Tag sends and receives posted from compiled code on ucxx's own worker and
endpoint (UCP's API, ucp.h), for bench/ucx_paths.py: what a message costs
when cubind.graph's UCX transport posts them from compiled code (issue 47,
item 1), between ucxx's Python API and UCX's C floor (bench/ucx_floor.c).

ucxx makes its worker in UCX's multi-thread mode and progresses it on a
thread of its own; this side posts from another thread and progresses the
worker too while it waits for a request. Built by ucx_paths.py against the libucx wheel's
headers (it is not part of cubind)."""

from libc.stdint cimport uint32_t, uint64_t, uintptr_t
from libc.string cimport memset


cdef extern from "ucp/api/ucp.h" nogil:
    ctypedef int ucs_status_t
    ctypedef void *ucs_status_ptr_t
    ctypedef void *ucp_worker_h
    ctypedef void *ucp_ep_h
    ctypedef uint64_t ucp_tag_t
    ctypedef struct ucp_request_param_t:
        uint32_t op_attr_mask
    int UCS_OK
    int UCS_INPROGRESS
    bint UCS_PTR_IS_ERR(ucs_status_ptr_t)
    bint UCS_PTR_IS_PTR(ucs_status_ptr_t)
    ucs_status_t UCS_PTR_STATUS(ucs_status_ptr_t)
    const char *ucs_status_string(ucs_status_t)
    ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h, const void *, size_t, ucp_tag_t, const ucp_request_param_t *)
    ucs_status_ptr_t ucp_tag_recv_nbx(ucp_worker_h, void *, size_t, ucp_tag_t, ucp_tag_t,
                                      const ucp_request_param_t *)
    ucs_status_t ucp_request_check_status(void *)
    void ucp_request_free(void *)
    unsigned ucp_worker_progress(ucp_worker_h)


cdef enum:
    WINDOW_MAX = 64


class UcpError(RuntimeError):
    pass


cdef int _wait(ucp_worker_h worker, void *request) noexcept nogil:
    """Progresses the worker until ``request`` ends (ucxx's own thread
    progresses it too, but it sleeps until the network wakes it: a
    rendezvous needs several turns); its status."""
    cdef ucs_status_t status
    if request == NULL:
        return UCS_OK
    status = ucp_request_check_status(request)
    while status == UCS_INPROGRESS:
        ucp_worker_progress(worker)
        status = ucp_request_check_status(request)
    ucp_request_free(request)
    return status


cdef int _posted(ucs_status_ptr_t ptr, void **request) noexcept nogil:
    """The request a post returned (NULL: done at once) into ``request``; its error status, else UCS_OK."""
    request[0] = NULL
    if UCS_PTR_IS_ERR(ptr):
        return UCS_PTR_STATUS(ptr)
    if UCS_PTR_IS_PTR(ptr):
        request[0] = ptr
    return UCS_OK


def _fail(what, int status):
    raise UcpError(f"{what} failed ({ucs_status_string(status).decode()})")


def _window(window):
    if not 1 <= window <= WINDOW_MAX:
        raise ValueError(f"window: {window} is not 1 to {WINDOW_MAX}")
    return window


cdef int _post(bint send, uintptr_t worker, uintptr_t endpoint, uint64_t tag, uintptr_t buffer, size_t nbytes,
               void **request) noexcept nogil:
    """A tag send on ``endpoint`` or a tag receive on ``worker``; its request
    into ``request`` (NULL: done at once), and its error status, else UCS_OK."""
    cdef ucp_request_param_t param
    memset(&param, 0, sizeof(param))
    if send:
        return _posted(ucp_tag_send_nbx(<ucp_ep_h>endpoint, <void *>buffer, nbytes, tag, &param), request)
    return _posted(ucp_tag_recv_nbx(<ucp_worker_h>worker, <void *>buffer, nbytes, tag, <ucp_tag_t>-1, &param),
                   request)


cdef int _drain(uintptr_t worker, void **requests, int w, int status) noexcept nogil:
    """Waits for the ``w`` requests; ``status``, else the first failure among them."""
    cdef int slot, last
    for slot in range(w):
        last = _wait(<ucp_worker_h>worker, requests[slot])
        requests[slot] = NULL
        if status == UCS_OK:
            status = last
    return status


def _many(bint send, uintptr_t worker, uintptr_t endpoint, uint64_t tag, uintptr_t buffer, size_t nbytes,
          size_t count, int window):
    cdef void *requests[WINDOW_MAX]
    cdef size_t i
    cdef int slot, status = UCS_OK, w = _window(window)
    memset(requests, 0, sizeof(requests))
    with nogil:
        for i in range(count):
            slot = i % w
            status = _wait(<ucp_worker_h>worker, requests[slot])
            requests[slot] = NULL
            if status == UCS_OK:
                status = _post(send, worker, endpoint, tag, buffer, nbytes, &requests[slot])
            if status != UCS_OK:
                break
        status = _drain(worker, requests, w, status)
    if status != UCS_OK:
        _fail("a tag send" if send else "a tag receive", status)


def send_many(uintptr_t worker, uintptr_t endpoint, uint64_t tag, uintptr_t buffer, size_t nbytes, size_t count,
              int window):
    """``count`` tag sends of ``nbytes`` at ``buffer`` on ucxx's endpoint
    handle (its worker's handle beside it), ``window`` in flight, the loop
    in C without the GIL."""
    _many(True, worker, endpoint, tag, buffer, nbytes, count, window)


def recv_many(uintptr_t worker, uint64_t tag, uintptr_t buffer, size_t nbytes, size_t count, int window):
    """``count`` tag receives into ``buffer`` (each overwrites it) on ucxx's
    worker handle, ``window`` posted ahead, the loop in C without the GIL."""
    _many(False, worker, 0, tag, buffer, nbytes, count, window)


cdef class Sender:
    """One message at a time from Python (a codelet's tick would publish
    each): ``post`` posts a tag send from C, waiting first for the send
    ``window`` messages back; ``drain`` waits for all."""

    cdef uintptr_t worker, endpoint
    cdef uint64_t tag
    cdef int window
    cdef size_t posted
    cdef void *requests[WINDOW_MAX]

    def __cinit__(self, uintptr_t worker, uintptr_t endpoint, uint64_t tag, int window):
        self.worker, self.endpoint, self.tag, self.window = worker, endpoint, tag, _window(window)
        memset(self.requests, 0, sizeof(self.requests))

    def post(self, uintptr_t buffer, size_t nbytes):
        cdef int slot = self.posted % self.window
        cdef int status
        with nogil:
            status = _wait(<ucp_worker_h>self.worker, self.requests[slot])
            self.requests[slot] = NULL
            if status == UCS_OK:
                status = _post(True, self.worker, self.endpoint, self.tag, buffer, nbytes, &self.requests[slot])
        if status != UCS_OK:
            _fail("a tag send", status)
        self.posted += 1

    def drain(self):
        cdef int status
        with nogil:
            status = _drain(self.worker, self.requests, self.window, UCS_OK)
        if status != UCS_OK:
            _fail("a tag send", status)
