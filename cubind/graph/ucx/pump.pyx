# cython: language_level=3, boundscheck=False, wraparound=False
"""The per-message data path of cubind.graph's UCX queues, in compiled code
(issue 47): a UCP worker of its own on a context of its own, and the thread
that progresses it (``Pump``). Each connection (``Channel``) moves, on an
endpoint made from its peer's worker address:

- transmitter to receiver: per message a header frame (``HEADER``: a small
  binary prefix saying each tensor buffer's size and memory, then the
  JSON of ``wire.encode``; what does not fit ``FRAME`` follows as ``REST``)
  and each buffer (``DATA``), from where it lies; a goodbye frame with the
  count sent, after the messages;
- receiver to transmitter: credits (``CREDIT``, 8 bytes: the count).

The receiving side posts each message's buffer receives from C as soon as
its header arrives, into blocks of its own (``cuMemAlloc`` memory, which
UCX's CUDA IPC can use, or host memory); Python takes whole messages, in
order, and hands the blocks out as arrays (``Block``), which come back
when the last array over them goes. A ``cuMemAlloc`` per message was half
of a receiver's loop on the H200 (1 MiB), and its ``cuMemFree`` waits for
the whole device; so blocks are kept, ``KEEP`` free ones per size. A
returned device block may still be read by kernels its consumer queued on
streams the pump cannot know: as ``cuMemFree`` does, one
``cuCtxSynchronize`` settles them, but once for ``SETTLE`` returned blocks
rather than once per message (until then a receive takes a new block). The transmitting side's posts
wait, in order, for each message's ready event (``cuEventQuery`` from the
pump's loop, not a wait on the scheduler's thread).

Python is called once per batch (the owner's ``pump_ready``), from the
pump's thread or from a thread in ``poll`` (a scheduler with nothing to
tick: where a channel receives, it drives the data path meanwhile while
the pump's thread is parked; where all transmit, it waits for the news
the pump's thread leaves it), never with the pump's lock held: a thread
holding the GIL may wait for that lock, never the reverse. ``stats`` counts what the data path
did and how long each step took. Connection, hello, losses and
goodbyes from the receiving side stay on ucxx (``transport.py``)."""

cimport cython
from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBuffer_FillInfo, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport int64_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

cimport cuda.cdriver as cdrv

import os


# The counters' names, in the order of pump.pxd's S_ constants.
STAT_NAMES = ("turns_thread", "turns_poll", "wakes", "sleeps", "polls", "poll_ns", "poll_news", "headers",
              "rx_parts_ns", "rx_take_ns", "rx_taken", "tx_queued", "tx_ready_ns", "tx_done_ns", "tx_sent",
              "credit_notes_sent", "credit_notes_in", "settles", "settle_ns", "blocks_made", "lock_waits",
              "lock_wait_ns", "loop_lock_waits", "loop_lock_wait_ns", "turns_parked",
              "taken_up", "notifies", "notify_ns", "let_ins", "let_in_ns")


cdef extern from *:
    """
    /* The CUDA context the data path last made current on this thread: a spinning thread's
       turns each made a channel's context current, a driver call every turn. */
    static __thread void *cubind_pump_current = 0;
    """
    void *_current "cubind_pump_current"

cdef extern from *:
    """
    /* A channel's inbox and the pump's ``dozing``, shared without the lock: sequentially
       consistent, so that a caller's push and the pump thread's decision to doze see each
       other (``Channel._queue``, ``Pump._doze``). */
    static inline void cubind_push(void **head, void **next, void *item) {
        void *old = __atomic_load_n(head, __ATOMIC_SEQ_CST);
        do { *next = old; } while (!__atomic_compare_exchange_n(head, &old, item, 0, __ATOMIC_SEQ_CST,
                                                                  __ATOMIC_SEQ_CST));
    }
    static inline void *cubind_take_all(void **head) { return __atomic_exchange_n(head, 0, __ATOMIC_SEQ_CST); }
    static inline void *cubind_load_ptr(void **p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline int cubind_load_int(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline void cubind_store_int(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    static inline void cubind_add_int(int *p, int n) { __atomic_add_fetch(p, n, __ATOMIC_SEQ_CST); }
    static inline void cubind_add_u64(uint64_t *p, uint64_t n) { __atomic_add_fetch(p, n, __ATOMIC_SEQ_CST); }
    static inline uint64_t cubind_take_u64(uint64_t *p) { return __atomic_exchange_n(p, 0, __ATOMIC_SEQ_CST); }
    static inline uint64_t cubind_load_u64(uint64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    """
    void _push "cubind_push"(void **head, void **next, void *item) nogil
    void *_take_all "cubind_take_all"(void **head) nogil
    void *_load_ptr "cubind_load_ptr"(void **p) nogil
    int _load_int "cubind_load_int"(int *p) nogil
    void _store_int "cubind_store_int"(int *p, int v) nogil
    void _add_int "cubind_add_int"(int *p, int n) nogil
    void _add_u64 "cubind_add_u64"(uint64_t *p, uint64_t n) nogil
    uint64_t _take_u64 "cubind_take_u64"(uint64_t *p) nogil
    uint64_t _load_u64 "cubind_load_u64"(uint64_t *p) nogil


cdef extern from *:
    """
    /* The data path's trace (``trace``): each event (code, CLOCK_MONOTONIC ns, value) in the
       next slot, from any thread; off (one load a step) unless CUBIND_UCX_TRACE gives room. */
    static int cubind_tracing = 0;
    static long long cubind_trace_room = 0, cubind_traced = 0;  /* 64 bits: a long run never wraps */
    static uint64_t *cubind_trace = 0;
    static inline void cubind_tr(uint64_t code, uint64_t t, uint64_t v) {
        long long i = __atomic_fetch_add(&cubind_traced, 1, __ATOMIC_RELAXED);
        if (i < cubind_trace_room) { uint64_t *e = cubind_trace + 3 * (size_t)i; e[0] = code; e[1] = t; e[2] = v; }
    }
    """
    int _tracing "cubind_tracing"
    long long _trace_room "cubind_trace_room"
    long long _traced "cubind_traced"
    uint64_t *_trace_events "cubind_trace"
    void _tr "cubind_tr"(uint64_t code, uint64_t t, uint64_t v) nogil


# The trace's events (``trace``): (code, time, value). A message's steps, in order: POSTED (the
# sends posted; value: when it was queued), ARRIVED at the receiver (value: when its header came),
# TAKEN by Python (value: how many at once), CREDITED by Python, CREDIT_OUT (a note posted; value:
# its count), CREDIT_IN at the transmitter, SENT (every send complete; value: when posted). And
# each turn (TURN: value its length in ns << 4 | what it found; PROGRESS at its start: value the
# part of it in ucp_worker_progress), poll's start and end, and the pump's thread's calls of the
# owners (OWNERS: value their length).
cdef enum:
    T_POSTED = 1
    T_SENT, T_CREDIT_IN, T_ARRIVED, T_CREDIT_OUT, T_TAKEN, T_CREDITED, T_TURN, T_POLL_START, T_POLL_END, T_OWNERS
    T_PROGRESS


TRACE_EVENTS = {"POSTED": T_POSTED, "SENT": T_SENT, "CREDIT_IN": T_CREDIT_IN, "ARRIVED": T_ARRIVED,
                "CREDIT_OUT": T_CREDIT_OUT, "TAKEN": T_TAKEN, "CREDITED": T_CREDITED, "TURN": T_TURN,
                "POLL_START": T_POLL_START, "POLL_END": T_POLL_END, "OWNERS": T_OWNERS, "PROGRESS": T_PROGRESS}


def _trace_capacity():
    """Events to keep, from ``CUBIND_UCX_TRACE`` (unset or 0: no trace)."""
    text = os.environ.get("CUBIND_UCX_TRACE", "").strip()
    try:
        room = int(text or 0)
    except ValueError:
        room = -1
    if not 0 <= room <= 100_000_000:
        raise ValueError(f"CUBIND_UCX_TRACE: {text!r} is not a count of events to keep (0 to 100000000)")
    return room


cdef void _start_trace() except *:
    global _tracing, _trace_room, _trace_events
    room = _trace_capacity()
    if room:
        _trace_events = <uint64_t *>calloc(3 * <size_t>room, sizeof(uint64_t))
        if _trace_events == NULL:
            raise MemoryError(f"CUBIND_UCX_TRACE: room for {room} events")
        _trace_room, _tracing = room, 1


_start_trace()


def trace():
    """The events traced so far in this process (``CUBIND_UCX_TRACE`` of
    them at most), flat: code, CLOCK_MONOTONIC ns and value for each; empty
    where the variable was unset. bench/ucx_cycle.py reads a message's
    cycle from both sides' traces (the clock is the host's)."""
    import array

    events = array.array("Q")
    cdef long long n = min(_traced, _trace_room)
    if n:
        events.frombytes((<char *>_trace_events)[:3 * n * sizeof(uint64_t)])
    return events


cdef inline cdrv.CUresult _make_current(cdrv.CUcontext ctx) noexcept nogil:
    global _current
    cdef cdrv.CUresult err = cdrv.CUDA_SUCCESS
    if <void *>ctx != _current:
        err = cdrv.cuCtxSetCurrent(ctx)
        _current = <void *>ctx if err == cdrv.CUDA_SUCCESS else <void *>1
    return err


cdef inline cdrv.CUcontext _own_context() noexcept nogil:
    """The calling thread's current context, before turns that change it
    (given back with ``_make_current``); the cache learns it."""
    global _current
    cdef cdrv.CUcontext saved = NULL
    cdrv.cuCtxGetCurrent(&saved)
    _current = <void *>saved
    return saved


cdef inline void _forget_current() noexcept nogil:
    """Python ran on this thread (an owner's ``pump_ready``), which may have
    made another context current: the next turn sets its own again."""
    global _current
    _current = <void *>1


class PumpError(RuntimeError):
    """UCX could not be loaded or set up for the data path."""


cdef uint64_t _now_ns() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return <uint64_t>t.tv_sec * 1000000000 + <uint64_t>t.tv_nsec


cdef void *_posted(ucs_status_ptr_t ptr, ucs_status_t *status) noexcept nogil:
    """The request of a post (NULL: done at once); its error in ``status``."""
    status[0] = UCS_OK
    if UCS_PTR_IS_ERR(ptr):
        status[0] = UCS_PTR_STATUS(ptr)
        return NULL
    if UCS_PTR_IS_PTR(ptr):
        return ptr
    return NULL


cdef int _done(void **req, ucs_status_t *status) noexcept nogil:
    """Whether ``req[0]`` has ended (it is then freed and NULL), its status in ``status``."""
    cdef ucs_status_t st
    if req[0] == NULL:
        return 1
    st = ucp.ucp_request_check_status(req[0])
    if st == UCS_INPROGRESS:
        return 0
    ucp.ucp_request_free(req[0])
    req[0] = NULL
    if st < 0 and status[0] == UCS_OK:
        status[0] = st
    return 1


cdef inline void _let_go(void **req) noexcept nogil:
    """``req[0]`` given up: UCX frees it when it ends."""
    if req[0] != NULL:
        ucp.ucp_request_free(req[0])
        req[0] = NULL


cdef inline void _fail(chan_t *ch, ucs_status_t st, const char *what) noexcept nogil:
    if st == UCS_OK or (ch.closing and st == UCS_ERR_CANCELED):
        return
    if ch.failure == UCS_OK:
        ch.failure, ch.failed = st, what
        ch.notify = True


cdef out_t *_new_out(size_t nbuf, size_t frame_len) noexcept nogil:
    """A message to send, zeroed, in one allocation with its arrays (``nbuf``
    buffers) and its header frame (``frame_len`` bytes); NULL where memory
    is short. Five allocations a message, freed on another thread, were a
    tenth of ``Channel.send`` on the H200."""
    cdef size_t ptrs = sizeof(out_t), entries = ptrs + (nbuf + 1) * sizeof(uintptr_t)
    cdef size_t reqs = entries + (nbuf + 1) * sizeof(entry_t), frame = reqs + (nbuf + 2) * sizeof(void *)
    cdef char *mem = <char *>calloc(1, frame + frame_len)
    cdef out_t *o = <out_t *>mem
    if mem == NULL:
        return NULL
    o.nbuf = nbuf
    o.ptrs = <uintptr_t *>(mem + ptrs)
    o.entries = <entry_t *>(mem + entries)
    o.reqs = <void **>(mem + reqs)
    o.frame = mem + frame
    o.frame_len = frame_len
    return o


cdef void _free_out(out_t *o) noexcept nogil:
    free(o.rest)  # the rest of a long header; all else is in the one allocation
    free(o)


cdef bint _has_device(const char *frame, size_t length) noexcept nogil:
    """Whether a header frame names a device buffer (an invalid one is left to ``_arrived``)."""
    cdef const prefix_t *p = <const prefix_t *>frame
    cdef const entry_t *e = <const entry_t *>(frame + sizeof(prefix_t))
    cdef uint32_t i
    if length < sizeof(prefix_t) or p.nbuf > 4096 or length < sizeof(prefix_t) + p.nbuf * sizeof(entry_t):
        return False
    for i in range(p.nbuf):
        if e[i].device:
            return True
    return False


cdef inline void _host_param(ucp_request_param_t *param, uint32_t flags) noexcept nogil:
    """``param`` for a header, credit or goodbye: host memory said, so that UCX
    does not ask which memory the pointer is (a CUDA driver call where UCX
    loaded its CUDA transports), and ``flags``."""
    memset(param, 0, sizeof(ucp_request_param_t))
    param.op_attr_mask = ucp.UCP_OP_ATTR_FIELD_MEMORY_TYPE | flags
    param.memory_type = ucp.UCS_MEMORY_TYPE_HOST


cdef inline ucp_tag_t _tag(chan_t *ch, int kind) noexcept nogil:
    return ch.tag | <ucp_tag_t>kind


cdef class Pump:
    """One UCP worker and its thread, for the process (``transport.Engine``
    makes it at the first connection). ``address`` is the worker's, sent to
    a peer in the hello; ``open`` makes a connection's channel."""

    cdef ucp_context_h context
    cdef ucp_worker_h worker
    cdef int efd, wake_fd
    cdef pthread_mutex_t mu
    cdef chan_t *chans
    cdef block_t *free_blocks
    cdef block_t *returned
    cdef int nreturned
    # Blocks whose last array went, newest first, pushed without the lock (``_give_back``) and
    # sorted by the next turn that takes a block (``_collect_back``).
    cdef void *back
    cdef bint sleeping, stopping, running
    cdef bint parked  # the pump's thread leaves the data path to a poller (``_loop``)
    cdef bint napping  # ... and waits on its eventfd, no transfer being in flight
    cdef bint flight  # the last turn left sends or receives in flight
    cdef uint64_t flight_ns  # when a parked thread's turn last did
    cdef int pollers  # threads in poll(): they drive the data path meanwhile, not the pump's thread
    cdef uint64_t left_ns  # when a thread last left poll()
    cdef bint cuda  # a channel was given a CUDA context: other threads' current one is kept around our turns
    # 0 while the pump's thread turns the data path: a caller's message pushed to its channel's inbox
    # is then taken by its next turn, without the lock (``Channel._queue``); 1 while it naps or
    # sleeps, before it runs and once it stops. Atomic (``_load_int``, ``_store_int``).
    cdef int dozing
    # Threads blocked on the lock (``_enter``); atomic. A looping thread lets them in before it takes
    # the lock again (``_let_in``).
    cdef int waiters
    # A channel has news its owner was not given yet (set by the turn that finds it, cleared by
    # ``_gather``); atomic: a thread waiting in poll() reads it without the lock (``_await_news``).
    cdef int newsflag
    # Threads waiting in poll() for news (looking, then asleep on ``news``; the lock held), and
    # when one last left with news: the turning thread leaves a transmitting process's news to
    # its scheduler meanwhile (``_leaves_news``).
    cdef pthread_cond_t news
    cdef int news_waiters
    cdef uint64_t awaited_ns
    cdef int64_t next_id
    cdef dict channels  # id -> Channel, for the notifications
    cdef bytes _address
    cdef uint64_t st[S_COUNT]

    def __cinit__(self):
        cdef ucp_config_t *config = NULL
        cdef ucp_params_t params
        cdef ucp_worker_params_t wparams
        cdef ucs_status_t st
        cdef ucp_address_t *address
        cdef size_t length
        cdef pthread_mutexattr_t attr
        cdef pthread_condattr_t cattr
        # Adaptive: a caller finding the lock taken by a turn (a few microseconds) spins a
        # little before it sleeps in the kernel.
        pthread_mutexattr_init(&attr)
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP)
        pthread_mutex_init(&self.mu, &attr)
        pthread_mutexattr_destroy(&attr)
        pthread_condattr_init(&cattr)
        pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC)  # its waits end at a deadline of _now_ns()'s clock
        pthread_cond_init(&self.news, &cattr)
        pthread_condattr_destroy(&cattr)
        self.efd = self.wake_fd = -1
        self.dozing = 1
        self.channels = {}
        try:
            # The libucp ucxx loaded (the loader finds it loaded first): the request frees the data
            # path makes without the GIL are noexcept, so the library is opened here, raising.
            ucp.load()
        except OSError as exc:
            raise PumpError(f"UCX's libucp could not be loaded: {exc}") from exc
        st = ucp.ucp_config_read(NULL, NULL, &config)
        if st != UCS_OK:
            raise PumpError(f"ucp_config_read: {_status(st)}")
        if "UCX_TLS" not in os.environ:
            # Every transport but CMA, unless the user names them. A host buffer's rendezvous by
            # CMA reads the peer's memory with process_vm_readv, and where the peer has died
            # meanwhile UCX aborts this process (the same-place endpoints have no peer-failure
            # handling: it would leave TCP alone). Shared memory carries those buffers instead.
            st = ucp.ucp_config_modify(config, b"TLS", b"^cma")
            if st != UCS_OK:
                ucp.ucp_config_release(config)
                raise PumpError(f"ucp_config_modify TLS=^cma: {_status(st)}")
        memset(&params, 0, sizeof(params))
        params.field_mask = ucp.UCP_PARAM_FIELD_FEATURES
        params.features = ucp.UCP_FEATURE_TAG | ucp.UCP_FEATURE_WAKEUP
        st = ucp.ucp_init_version(1, 10, &params, config, &self.context)
        ucp.ucp_config_release(config)
        if st != UCS_OK:
            raise PumpError(f"ucp_init: {_status(st)}")
        try:
            memset(&wparams, 0, sizeof(wparams))
            wparams.field_mask = ucp.UCP_WORKER_PARAM_FIELD_THREAD_MODE
            wparams.thread_mode = ucp.UCS_THREAD_MODE_SERIALIZED  # the pump's lock serializes every call
            st = ucp.ucp_worker_create(self.context, &wparams, &self.worker)
            if st != UCS_OK:
                self.worker = NULL
                raise PumpError(f"ucp_worker_create: {_status(st)}")
            st = ucp.ucp_worker_get_efd(self.worker, &self.efd)
            if st != UCS_OK:
                raise PumpError(f"ucp_worker_get_efd: {_status(st)}")
            st = ucp.ucp_worker_get_address(self.worker, &address, &length)
            if st != UCS_OK:
                raise PumpError(f"ucp_worker_get_address: {_status(st)}")
            self._address = (<char *>address)[:length]
            ucp.ucp_worker_release_address(self.worker, address)
            self.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)
            if self.wake_fd < 0:
                raise PumpError("eventfd: the pump's wake-up descriptor could not be made")
        except BaseException:
            self._teardown()  # a pump that failed to start holds no UCX context
            raise

    @property
    def address(self):
        """This worker's address (bytes), for a peer's endpoint to it."""
        return self._address

    def open(self, bytes peer_address, uint64_t tag, bint peer_checks, bint receiving, owner):
        """A channel to the worker at ``peer_address`` (another process's
        ``address``), its messages tagged ``tag`` (the receiver's choice; its
        low byte is the kind). ``peer_checks``: UCX's peer-failure handling
        (a peer elsewhere; it keeps only transports that detect a dead peer).
        ``owner.pump_ready(channel)`` is called on the pump's thread when
        messages, credits or a failure arrive, or when the channel
        ``wants_cuda`` (``Channel.use_cuda``)."""
        cdef ucp_ep_params_t params
        cdef ucs_status_t st
        cdef chan_t *ch
        cdef const char *raw = peer_address
        if tag & 0xFF:
            raise ValueError(f"tag: {tag:#x} has a low byte; it holds the kind of message")
        ch = <chan_t *>calloc(1, sizeof(chan_t))
        if ch == NULL:
            raise MemoryError()
        memset(&params, 0, sizeof(params))
        params.field_mask = ucp.UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | ucp.UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
        params.address = <const ucp_address_t *>raw
        params.err_mode = ucp.UCP_ERR_HANDLING_MODE_PEER if peer_checks else ucp.UCP_ERR_HANDLING_MODE_NONE
        with nogil:
            self._enter()
            st = ucp.ucp_ep_create(self.worker, &params, &ch.ep)
            pthread_mutex_unlock(&self.mu)
        if st != UCS_OK:
            free(ch)
            raise PumpError(f"ucp_ep_create to the peer's worker: {_status(st)}")
        ch.tag, ch.receiving, ch.refs = tag, receiving, 2
        if receiving:
            ch.hdr_buf = <char *>malloc(FRAME)
        channel = Channel.__new__(Channel)
        (<Channel>channel).pump, (<Channel>channel).ch, (<Channel>channel).owner = self, ch, owner
        self.next_id += 1
        ch.id = self.next_id
        self.channels[ch.id] = channel
        with nogil:
            self._enter()
            ch.next, self.chans = self.chans, ch
            self._wake()
            pthread_mutex_unlock(&self.mu)
        return channel

    cdef void _wake(self) noexcept nogil:
        """After a change the loop must see (the lock held): wakes it if it sleeps."""
        cdef uint64_t one = 1
        if self.sleeping or (self.napping and self.flight):
            self.sleeping = self.napping = False
            self.st[S_WAKES] += 1
            write(self.wake_fd, &one, 8)

    cdef bint _taken_up(self) noexcept nogil:
        """Whether the pump's thread posts what a caller just queued on its
        next turn (the lock held): it runs, neither napping nor asleep. The
        caller then leaves the posting (the ready event's query, UCX's sends,
        their CUDA context) to it: on a transmitting scheduler's thread, which
        runs the codelets, they took 17 % of its samples at 1 MiB device
        messages (py-spy on the H200)."""
        if self.running and not (self.stopping or self.napping or self.sleeping):
            self.flight = True  # a parked thread turns rather than naps (``_loop``)
            self.st[S_TAKEN_UP] += 1
            return True
        return False

    cdef bint _doze(self) noexcept nogil:
        """Before the pump's thread naps or sleeps (the lock held): whether it
        may. ``dozing`` is set first, then the inboxes are read; a caller
        pushes first, then reads ``dozing``. So a message (or a credit)
        given while this thread goes to doze is either seen here (it turns
        instead) or sees ``dozing`` and is posted by its caller
        (``Channel._queue``, ``Channel.credit``)."""
        cdef chan_t *ch = self.chans
        _store_int(&self.dozing, 1)
        while ch != NULL:
            if _load_ptr(&ch.inbox) != NULL or _load_u64(&ch.credit_inbox):
                _store_int(&self.dozing, 0)
                return False
            ch = ch.next
        return True

    cdef void _drain(self, chan_t *ch, bint turned) noexcept nogil:
        """What callers pushed to ``ch``'s inbox, moved to its queue in order
        (the lock held); dropped where the channel is closing. ``turned``: by
        a turn of the data path (counted as ``taken_up``)."""
        cdef out_t *o = <out_t *>_take_all(&ch.inbox)
        cdef out_t *order = NULL
        cdef out_t *nxt
        while o != NULL:  # pushed newest first
            nxt = o.next
            o.next, order = order, o
            o = nxt
        while order != NULL:
            o, order = order, order.next
            o.next = NULL
            if ch.closing:
                _free_out(o)
                continue
            self.st[S_TX_QUEUED] += 1
            if o.forced:
                ch.forced += 1
            if turned:
                self.st[S_TAKEN_UP] += 1
            if ch.out_tail == NULL:
                ch.out_head = o
            else:
                ch.out_tail.next = o
            ch.out_tail = o
            if ch.out_next == NULL:
                ch.out_next = o

    cdef inline void _block(self) noexcept nogil:
        """Waits for the pump's lock, counted meanwhile in ``waiters`` so
        that a looping thread lets this one in (``_let_in``)."""
        _add_int(&self.waiters, 1)
        pthread_mutex_lock(&self.mu)
        _add_int(&self.waiters, -1)

    cdef inline void _enter(self) noexcept nogil:
        """Takes the pump's lock (a wait for it not counted in ``stats``)."""
        if pthread_mutex_trylock(&self.mu) != 0:
            self._block()

    cdef inline uint64_t _let_in(self) noexcept nogil:
        """After a looping thread (the pump's, a poller) lets the lock go:
        waits up to ``LET_IN_NS`` while threads are blocked on it. Taking it
        again at once, as a turning thread did, starved them: an unlock wakes
        a blocked thread, which finds the lock taken again by the time it
        runs. In a model (``bench/lock_let_in.c``: 2 us turns, two busy
        cores) a thread taking the lock waited 109 to 166 us on average and
        up to 4.4 ms; let in, 1.6 to 2.8 us. On the 16-core GPU host a
        sender's ``stop`` so waited out a 1 GiB rendezvous (the forced-close
        test failed 3 of 8 runs). The time it waited, 0 if no thread
        was blocked (counted by the caller once it holds the lock:
        ``_counted_let_in``)."""
        cdef uint64_t t
        if not _load_int(&self.waiters):
            return 0
        t = _now_ns()
        while _load_int(&self.waiters) and _now_ns() - t < LET_IN_NS:
            # Yielding, not spinning: where the blocked thread waits for this core (fewer cores
            # than busy threads), a spin kept it off for the whole wait (empty messages at 1 in
            # flight lost a third of their rate on 2 cores); on a free core it returns at once.
            sched_yield()
        return _now_ns() - t + 1

    cdef inline void _counted_let_in(self, uint64_t ns) noexcept nogil:
        """``_let_in``'s wait counted (the lock held)."""
        if ns:
            self.st[S_LET_INS] += 1
            self.st[S_LET_IN_NS] += ns - 1

    cdef inline void _lock(self, int waits) noexcept nogil:
        """Takes the pump's lock; a wait for it is counted in ``waits``
        (``S_LOCK_WAITS`` or ``S_LOOP_LOCK_WAITS``) and the next counter."""
        cdef uint64_t t
        if pthread_mutex_trylock(&self.mu) == 0:
            return
        t = _now_ns()
        self._block()
        self.st[waits] += 1
        self.st[waits + 1] += _now_ns() - t

    cdef inline void _lock_keeping_gil(self) noexcept:
        """The pump's lock for a caller holding the GIL, which keeps it unless
        the lock is held: a scheduler hands over a message or a credit in a
        few lock-free steps and a short turn, and letting the GIL go around
        each gave it to the process's other threads (py-spy on the H200: the
        hand-over in ``_queue`` was 3.5 % of a transmitting scheduler's
        samples). Safe while no thread
        holding the lock waits for the GIL: the pump's thread calls its
        owners (``_call_owners``) after letting the lock go."""
        if pthread_mutex_trylock(&self.mu) == 0:
            return
        with nogil:
            self._lock(S_LOCK_WAITS)

    cdef inline void _count(self, int which, uint64_t n) noexcept nogil:
        self.st[which] += n

    def stats(self):
        """The pump's counters since it was made (``STAT_NAMES``; times in ns)."""
        cdef uint64_t copy[S_COUNT]
        with nogil:
            self._enter()
            memcpy(copy, self.st, sizeof(copy))
            pthread_mutex_unlock(&self.mu)
        return {name: copy[i] for i, name in enumerate(STAT_NAMES)}

    # -- the loop (its own thread)

    def run(self):
        """The pump's loop, until ``stop``; called on a thread of its own."""
        self.running = True
        try:
            with nogil:
                self._loop()
        finally:
            self.running = False

    cdef void _unpark(self) noexcept nogil:
        """The pump's thread back to the data path now if parked (the lock held)."""
        cdef uint64_t one = 1
        self.left_ns = 0
        if self.parked:
            self.parked = False
            self.st[S_WAKES] += 1
            write(self.wake_fd, &one, 8)

    def stop(self):
        with nogil:
            self._enter()
            self.stopping = True
            _store_int(&self.dozing, 1)
            self._unpark()
            self._wake()
            pthread_cond_broadcast(&self.news)
            pthread_mutex_unlock(&self.mu)

    cdef int _turn(self) noexcept nogil:
        """One turn of the data path (the lock held): UCX progressed, each
        channel served, closed ones let go. ``TURN_WORK``: something moved or
        is in flight; ``TURN_NEWS``: a channel has news for its owner."""
        cdef int n = 0, got = 0
        cdef chan_t *ch
        cdef uint64_t t0 = _now_ns() if _tracing else 0
        while n < PROGRESS_BURST and ucp.ucp_worker_progress(self.worker):
            n += 1
        if n:
            got |= TURN_WORK
        if _tracing:
            _tr(T_PROGRESS, t0, _now_ns() - t0)
        ch = self.chans
        while ch != NULL:
            if self._service(ch):
                got |= TURN_WORK | TURN_FLIGHT
            if ch.notify:
                got |= TURN_NEWS
            ch = ch.next
        self._reap()
        self.flight = (got & TURN_FLIGHT) != 0
        if got & TURN_NEWS:
            _store_int(&self.newsflag, 1)
            if self.news_waiters:
                pthread_cond_signal(&self.news)
        if _tracing:
            _tr(T_TURN, t0, (_now_ns() - t0) << 4 | <uint64_t>got)
        return got

    cdef void _loop(self) noexcept nogil:
        cdef uint64_t idle_since = 0, drained, t, let
        cdef bint sleep, turn, dozed
        cdef int got, news = 0
        cdef int64_t ids[NEWS_MAX]
        cdef bint gone[NEWS_MAX]
        cdef pollfd fds[2]
        fds[0].fd, fds[0].events = self.efd, POLLIN
        fds[1].fd, fds[1].events = self.wake_fd, POLLIN
        while True:
            let = self._let_in()
            self._lock(S_LOOP_LOCK_WAITS)
            self._counted_let_in(let)
            if self.stopping:
                _store_int(&self.dozing, 1)
                pthread_mutex_unlock(&self.mu)
                return
            self.napping = False
            if self.pollers or (self.left_ns and _now_ns() - self.left_ns < HANDOVER_NS):
                # A thread waits in poll(), or left it with news just now (a scheduler between two
                # ticks, back soon): it takes the news itself. This one stays parked, never calling
                # the owners, until that thread has been gone for HANDOVER_NS or left to sleep. While
                # it naps, sends and credits are posted by their callers and wake it only where they
                # leave a transfer in flight: a wake-up per message was a syscall, a thread switch and
                # a contended lock.
                self.parked = True
                turn = not self.pollers and (self.flight or _now_ns() - self.flight_ns < SPIN_NS)
                dozed = not turn and self._doze()
                if not turn and not dozed and self.pollers:
                    # A caller pushed as this thread went to doze, and a thread polls: that one
                    # takes it on its next turn. Looked at again, not turned here (see below).
                    pthread_mutex_unlock(&self.mu)
                    sched_yield()
                    continue
                if not dozed:
                    # A rendezvous takes steps on both sides (the peer's ready-to-receive, the
                    # copy's completion, its acknowledgement): left to the poller, each step
                    # waited while its scheduler ran codelets. Turned here; the news stays for it.
                    # It turns on for SPIN_NS after the last one: a stream's next message comes
                    # within it, and finds this thread awake to post it (``_taken_up``). Not while
                    # a thread polls: that one turns, and two turning threads took turns at the
                    # lock and at the driver's, which the scheduler's own calls then waited for.
                    _store_int(&self.dozing, 0)
                    self._turn()
                    if self.flight:
                        self.flight_ns = _now_ns()
                    self.st[S_TURNS_PARKED] += 1
                    pthread_mutex_unlock(&self.mu)
                    sched_yield()
                    continue
                self.napping = True
                pthread_mutex_unlock(&self.mu)
                poll(&fds[1], 1, 1)
                read(self.wake_fd, &drained, 8)
                idle_since = 0
                continue
            self.parked = False
            _store_int(&self.dozing, 0)
            got = self._turn()
            self.st[S_TURNS_THREAD] += 1
            sleep = False
            if got:
                idle_since = 0
            elif idle_since == 0:
                idle_since = _now_ns()
            elif _now_ns() - idle_since > SPIN_NS and ucp.ucp_worker_arm(self.worker) == UCS_OK and self._doze():
                sleep, self.sleeping = True, True
                self.st[S_SLEEPS] += 1
            news = self._gather(ids, gone) if got & TURN_NEWS and not self._leaves_news() else 0
            pthread_mutex_unlock(&self.mu)
            if news:
                t = _now_ns()
                with gil:
                    self._call_owners(news, ids, gone)
                if _tracing:
                    _tr(T_OWNERS, t, _now_ns() - t)
                self.st[S_NOTIFIES] += 1  # this thread's own counters: no lock for them
                self.st[S_NOTIFY_NS] += _now_ns() - t
                _forget_current()
            if sleep:
                poll(fds, 2, 100)
                read(self.wake_fd, &drained, 8)
                self._enter()
                self.sleeping = False
                pthread_mutex_unlock(&self.mu)
                idle_since = 0
            elif idle_since:
                sched_yield()

    def poll(self, double seconds):
        """Waits up to ``seconds`` for news of any channel, then calls the
        owners with news here; whether there was any. Where a channel
        receives, this thread drives the data path meanwhile (without the
        GIL; the pump's thread is parked): a scheduler waiting for messages
        so takes them itself, no thread woken and no GIL handed over per
        message. Where every channel transmits, the pump's thread drives it
        and this one waits for the news it leaves (``_await_news``)."""
        cdef uint64_t deadline, begun, let
        cdef int got = 0, news = 0
        cdef bint first = True, awaits = False
        cdef int64_t ids[NEWS_MAX]
        cdef bint gone[NEWS_MAX]
        cdef cdrv.CUcontext saved = NULL
        with nogil:
            if self.cuda:  # the turns make the channels' contexts current: this thread's is given back
                saved = _own_context()
            begun = _now_ns()
            if _tracing:
                _tr(T_POLL_START, begun, 0)
            deadline = begun + <uint64_t>(seconds * 1e9)
            # One hold of the lock per turn, the poller's arrival and departure and the news taken
            # in the first and last: each taking of it may wait for a turn of the pump's thread
            # (4 to 6 us a message on the H200's transmitting scheduler, with three per poll).
            while True:
                let = self._let_in()
                self._lock(S_LOCK_WAITS)
                self._counted_let_in(let)
                if first:
                    first = False
                    if self._transmits_only():
                        awaits = True
                        break
                    self.pollers += 1
                if self.worker != NULL and not self.stopping:
                    got = self._turn()
                    self.st[S_TURNS_POLL] += 1
                if got & TURN_NEWS or _now_ns() >= deadline:
                    break
                pthread_mutex_unlock(&self.mu)
                if not got:
                    sched_yield()  # few cores: the peer's threads may need this one
            if awaits:
                got = self._await_news(deadline)
            else:
                self.pollers -= 1
            self.st[S_POLLS] += 1
            self.st[S_POLL_NS] += _now_ns() - begun
            if _tracing:
                _tr(T_POLL_END, _now_ns(), got)
            if awaits:
                if got & TURN_NEWS:
                    self.st[S_POLL_NEWS] += 1
                    self.awaited_ns = _now_ns()  # its caller is back soon: the news stays for it meanwhile
                    news = self._gather(ids, gone)
                else:
                    self.awaited_ns = 0  # its caller goes to sleep on its condition: the owners are told at once
            elif got & TURN_NEWS:
                # Its caller runs what arrived and is likely back soon: the pump's thread stays
                # parked for HANDOVER_NS (``_loop``).
                self.st[S_POLL_NEWS] += 1
                self.left_ns = _now_ns()
                self._wake()  # napping with transfers in flight: it turns them while this one is away
                news = self._gather(ids, gone)
            elif self.pollers == 0:
                self._unpark()  # its caller goes to sleep: the pump's thread takes over now
            pthread_mutex_unlock(&self.mu)
            if self.cuda:
                _make_current(saved)
        self._call_owners(news, ids, gone)
        return bool(got & TURN_NEWS)

    cdef int _gather(self, int64_t *ids, bint *gone) noexcept nogil:
        """The channels with news, their marks cleared (the lock held): at most
        ``NEWS_MAX``, the rest at the next turn. In C: no Python allocation
        under the lock (a collection could run a Channel's __dealloc__, which
        takes it)."""
        cdef chan_t *ch = self.chans
        cdef int n = 0
        while ch != NULL and n < NEWS_MAX:
            if ch.notify:
                ch.notify = False
                ids[n], gone[n] = ch.id, ch.closed
                n += 1
            ch = ch.next
        _store_int(&self.newsflag, ch != NULL)  # channels past NEWS_MAX: their news is still there
        return n

    cdef bint _transmits_only(self) noexcept nogil:
        """Whether poll() waits for the pump's thread's news rather than
        turning (the lock held): that thread runs, and every channel
        transmits. A transmitting scheduler that turned the data path while
        it waited for credits ran UCX's rendezvous steps itself (H200, 16 MiB
        device messages at 4 in flight: 15 to 30 us turns, mostly in
        ``ucp_worker_progress``), and published only once it came back: the
        message a credit freed was not yet waiting for it at 33 to 45 % of
        the credits (bench/ucx_cycle.py). Waiting, it publishes ahead."""
        cdef chan_t *ch = self.chans
        if not self.running or self.stopping or self.worker == NULL or ch == NULL:
            return False
        while ch != NULL:
            if ch.receiving:
                return False
            ch = ch.next
        return True

    cdef int _await_news(self, uint64_t deadline) noexcept nogil:
        """Waits until a turn of the pump's thread finds news, or until
        ``deadline`` (the lock held on entry and return): it looks for them
        ``AWAIT_SPIN_NS`` without the lock, then sleeps on ``news``.
        ``TURN_NEWS`` if any."""
        cdef uint64_t t = _now_ns()
        cdef timespec until
        # Counted from the start: news found while it looks is left to it too, not told to the owners
        # by the pump's thread (this thread's poll would then wait out its time for news already told).
        self.news_waiters += 1
        if not _load_int(&self.newsflag):
            pthread_mutex_unlock(&self.mu)
            while not _load_int(&self.newsflag) and _now_ns() - t < AWAIT_SPIN_NS and _now_ns() < deadline:
                sched_yield()
            self._lock(S_LOCK_WAITS)
        while not self.newsflag and not self.stopping and self.running and _now_ns() < deadline:
            until.tv_sec, until.tv_nsec = <long>(deadline // 1000000000), <long>(deadline % 1000000000)
            pthread_cond_timedwait(&self.news, &self.mu, &until)
        self.news_waiters -= 1
        return TURN_NEWS if self.newsflag else 0

    cdef bint _leaves_news(self) noexcept nogil:
        """Whether the pump's thread leaves the news it found to a thread in
        poll() (the lock held): one waits for them, or one took news less
        than ``HANDOVER_NS`` ago and is back soon (not after a poll that
        ended without news: that scheduler sleeps on its condition).
        Calling the owners here would wait for the GIL, which that
        scheduler holds while it ticks, and no turn would run meanwhile."""
        return self.news_waiters > 0 or (self.awaited_ns != 0 and _now_ns() - self.awaited_ns < HANDOVER_NS)

    cdef void _call_owners(self, int n, int64_t *ids, bint *gone) noexcept:
        """Calls the owners of the channels ``_gather`` found (the GIL held, not the lock)."""
        cdef int k
        for k in range(n):
            i = ids[k]
            channel = self.channels.pop(i, None) if gone[k] else self.channels.get(i)
            if channel is None or gone[k]:
                continue  # a closed channel's owner has let it go
            try:
                (<Channel>channel).owner.pump_ready(channel)
            except BaseException:  # an owner's fault (it fails its link itself): said, never the pump's end
                import traceback
                traceback.print_exc()

    cdef void _serve_now(self, chan_t *ch) noexcept nogil:
        """A turn on ``ch`` on the calling thread (the lock held): what it was
        just given (a message, credits) is posted now, not when the pump's
        thread next wakes. That thread's CUDA context is left as it was."""
        cdef cdrv.CUcontext saved = NULL
        if self.worker == NULL or self.stopping or ch.closing:
            return
        if self.cuda:
            saved = _own_context()
        if self._service(ch):
            self.flight = True  # a napping pump's thread is woken for it (``_wake``)
        if self.cuda:
            _make_current(saved)

    cdef bint _service(self, chan_t *ch) noexcept nogil:
        """One turn on ``ch`` (the lock held); whether it has work in flight."""
        if ch.ctx != NULL:  # UCX reads and writes device memory, and the events are asked, in it
            _make_current(ch.ctx)
        if ch.closing:
            return self._close_step(ch)
        if ch.receiving:
            return self._service_rx(ch)
        return self._service_tx(ch)

    # -- transmitting

    cdef bint _service_tx(self, chan_t *ch) noexcept nogil:
        cdef out_t *o
        cdef ucs_status_t st = UCS_OK
        cdef int i
        cdef bint all_done
        self._drain(ch, True)
        self._credit_notes(ch)
        # Posts, in order, each once its ready event says the producer's work is done and, on a
        # gated channel, while credits last (or a forced message waits further on).
        while ch.out_next != NULL and ch.failure == UCS_OK:
            o = ch.out_next
            if ch.gated and o.spends and ch.wire <= 0 and ch.forced == 0:
                break
            if o.ready != NULL:
                if cdrv.cuEventQuery(o.ready) == cdrv.CUDA_ERROR_NOT_READY:
                    break
                o.ready = NULL
            self._post(ch, o)
            if o.spends:
                ch.wire -= 1
            if o.forced:
                ch.forced -= 1
            ch.out_next = o.next
        # Completions, in order.
        while ch.out_head != NULL and ch.out_head.posted:
            o = ch.out_head
            all_done = True
            st = UCS_OK
            for i in range(o.nreq):
                if not _done(&o.reqs[i], &st):
                    all_done = False
            _fail(ch, st, "a send")
            if not all_done:
                break
            ch.out_head = o.next
            if ch.out_head == NULL:
                ch.out_tail = NULL
            ch.sent += 1
            self.st[S_TX_SENT] += 1
            if _tracing:
                _tr(T_SENT, _now_ns(), o.t_posted)
            self.st[S_TX_DONE_NS] += _now_ns() - o.t_posted
            _free_out(o)
        return ch.out_head != NULL

    cdef void _credit_notes(self, chan_t *ch) noexcept nogil:
        """The credit notes that arrived, taken; a receive stands for the next."""
        cdef ucs_status_t st = UCS_OK
        cdef ucp_request_param_t param
        # Every receive posted here is a request to test, never a silent immediate completion (that
        # lost a credit note that had arrived before its receive was posted again).
        _host_param(&param, ucp.UCP_OP_ATTR_FLAG_NO_IMM_CMPL)
        if ch.credit_req == NULL and ch.failure == UCS_OK:
            ch.credit_req = _posted(ucp.ucp_tag_recv_nbx(self.worker, &ch.credit_buf, 8, _tag(ch, TAG_CREDIT),
                                                     <ucp_tag_t>-1, &param), &st)
            _fail(ch, st, "a credit's receive")
        while ch.credit_req != NULL and ucp.ucp_request_check_status(ch.credit_req) != UCS_INPROGRESS:
            st = UCS_OK
            _done(&ch.credit_req, &st)
            if st != UCS_OK:
                _fail(ch, st, "a credit's receive")
                break
            _add_u64(&ch.credits_in, ch.credit_buf)  # taken without the lock (``take_credits``)
            ch.wire += <int64_t>ch.credit_buf  # spent by the posts of this turn and the next
            self.st[S_CREDIT_NOTES_IN] += 1
            if _tracing:
                _tr(T_CREDIT_IN, _now_ns(), ch.credit_buf)
            ch.notify = True
            ch.credit_req = _posted(ucp.ucp_tag_recv_nbx(self.worker, &ch.credit_buf, 8, _tag(ch, TAG_CREDIT),
                                                     <ucp_tag_t>-1, &param), &st)
            _fail(ch, st, "a credit's receive")

    cdef void _post(self, chan_t *ch, out_t *o) noexcept nogil:
        cdef ucp_request_param_t param
        cdef ucs_status_t st = UCS_OK
        cdef int i
        _host_param(&param, 0)
        o.reqs[0] = _posted(ucp.ucp_tag_send_nbx(ch.ep, o.frame, o.frame_len, _tag(ch, TAG_HEADER), &param), &st)
        o.nreq = 1
        if o.rest_len:
            o.reqs[1] = _posted(ucp.ucp_tag_send_nbx(ch.ep, o.rest, o.rest_len, _tag(ch, TAG_REST), &param), &st)
            o.nreq = 2
        param.op_attr_mask = ucp.UCP_OP_ATTR_FIELD_MEMORY_TYPE
        for i in range(o.nbuf):
            param.memory_type = ucp.UCS_MEMORY_TYPE_CUDA if o.entries[i].device else ucp.UCS_MEMORY_TYPE_HOST
            o.reqs[o.nreq] = _posted(ucp.ucp_tag_send_nbx(ch.ep, <void *>o.ptrs[i], o.entries[i].nbytes,
                                                      _tag(ch, TAG_DATA), &param), &st)
            o.nreq += 1
        o.posted = 1
        o.t_posted = _now_ns()
        if _tracing:
            _tr(T_POSTED, o.t_posted, o.t_queued)
        self.st[S_TX_READY_NS] += o.t_posted - o.t_queued
        _fail(ch, st, "a send")

    # -- receiving

    cdef bint _service_rx(self, chan_t *ch) noexcept nogil:
        cdef ucs_status_t st
        cdef ucp_tag_recv_info_t info
        cdef ucp_request_param_t param
        cdef in_t *m
        cdef int i, k
        cdef bint pending = False
        _host_param(&param, ucp.UCP_OP_ATTR_FLAG_NO_IMM_CMPL)  # a request to test (its length), never a silent completion
        # Headers: each one's buffers are posted before the next header is looked at (tags match in post order).
        while ch.failure == UCS_OK:
            st = UCS_OK
            if ch.held:
                if ch.ctx == NULL:
                    break
                self._arrived(ch, ch.held)
                ch.held = 0
            if ch.hdr_req == NULL:
                ch.hdr_req = _posted(ucp.ucp_tag_recv_nbx(self.worker, ch.hdr_buf, FRAME, _tag(ch, TAG_HEADER),
                                                      <ucp_tag_t>-1, &param), &st)
                _fail(ch, st, "a header's receive")
                if ch.hdr_req == NULL:
                    break
            st = ucp.ucp_tag_recv_request_test(ch.hdr_req, &info)
            if st == UCS_INPROGRESS:
                break
            ucp.ucp_request_free(ch.hdr_req)
            ch.hdr_req = NULL
            if st != UCS_OK:
                _fail(ch, st, "a header's receive")
                break
            if ch.ctx == NULL and _has_device(ch.hdr_buf, info.length):
                # Device buffers need a CUDA context: Python gives one (a host-only run never loads the driver).
                ch.held, ch.wants_cuda, ch.notify = info.length, True, True
                break
            self._arrived(ch, info.length)
        # Credits to send: one note for what is pending, in a free slot. After the goodbye none
        # is: the transmitter sends no more, and closes once it hears the end (on the connection).
        ch.credit_pending += _take_u64(&ch.credit_inbox)
        if ch.bye_in:
            ch.credit_pending = 0
        if ch.credit_pending and ch.failure == UCS_OK:
            for i in range(CREDIT_SLOTS):
                st = UCS_OK
                _done(&ch.credit_send_req[i], &st)
                _fail(ch, st, "a credit's send")
                if ch.credit_send_req[i] == NULL and ch.credit_pending:
                    ch.credit_send_buf[i] = ch.credit_pending
                    ch.credit_pending = 0
                    _host_param(&param, 0)
                    ch.credit_send_req[i] = _posted(ucp.ucp_tag_send_nbx(ch.ep, &ch.credit_send_buf[i], 8,
                                                                     _tag(ch, TAG_CREDIT), &param), &st)
                    self.st[S_CREDIT_NOTES_SENT] += 1
                    if _tracing:
                        _tr(T_CREDIT_OUT, _now_ns(), ch.credit_send_buf[i])
                    _fail(ch, st, "a credit's send")
        for i in range(CREDIT_SLOTS):
            if ch.credit_send_req[i] != NULL:
                st = UCS_OK
                _done(&ch.credit_send_req[i], &st)
                _fail(ch, st, "a credit's send")
                pending |= ch.credit_send_req[i] != NULL
        # Messages whose parts have all arrived, in order, handed to ``take``.
        while ch.in_head != NULL:
            m = ch.in_head
            st = UCS_OK
            k = 1
            for i in range(m.nreq):
                if not _done(&m.reqs[i], &st):
                    k = 0
            _fail(ch, st, "a buffer's receive")
            if not k:
                return True
            m.t_complete = _now_ns()
            if _tracing:
                _tr(T_ARRIVED, m.t_complete, m.t_header)
            self.st[S_RX_PARTS_NS] += m.t_complete - m.t_header
            ch.in_head = m.next
            if ch.in_head == NULL:
                ch.in_tail = NULL
            _push(&ch.done, <void **>&m.next, m)
            ch.notify = True
        return pending

    cdef void _arrived(self, chan_t *ch, size_t length) noexcept nogil:
        """A header frame of ``length`` bytes in ``ch.hdr_buf``: its message, its receives posted."""
        cdef prefix_t *p = <prefix_t *>ch.hdr_buf
        cdef entry_t *e
        cdef size_t fixed, inframe
        cdef in_t *m
        cdef ucp_request_param_t param
        cdef ucs_status_t st = UCS_OK
        cdef int i
        cdef block_t *b
        if length < sizeof(prefix_t) or p.kind not in (KIND_MESSAGE, KIND_BYE) or p.nbuf > 4096:
            _fail(ch, UCS_ERR_INVALID_PARAM, "a header that is not cubind.graph's")
            return
        fixed = sizeof(prefix_t) + p.nbuf * sizeof(entry_t)
        if length < fixed:
            _fail(ch, UCS_ERR_INVALID_PARAM, "a header that is not cubind.graph's")
            return
        inframe = length - fixed
        if p.kind == KIND_MESSAGE and (p.value < inframe or (p.value > inframe and length != FRAME)):
            _fail(ch, UCS_ERR_INVALID_PARAM, "a header that is not cubind.graph's")
            return
        m = <in_t *>calloc(1, sizeof(in_t))
        m.kind, m.value, m.nbuf = p.kind, p.value, p.nbuf
        if p.kind == KIND_BYE:
            ch.bye_in = True
        m.t_header = _now_ns()
        self.st[S_HEADERS] += 1
        m.frame = <char *>malloc(length)
        memcpy(m.frame, ch.hdr_buf, length)
        m.frame_len = length
        m.blocks = <block_t **>calloc(p.nbuf + 1, sizeof(block_t *))
        m.reqs = <void **>calloc(p.nbuf + 2, sizeof(void *))
        _host_param(&param, 0)
        if p.kind == KIND_MESSAGE and p.value > inframe:
            m.rest_len = p.value - inframe
            m.rest = <char *>malloc(m.rest_len)
            m.reqs[m.nreq] = _posted(ucp.ucp_tag_recv_nbx(self.worker, m.rest, m.rest_len, _tag(ch, TAG_REST),
                                                      <ucp_tag_t>-1, &param), &st)
            m.nreq += 1
        e = <entry_t *>(m.frame + sizeof(prefix_t))
        param.op_attr_mask = ucp.UCP_OP_ATTR_FIELD_MEMORY_TYPE
        for i in range(p.nbuf):
            b = self._take_block(ch, e[i].nbytes, e[i].device)
            if b == NULL:
                _fail(ch, UCS_ERR_NO_MEMORY, "cuMemAlloc or malloc of a received buffer")
                break
            m.blocks[i] = b
            param.memory_type = ucp.UCS_MEMORY_TYPE_CUDA if b.device else ucp.UCS_MEMORY_TYPE_HOST
            m.reqs[m.nreq] = _posted(ucp.ucp_tag_recv_nbx(self.worker, <void *>b.ptr, e[i].nbytes, _tag(ch, TAG_DATA),
                                                      <ucp_tag_t>-1, &param), &st)
            m.nreq += 1
        _fail(ch, st, "a buffer's receive")
        if ch.in_tail == NULL:
            ch.in_head = m
        else:
            ch.in_tail.next = m
        ch.in_tail = m

    # -- blocks

    cdef block_t *_take_block(self, chan_t *ch, size_t nbytes, bint device) noexcept nogil:
        cdef block_t *b
        cdef cdrv.CUdeviceptr d
        self._collect_back()
        b = self._reuse(nbytes, device, ch.ctx)
        if b == NULL and device and self.nreturned >= SETTLE:
            self._settle()
            b = self._reuse(nbytes, device, ch.ctx)
        if b != NULL:
            return b
        b = <block_t *>calloc(1, sizeof(block_t))
        b.nbytes, b.device, b.ctx = nbytes, device, ch.ctx
        self.st[S_BLOCKS_MADE] += 1
        if device:
            if _make_current(ch.ctx) != cdrv.CUDA_SUCCESS or \
                    cdrv.cuMemAlloc(&d, nbytes if nbytes else 1) != cdrv.CUDA_SUCCESS:
                free(b)
                return NULL
            b.ptr = <uintptr_t>d
        else:
            b.ptr = <uintptr_t>malloc(nbytes if nbytes else 1)
            if b.ptr == 0:
                free(b)
                return NULL
        return b

    cdef block_t *_reuse(self, size_t nbytes, bint device, cdrv.CUcontext ctx) noexcept nogil:
        cdef block_t **at = &self.free_blocks
        cdef block_t *b
        while at[0] != NULL:
            b = at[0]
            if b.nbytes == nbytes and b.device == device and (not device or b.ctx == ctx):
                at[0] = b.next
                b.next = NULL
                return b
            at = &b.next
        return NULL

    cdef void _settle(self) noexcept nogil:
        """The returned device blocks become free once the device is done
        with what their last users queued (one synchronisation per context)."""
        cdef block_t *b = self.returned
        cdef block_t *nxt
        cdef cdrv.CUcontext last = NULL
        cdef uint64_t t = _now_ns()
        while b != NULL:
            if b.ctx != last:
                last = b.ctx
                _make_current(last)
                cdrv.cuCtxSynchronize()
            b = b.next
        b, self.returned, self.nreturned = self.returned, NULL, 0
        self.st[S_SETTLES] += 1
        self.st[S_SETTLE_NS] += _now_ns() - t
        while b != NULL:
            nxt = b.next
            self._keep(b)
            b = nxt

    cdef void _keep(self, block_t *b) noexcept nogil:
        """``b`` on the free list, unless ``KEEP`` of its size are there already."""
        cdef block_t *f = self.free_blocks
        cdef int same = 0
        while f != NULL:
            same += f.nbytes == b.nbytes and f.device == b.device and f.ctx == b.ctx
            f = f.next
        if same >= KEEP:
            _release(b)
            return
        b.next, self.free_blocks = self.free_blocks, b

    cdef void _give_back(self, block_t *b) noexcept nogil:
        """On the thread that dropped the block's last array (the receiving
        scheduler's, holding the GIL): pushed without the lock, which a
        turning thread holds (a wait for it was one of three a message on
        the H200's receiving scheduler, with the GIL held)."""
        _push(&self.back, <void **>&b.next, <void *>b)

    cdef void _collect_back(self) noexcept nogil:
        """The blocks given back since the last call (the lock held): a device
        one waits to be settled, a host one is free."""
        cdef block_t *b = <block_t *>_take_all(&self.back)
        cdef block_t *nxt
        while b != NULL:
            nxt = b.next
            self._hold_back(b)
            b = nxt

    # -- closing

    cdef bint _close_step(self, chan_t *ch) noexcept nogil:
        """Cancels what ``ch`` still waits for, closes its endpoint and, once
        every request has ended, marks it closed; whether it is still busy."""
        cdef ucp_request_param_t param
        cdef ucs_status_t st = UCS_OK
        cdef bint busy = False
        cdef out_t *o
        cdef in_t *m
        cdef int i
        self._drain(ch, False)  # dropped: closing
        if ch.closed:
            return False
        if not ch.receiving and not ch.force and ch.ep != NULL:
            self._credit_notes(ch)  # those already here are taken, not left unmatched in the worker
        if ch.hdr_req != NULL:
            ucp.ucp_request_cancel(self.worker, ch.hdr_req)
            busy |= not _done(&ch.hdr_req, &st)
        if ch.credit_req != NULL:
            ucp.ucp_request_cancel(self.worker, ch.credit_req)
            busy |= not _done(&ch.credit_req, &st)
        for i in range(CREDIT_SLOTS):
            busy |= not _done(&ch.credit_send_req[i], &st)
        m = ch.in_head
        while m != NULL:
            for i in range(m.nreq):
                if m.reqs[i] != NULL:
                    ucp.ucp_request_cancel(self.worker, m.reqs[i])
                    busy |= not _done(&m.reqs[i], &st)
            m = m.next
        if ch.ep != NULL:
            memset(&param, 0, sizeof(param))
            if ch.force:
                param.op_attr_mask = ucp.UCP_OP_ATTR_FIELD_FLAGS
                param.flags = ucp.UCP_EP_CLOSE_FLAG_FORCE
            ch.close_req = _posted(ucp.ucp_ep_close_nbx(ch.ep, &param), &st)
            ch.ep = NULL
        o = ch.out_head
        while o != NULL:
            if o.posted:
                for i in range(o.nreq):
                    busy |= not _done(&o.reqs[i], &st)
            o = o.next
        busy |= not _done(&ch.close_req, &st)
        if ch.close_ns == 0:
            ch.close_ns = _now_ns()
        elif busy and ch.force and _now_ns() - ch.close_ns > ABANDON_NS:
            self._abandon(ch)
            busy = False
        if not busy:
            ch.closed = True
            ch.notify = True
        return busy

    cdef void _abandon(self, chan_t *ch) noexcept nogil:
        """A forced close's requests that did not end, given up (UCX frees
        each when it ends, if ever). A receive matched to a rendezvous whose
        sender died cannot be cancelled, and with no peer-failure handling on
        the endpoint it never completes: the close waited for it forever (the
        run's end with it). Its blocks are left to UCX, never reused."""
        cdef out_t *o
        cdef in_t *m
        cdef int i
        cdef bint stuck
        _let_go(&ch.hdr_req)
        _let_go(&ch.credit_req)
        for i in range(CREDIT_SLOTS):
            _let_go(&ch.credit_send_req[i])
        m = ch.in_head
        while m != NULL:
            stuck = False
            for i in range(m.nreq):
                stuck |= m.reqs[i] != NULL
                _let_go(&m.reqs[i])
            if stuck:
                for i in range(m.nbuf):
                    m.blocks[i] = NULL  # UCX may still hold them
            m = m.next
        o = ch.out_head
        while o != NULL:
            if o.posted:
                for i in range(o.nreq):
                    _let_go(&o.reqs[i])
            o = o.next
        _let_go(&ch.close_req)

    cdef void _reap(self) noexcept nogil:
        """Drops the pump's hold on closed channels (freed once the Channel is gone too)."""
        cdef chan_t **at = &self.chans
        cdef chan_t *ch
        while at[0] != NULL:
            ch = at[0]
            if ch.closed and not ch.notify:
                at[0] = ch.next
                ch.next = NULL
                self._unref(ch)
            else:
                at = &ch.next

    cdef void _unref(self, chan_t *ch) noexcept nogil:
        """The lock held."""
        cdef out_t *o
        cdef out_t *onext
        ch.refs -= 1
        if ch.refs:
            return
        ch.closing = True
        self._drain(ch, False)  # what a caller pushed after the last turn: dropped
        o = ch.out_head
        while o != NULL:
            onext = o.next
            _free_out(o)
            o = onext
        self._drop_arrivals(ch.in_head)
        self._drop_arrivals(<in_t *>_take_all(&ch.done))  # arrived whole, never taken
        free(ch.hdr_buf)
        free(ch)

    cdef void _drop_arrivals(self, in_t *m) noexcept nogil:
        """A closed channel's messages from ``m`` on, freed, their blocks back (the lock held)."""
        cdef in_t *nxt
        cdef int i
        while m != NULL:
            nxt = m.next
            for i in range(m.nbuf):
                if m.blocks[i] != NULL:
                    self._hold_back(m.blocks[i])
            _free_in(m)
            m = nxt

    cdef void _hold_back(self, block_t *b) noexcept nogil:
        """A block back (the lock held): a device one may still be read by the
        device, settled before reuse; a host one is free."""
        if b.device:
            b.next, self.returned = self.returned, b
            self.nreturned += 1
        else:
            self._keep(b)

    cdef void _teardown(self) noexcept nogil:
        """The worker (its endpoints and requests with it), the context and
        the wake-up descriptor, where made."""
        if self.worker != NULL:
            ucp.ucp_worker_destroy(self.worker)
            self.worker = NULL
        if self.context != NULL:
            ucp.ucp_cleanup(self.context)
            self.context = NULL
        if self.wake_fd >= 0:
            close(self.wake_fd)
            self.wake_fd = -1

    def close(self):
        """Stops using UCX (the loop stopped): every channel's endpoint is
        dropped and the worker and context destroyed; free blocks are freed."""
        cdef block_t *b
        if self.running:
            raise PumpError("close: the pump's loop still runs; stop it and join its thread first")
        with nogil:
            self._enter()
            self._teardown()
            self._collect_back()
            while self.free_blocks != NULL:
                b = self.free_blocks
                self.free_blocks = b.next
                _release(b)
            pthread_mutex_unlock(&self.mu)


cdef void _release(block_t *b) noexcept nogil:
    if b.device:
        if _make_current(b.ctx) == cdrv.CUDA_SUCCESS:
            cdrv.cuMemFree(<cdrv.CUdeviceptr>b.ptr)
    else:
        free(<void *>b.ptr)
    free(b)


cdef void _free_in(in_t *m) noexcept nogil:
    free(m.frame)
    free(m.rest)
    free(m.blocks)
    free(m.reqs)
    free(m)


def _status(int st):
    return ucp.ucs_status_string(<ucs_status_t>st).decode()


cdef object _Array = None  # cubind.Array, imported at the first send (a host-only part never loads cubind's arrays)
cdef object _asarray = None


cdef int _address(object data, uintptr_t *ptr, entry_t *entry) except -1:
    """A buffer's address, size and memory, read in C: ``(pointer, nbytes,
    device)`` built in Python per buffer cost a device message 0.5 us here
    (``__array_interface__`` makes a dict on every read)."""
    global _Array, _asarray
    cdef Py_buffer view
    if type(data) is tuple:
        pointer, nbytes, device = data
        ptr[0], entry.nbytes, entry.device = pointer, nbytes, 1 if device else 0
        return 0
    if _Array is None:
        from cubind import Array, asarray
        _Array, _asarray = Array, asarray
    if not isinstance(data, _Array) and hasattr(data, "__cuda_array_interface__"):  # CuPy's, PyTorch's, ...
        data = _asarray(data)  # a view: its shape, strides and size as cubind reads them
    if isinstance(data, _Array):
        if not data.c_contiguous:  # UCX sends nbytes from the pointer on
            raise ValueError("a strided device array")
        ptr[0], entry.nbytes, entry.device = data.ptr, data.nbytes, 1
        return 0
    PyObject_GetBuffer(data, &view, PyBUF_ANY_CONTIGUOUS)  # refuses a strided one
    ptr[0], entry.nbytes, entry.device = <uintptr_t>view.buf, view.len, 0
    PyBuffer_Release(&view)
    return 0


@cython.no_gc_clear  # its __dealloc__ gives the block back through ``pump``: never cleared before
cdef class Block:
    """A received buffer handed out: ``ptr``/``nbytes``/``device``; a host
    block exports its bytes (buffer protocol, for numpy). When the last
    reference goes, the block goes back to the pump for the next message."""

    cdef Pump pump
    cdef block_t *b

    @property
    def ptr(self):
        return self.b.ptr

    @property
    def nbytes(self):
        return self.b.nbytes

    @property
    def device(self):
        return bool(self.b.device)

    def __getbuffer__(self, Py_buffer *view, int flags):
        if self.b.device:
            raise BufferError("a device block has no host bytes")
        PyBuffer_FillInfo(view, self, <void *>self.b.ptr, self.b.nbytes, 0, flags)

    def __dealloc__(self):
        if self.b != NULL:
            self.pump._give_back(self.b)
            self.b = NULL


@cython.no_gc_clear  # in a cycle with its owner (a link); its __dealloc__ needs ``pump``
cdef class Channel:
    """One connection's data path (``Pump.open``); its methods may be
    called from any thread."""

    cdef Pump pump
    cdef chan_t *ch
    cdef readonly object owner

    def send(self, bytes header, list buffers, uintptr_t ready=0, bint forced=False):
        """Queues a message: its JSON ``header`` and ``buffers``, each a
        contiguous array (a ``cubind.Array``, an object with
        ``__cuda_array_interface__``, or host memory exporting its buffer:
        numpy's) or a ``(pointer, nbytes, device)`` tuple, sent once the
        CUDA event ``ready`` (a handle, 0 for none) is complete and, on a
        gated channel (``gate``), a credit is left; ``forced``: sent without
        one, and the messages queued before it too. The buffers must stay
        alive and unchanged until ``sent`` counts the message."""
        cdef size_t nbuf = len(buffers), i
        cdef out_t *o
        cdef prefix_t *p
        cdef size_t fixed = sizeof(prefix_t) + nbuf * sizeof(entry_t), room, inframe
        cdef const char *json = header
        cdef size_t json_len = len(header)
        if fixed >= FRAME:
            raise ValueError(f"buffers: {nbuf} tensors in one message, more than a header frame holds")
        room = FRAME - fixed
        inframe = json_len if json_len <= room else room
        o = _new_out(nbuf, fixed + inframe)
        if o == NULL:
            raise MemoryError()
        try:
            for i in range(nbuf):
                _address(buffers[i], &o.ptrs[i], &o.entries[i])
        except (TypeError, ValueError, BufferError, OverflowError) as exc:  # OverflowError: a negative size
            _free_out(o)
            kind = TypeError if isinstance(exc, TypeError) else ValueError
            raise kind(f"buffers[{i}]: not a contiguous array or (pointer, nbytes, device) ({exc})") from None
        except BaseException:
            _free_out(o)
            raise
        p = <prefix_t *>o.frame
        p.kind, p.nbuf, p.value = KIND_MESSAGE, nbuf, json_len
        memcpy(o.frame + sizeof(prefix_t), o.entries, nbuf * sizeof(entry_t))
        memcpy(o.frame + fixed, json, inframe)
        if json_len > inframe:
            o.rest_len = json_len - inframe
            o.rest = <char *>malloc(o.rest_len)
            if o.rest == NULL:
                _free_out(o)
                raise MemoryError()
            memcpy(o.rest, json + inframe, o.rest_len)
        o.ready = <cdrv.CUevent>ready
        o.spends, o.forced = True, forced
        self._queue(o)

    def bye(self, uint64_t count):
        """Queues the goodbye: ``count`` messages were sent before it."""
        cdef out_t *o = _new_out(0, sizeof(prefix_t))
        cdef prefix_t *p
        if o == NULL:
            raise MemoryError()
        p = <prefix_t *>o.frame
        p.kind, p.nbuf, p.value = KIND_BYE, 0, count
        self._queue(o)

    cdef void _queue(self, out_t *o) noexcept:
        """``o`` into the channel's inbox, without the pump's lock: the
        transmitter's scheduler waited 3-4 us a message there on the H200,
        for the turning pump's thread. Where that thread dozes, the caller
        takes the lock and posts it itself. A closing channel drops it."""
        cdef chan_t *ch = self.ch
        cdef Pump pump = self.pump
        o.t_queued = _now_ns()
        if ch.closing:  # set once, under the lock; one pushed as it is set is dropped by the close
            _free_out(o)
            return
        _push(&ch.inbox, <void **>&o.next, o)
        if _load_int(&pump.dozing):
            pump._lock_keeping_gil()
            pump._drain(ch, False)
            if not pump._taken_up():
                pump._serve_now(ch)  # posted here where its ready event allows
                pump._wake()
            pthread_mutex_unlock(&pump.mu)

    @property
    def wants_cuda(self):
        """A device buffer arrived, and the channel has no CUDA context to receive it in: ``use_cuda``."""
        return bool(self.ch.wants_cuda)

    def use_cuda(self, uintptr_t context):
        """The CUDA context (a ``CUcontext`` as an int, the device's primary
        one) in which device buffers are received and sent and ready events
        asked; once, before the first device buffer."""
        with nogil:
            self.pump._lock(S_LOCK_WAITS)
            self.ch.ctx = <cdrv.CUcontext>context
            self.ch.wants_cuda = False
            self.pump.cuda = True
            self.pump._wake()
            pthread_mutex_unlock(&self.pump.mu)

    def credit(self, uint64_t count):
        """Gives ``count`` credits back to the transmitter (sent in one note
        with those pending): without the pump's lock where its thread turns,
        as ``_queue`` does a message (the receiving scheduler waited 6-13 us
        a message for that lock on the H200)."""
        cdef Pump pump = self.pump
        if _tracing:
            _tr(T_CREDITED, _now_ns(), count)
        _add_u64(&self.ch.credit_inbox, count)
        if _load_int(&pump.dozing):
            pump._lock_keeping_gil()
            if not pump._taken_up():
                pump._serve_now(self.ch)  # the note posted here
                pump._wake()
            pthread_mutex_unlock(&pump.mu)

    def gate(self, int64_t credits):
        """From now on messages are posted only while the receiver's credits
        last: ``credits`` (its grant on connecting), then one per credit its
        notes give back. The rest wait in order and are posted by the turn
        that takes the note, so that a transmitter may publish ahead of the
        credits and its next message leaves as soon as one arrives. Before
        the first ``send``. Added to what notes gave before it: the receiver
        may credit a read before this side has its answer (set, the grant
        overwrote that credit, and the connection had one less for good)."""
        with nogil:
            self.pump._lock(S_LOCK_WAITS)
            self.ch.gated = True
            self.ch.wire += credits
            pthread_mutex_unlock(&self.pump.mu)

    def discard(self):
        """The messages queued and not posted (waiting for credits) dropped,
        a goodbye queued after them kept, its count less them: how many. For
        a receiver that ended, which gives no credit again."""
        cdef chan_t *ch = self.ch
        cdef out_t *o
        cdef out_t *prev = NULL
        cdef out_t *nxt
        cdef out_t *first = NULL
        cdef uint64_t n = 0
        with nogil:
            self.pump._lock(S_LOCK_WAITS)
            self.pump._drain(ch, False)
            o = ch.out_head
            while o != NULL and o != ch.out_next:  # the posted ones stay until complete
                prev, o = o, o.next
            while o != NULL:
                nxt = o.next
                if o.spends:
                    if prev == NULL:
                        ch.out_head = nxt
                    else:
                        prev.next = nxt
                    if o.forced:
                        ch.forced -= 1
                    _free_out(o)
                    n += 1
                else:  # a goodbye: it counts the messages queued before it
                    (<prefix_t *>o.frame).value -= n
                    if first == NULL:
                        first = o
                    prev = o
                o = nxt
            ch.out_tail = prev
            ch.out_next = first
            if ch.out_head == NULL:
                ch.out_tail = NULL
            pthread_mutex_unlock(&self.pump.mu)
        return n

    def take_credits(self):
        """The credits that arrived since the last call: taken without the
        pump's lock, which a turning thread holds (the transmitting scheduler
        takes them once per poll with news)."""
        return _take_u64(&self.ch.credits_in)

    def take(self):
        """The messages that arrived whole, in order: ``(header JSON bytes,
        [Block, ...])`` each, or an int for the goodbye (the count the
        transmitter sent)."""
        cdef in_t *got = NULL
        cdef in_t *m = <in_t *>_take_all(&self.ch.done)  # without the lock: newest first
        cdef in_t *nxt
        cdef size_t fixed
        cdef int i
        cdef Block block
        cdef uint64_t now = _now_ns(), n = 0, waited = 0
        while m != NULL:  # reversed: in order
            nxt = m.next
            m.next, got = got, m
            n += 1
            waited += now - m.t_complete
            m = nxt
        if n:  # the counters other threads add to under the lock: atomically here
            _add_u64(&self.pump.st[S_RX_TAKEN], n)
            if _tracing:
                _tr(T_TAKEN, now, n)
            _add_u64(&self.pump.st[S_RX_TAKE_NS], waited)
        items = []
        while got != NULL:
            m = got
            got = m.next
            if m.kind == KIND_BYE:
                items.append(int(m.value))
            else:
                fixed = sizeof(prefix_t) + m.nbuf * sizeof(entry_t)
                header = m.frame[fixed:m.frame_len]
                if m.rest_len:
                    header += m.rest[:m.rest_len]
                blocks = []
                for i in range(m.nbuf):
                    block = Block.__new__(Block)
                    block.pump, block.b = self.pump, m.blocks[i]
                    m.blocks[i] = NULL
                    blocks.append(block)
                items.append((header, blocks))
            _free_in(m)
        return items

    @property
    def sent(self):
        """Messages (the goodbye included) whose sends have all completed."""
        return self.ch.sent

    @property
    def idle(self):
        """Whether nothing queued waits to be sent."""
        return self.ch.out_head == NULL and _load_ptr(&self.ch.inbox) == NULL

    @property
    def failure(self):
        """None, or what failed on this channel (its UCX status said)."""
        if self.ch.failure == UCS_OK:
            return None
        return f"{self.ch.failed.decode()} failed ({_status(self.ch.failure)})"

    @property
    def closed(self):
        return bool(self.ch.closed)

    def close(self, bint force=False):
        """Ends the channel: what it waits for is cancelled and its endpoint
        closed (``force``: without flushing, towards a peer that is gone).
        Messages not yet sent are dropped. A close may be forced later, when
        its flush does not end: what it still waits for is then given up
        (``ABANDON_NS`` after its first step)."""
        with nogil:
            self.pump._lock(S_LOCK_WAITS)
            if not self.ch.closing or (force and not self.ch.force):
                self.ch.closing = True
                self.ch.force = self.ch.force or force
                self.pump._wake()
            pthread_mutex_unlock(&self.pump.mu)

    def __dealloc__(self):
        if self.ch == NULL:
            return
        with nogil:
            self.pump._lock(S_LOCK_WAITS)
            if not self.ch.closing:
                self.ch.closing, self.ch.force = True, True
                self.pump._wake()
            self.pump._unref(self.ch)
            pthread_mutex_unlock(&self.pump.mu)
        self.ch = NULL
