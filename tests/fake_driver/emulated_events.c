/* The emulated GPU's events: a table of live events, each with the queries
 * left before it reports done, so that a test can keep work "queued":
 *   - emu_event_queries: how many times cuEventQuery answers
 *     CUDA_ERROR_NOT_READY for a new event, or -1 for a random 0 to 3 (each
 *     event its own), so that pending work piles up and many threads sweep it;
 *   - emu_events_done = 0: every event answers NOT_READY (its work still
 *     queued) until set back to 1; cuEventSynchronize finishes one.
 * An event used after its destruction, or destroyed twice, is a violation
 * (emulated.h) answered CUDA_ERROR_INVALID_HANDLE; before each use or
 * destruction the tests' latency applies (emulated_record.c). */
#include "emulated.h"

#include <stdlib.h>
#include <string.h>

struct emu_event {
    emu_u64 handle;
    int queries_left;
};
int emu_event_queries = 0;
int emu_events_done = 1;
static struct emu_event *emu_events;
static int emu_events_used, emu_events_size;
static unsigned emu_seed = 12345;

void emu_event_made(emu_u64 event) {
    int queries = emu_event_queries >= 0 ? emu_event_queries : (int)(rand_r(&emu_seed) % 4);
    emu_lock();
    if (emu_events_used == emu_events_size) {
        int size = emu_events_size ? 2 * emu_events_size : 256;
        struct emu_event *grown = realloc(emu_events, (size_t)size * sizeof *grown);
        if (grown) emu_events = grown, emu_events_size = size;
    }
    if (emu_events_used < emu_events_size) emu_events[emu_events_used++] = (struct emu_event){event, queries};
    emu_unlock();
}

/* The entry of a live event; call with the lock held. */
static struct emu_event *emu_find(emu_u64 event) {
    for (int i = 0; i < emu_events_used; i++)
        if (emu_events[i].handle == event) return &emu_events[i];
    return NULL;
}

int emu_event_use(const char *func, emu_u64 event) {
    int live;
    emu_pause();
    emu_lock();
    live = emu_find(event) != NULL;
    emu_unlock();
    if (!live) return emu_violation(func, 400, "%s on event %#llx after its destruction", func, event);
    return 0;
}

/* 0 done, 600 (NOT_READY) or a violation's status. */
int emu_event_query(emu_u64 event) {
    struct emu_event *e;
    int left;
    emu_pause();
    emu_lock();
    e = emu_find(event);
    left = e ? e->queries_left : 0;
    if (e && left) e->queries_left--;
    emu_unlock();
    if (!e) return emu_violation("cuEventQuery", 400, "cuEventQuery on event %#llx after its destruction", event);
    return left || !emu_events_done ? 600 : 0;
}

int emu_event_destroy(emu_u64 event) {
    struct emu_event *e;
    emu_pause();
    emu_lock();
    e = emu_find(event);
    if (e) *e = emu_events[--emu_events_used];
    emu_unlock();
    if (!e) return emu_violation("cuEventDestroy", 400, "cuEventDestroy of event %#llx, already destroyed", event);
    return 0;
}

static int f_cuEventSynchronize(void *event) {
    struct emu_event *e;
    int rc = emu_call("cuEventSynchronize", 1, (emu_u64)event);
    if (rc) return fake_fail(__func__, rc);
    if ((rc = emu_event_use("cuEventSynchronize", (emu_u64)event))) return rc;
    emu_lock();
    if ((e = emu_find((emu_u64)event))) e->queries_left = 0;
    emu_unlock();
    return 0;
}

void *emu_events_lookup(const char *symbol) {
    return strcmp(symbol, "cuEventSynchronize") == 0 ? (void *)f_cuEventSynchronize : NULL;
}

/* Marks a live event's work done (ctypes): 0, or -1 where there is none. */
int emu_event_finish(emu_u64 event) {
    struct emu_event *e;
    emu_lock();
    if ((e = emu_find(event))) e->queries_left = 0;
    emu_unlock();
    return e ? 0 : -1;
}

/* The live events' handles, up to ``max``; their count (ctypes). */
int emu_live_events(emu_u64 *handles, int max) {
    int n;
    emu_lock();
    n = emu_events_used;
    for (int i = 0; i < n && i < max; i++) handles[i] = emu_events[i].handle;
    emu_unlock();
    return n;
}
