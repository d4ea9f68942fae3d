# cython: language_level=3
"""The C declarations of the data path (``pump.pyx``, which Cython gives them
to): the POSIX calls it makes, UCX's UCP API (the generated ``ucx.cucp``), its constants and counters, and the structs of a channel, its messages
and the received blocks."""

from libc.stdint cimport int8_t, int64_t, uint32_t, uint64_t, uintptr_t

cimport cuda.cdriver as cdrv


cdef extern from "<sys/eventfd.h>" nogil:
    int eventfd(unsigned int initval, int flags)
    int EFD_NONBLOCK
    int EFD_CLOEXEC

cdef extern from "<unistd.h>" nogil:
    ssize_t read(int fd, void *buf, size_t count)
    ssize_t write(int fd, const void *buf, size_t count)
    int close(int fd)

cdef extern from "<poll.h>" nogil:
    struct pollfd:
        int fd
        short events
        short revents
    int poll(pollfd *fds, unsigned long nfds, int timeout)
    short POLLIN

cdef extern from "<time.h>" nogil:
    struct timespec:
        long tv_sec
        long tv_nsec
    int clock_gettime(int clk, timespec *tp)
    int CLOCK_MONOTONIC

cdef extern from "<sched.h>" nogil:
    int sched_yield()

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_mutexattr_t:
        pass
    int PTHREAD_MUTEX_ADAPTIVE_NP
    int pthread_mutexattr_init(pthread_mutexattr_t *)
    int pthread_mutexattr_settype(pthread_mutexattr_t *, int)
    int pthread_mutexattr_destroy(pthread_mutexattr_t *)
    int pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *)
    int pthread_mutex_lock(pthread_mutex_t *)
    int pthread_mutex_trylock(pthread_mutex_t *)
    int pthread_mutex_unlock(pthread_mutex_t *)
    ctypedef struct pthread_cond_t:
        pass
    ctypedef struct pthread_condattr_t:
        pass
    int pthread_condattr_init(pthread_condattr_t *)
    int pthread_condattr_setclock(pthread_condattr_t *, int)
    int pthread_condattr_destroy(pthread_condattr_t *)
    int pthread_cond_init(pthread_cond_t *, const pthread_condattr_t *)
    int pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const timespec *)
    int pthread_cond_signal(pthread_cond_t *)
    int pthread_cond_broadcast(pthread_cond_t *)

# UCX's UCP API through the C layer the generator makes from ucp.h (bindings/ucx.toml),
# resolved in the libucp that ucxx loaded: ``ucp.ucp_tag_send_nbx(...)``.
cimport ucx.cucp as ucp
from ucx.cucp cimport ucs_status_t, ucs_status_ptr_t, ucp_context_h, ucp_worker_h, ucp_ep_h, ucp_address_t, ucp_tag_t
from ucx.cucp cimport ucp_config_t, ucp_params_t, ucp_worker_params_t, ucp_ep_params_t, ucp_request_param_t
from ucx.cucp cimport ucp_tag_recv_info_t, UCS_OK, UCS_INPROGRESS, UCS_ERR_CANCELED, UCS_ERR_BUSY
from ucx.cucp cimport UCS_ERR_INVALID_PARAM, UCS_ERR_NO_MEMORY

cdef extern from "ucs/type/status.h" nogil:
    # A status pointer's macros (functions the generator binds none of).
    bint UCS_PTR_IS_ERR(ucs_status_ptr_t)
    bint UCS_PTR_IS_PTR(ucs_status_ptr_t)
    ucs_status_t UCS_PTR_STATUS(ucs_status_ptr_t)


cdef enum:
    # A header frame's size: the prefix, the buffers' entries and the JSON that fits (the rest is REST).
    FRAME = 4096
    KIND_MESSAGE = 1
    KIND_BYE = 2
    TAG_HEADER = 1
    TAG_REST = 2
    TAG_DATA = 3
    TAG_CREDIT = 4
    # Returned device blocks settled (one cuCtxSynchronize) together, and free blocks kept per size.
    SETTLE = 4
    KEEP = 16
    CREDIT_SLOTS = 8
    # Progress calls per turn of the loop, and how long it spins idle before it sleeps on the worker's events.
    PROGRESS_BURST = 64
    SPIN_NS = 200000
    # How long the pump's thread stays parked after a thread left poll() (``_loop``), or leaves the
    # news to a scheduler that waited in poll() for them (``Pump._await_news``).
    HANDOVER_NS = 1000000
    # How long a thread waiting in poll() for a transmitting process's news looks for them before it
    # sleeps on the pump's condition (``Pump._await_news``).
    AWAIT_SPIN_NS = 30000
    # How long a looping thread, having let the lock go, waits for threads blocked on it to take it
    # first (``Pump._let_in``).
    LET_IN_NS = 50000
    # How long a forced close waits for requests UCX cannot cancel before it gives them up.
    ABANDON_NS = 1000000000
    # Channels whose news one turn hands their owners; more wait for the next turn.
    NEWS_MAX = 64
    TURN_WORK = 1
    TURN_NEWS = 2
    TURN_FLIGHT = 4  # a channel has sends or receives in flight (UCX's next step needs a turn)


# The pump's counters (``Pump.stats``): where a message's time goes, read on a
# machine without a profiler that sees into C (each costs a clock read).
cdef enum:
    S_TURNS_THREAD  # turns of the data path by the pump's thread
    S_TURNS_POLL  # by threads in poll()
    S_WAKES  # the pump's thread woken by a write to its eventfd
    S_SLEEPS  # the pump's thread asleep on the worker's events
    S_POLLS
    S_POLL_NS
    S_POLL_NEWS  # polls that ended with news
    S_HEADERS  # headers arrived (messages and goodbyes)
    S_RX_PARTS_NS  # from a header's arrival to its buffers' (summed over messages)
    S_RX_TAKE_NS  # from a message complete to Python taking it
    S_RX_TAKEN
    S_TX_QUEUED
    S_TX_READY_NS  # from a message queued to its sends posted (its ready event; a credit, on a gated channel)
    S_TX_DONE_NS  # from posted to every send complete
    S_TX_SENT
    S_CREDIT_NOTES_SENT
    S_CREDIT_NOTES_IN
    S_SETTLES
    S_SETTLE_NS
    S_BLOCKS_MADE
    S_LOCK_WAITS  # the pump's lock found taken by a caller (a Channel's method, poll(), a block given back)
    S_LOCK_WAIT_NS
    S_LOOP_LOCK_WAITS  # ... by the pump's thread
    S_LOOP_LOCK_WAIT_NS
    S_TURNS_PARKED  # turns by the parked pump's thread, for transfers in flight
    S_TAKEN_UP  # messages queued by a caller that a turn took (its inbox, or the lock with the thread awake)
    S_NOTIFIES  # owners called on the pump's thread (with the GIL)
    S_NOTIFY_NS  # ... from wanting the GIL to the calls' end
    S_LET_INS  # a looping thread (the pump's, a poller) waited for threads blocked on the lock to take it
    S_LET_IN_NS
    S_COUNT


cdef struct prefix_t:
    uint32_t kind
    uint32_t nbuf
    uint64_t value  # a message: its JSON's length; a goodbye: the count of messages sent before it


cdef struct entry_t:  # one buffer of a message, in its header
    uint64_t nbytes
    uint32_t device
    uint32_t pad


cdef struct block_t:
    block_t *next
    uintptr_t ptr
    size_t nbytes
    int device
    cdrv.CUcontext ctx


cdef struct out_t:  # a message to send
    out_t *next
    char *frame
    size_t frame_len
    char *rest
    size_t rest_len
    int nbuf
    uintptr_t *ptrs
    entry_t *entries
    void **reqs  # nbuf + 2
    int nreq
    cdrv.CUevent ready
    int posted
    bint spends  # takes one of the receiver's credits (a message; not the goodbye)
    bint forced  # posted past the credits, with all before it (a policy 0 message past the room)
    uint64_t t_queued
    uint64_t t_posted


cdef struct in_t:  # a message arriving
    in_t *next
    char *frame
    size_t frame_len
    char *rest
    size_t rest_len
    int nbuf
    block_t **blocks
    void **reqs
    int nreq
    uint32_t kind
    uint64_t value
    uint64_t t_header
    uint64_t t_complete


cdef struct chan_t:
    chan_t *next
    int refs  # the pump's and the Channel's
    int64_t id
    ucp_ep_h ep
    uint64_t tag
    cdrv.CUcontext ctx
    bint closing
    bint force
    uint64_t close_ns  # when its close took its first step
    void *close_req
    bint closed
    bint notify
    ucs_status_t failure
    const char *failed
    # transmitting
    void *inbox  # out_t queued by callers without the lock, newest first (``Channel._queue``)
    out_t *out_head
    out_t *out_tail
    out_t *out_next  # the first not posted
    uint64_t sent
    # Where ``gated`` (``Channel.gate``): messages are posted only while the receiver's credits
    # last (``wire``, spent by each post, given back by its notes); the rest wait here, in order,
    # and leave from a turn as the notes arrive, without a call to Python.
    bint gated
    int64_t wire
    int forced  # forced messages queued, not posted
    void *credit_req
    uint64_t credit_buf
    uint64_t credits_in
    # receiving
    bint receiving
    void *hdr_req
    char *hdr_buf
    in_t *in_head  # arriving, in order; each moves to ``done`` once its parts are all here
    in_t *in_tail
    void *done  # in_t arrived whole, newest first: taken without the lock (``Channel.take``)
    uint64_t credit_pending
    uint64_t credit_inbox  # credits given by callers without the lock (``Channel.credit``)
    size_t held  # a header's length, held until a CUDA context is given for its device buffers
    bint wants_cuda
    bint bye_in  # the transmitter's goodbye arrived: no credit is sent after it
    void *credit_send_req[CREDIT_SLOTS]
    uint64_t credit_send_buf[CREDIT_SLOTS]
