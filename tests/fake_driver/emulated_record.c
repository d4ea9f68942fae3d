/* The emulated GPU's record and the tests' switches, read and set through
 * ctypes (tests/fake_driver/controls.py):
 *   - with emu_record_calls set, each call of the functions cubind's memory,
 *     arrays, streams and events use (the emu_call sites) is kept with its
 *     arguments, in order (emu_call_count, emu_call_name, emu_call_args);
 *   - each launch of an array kernel: its name and stream (emu_launch_*);
 *   - each violation, with its reason (emu_violation_*);
 *   - emu_inject(name, status) makes every later call of ``name`` answer
 *     ``status`` (0 stops it);
 *   - emu_latency_us: before each use or destruction of an event, -1 (the
 *     default) goes on at once, 0 yields the thread, more sleeps that long,
 *     which widens the window where another thread's destroy slips in.
 * emu_clear forgets the record and the injected failures. */
#include "emulated.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t emu_mutex = PTHREAD_MUTEX_INITIALIZER;
void emu_lock(void) { pthread_mutex_lock(&emu_mutex); }
void emu_unlock(void) { pthread_mutex_unlock(&emu_mutex); }

#define EMU_CALL_ARGS 6
struct emu_call_entry {
    const char *name;
    int n;
    emu_u64 args[EMU_CALL_ARGS];
};

int emu_record_calls = 0;
int emu_latency_us = -1;
static struct emu_call_entry *emu_calls;
static int emu_calls_used, emu_calls_size;

#define EMU_TEXT 200
#define EMU_MAX_VIOLATIONS 256
static char emu_violations[EMU_MAX_VIOLATIONS][EMU_TEXT];
static int emu_violations_used;

#define EMU_MAX_LAUNCHES 4096
static struct { char name[64]; emu_u64 stream; } emu_launches[EMU_MAX_LAUNCHES];
static int emu_launches_used;

static char emu_injected_name[64];
static int emu_injected_status;

int emu_call(const char *name, int n, ...) {
    int status = 0;
    va_list ap;
    emu_lock();
    if (emu_record_calls) {
        if (emu_calls_used == emu_calls_size) {
            int size = emu_calls_size ? 2 * emu_calls_size : 1024;
            struct emu_call_entry *grown = realloc(emu_calls, (size_t)size * sizeof *grown);
            if (grown) emu_calls = grown, emu_calls_size = size;
        }
        if (emu_calls_used < emu_calls_size) {
            struct emu_call_entry *e = &emu_calls[emu_calls_used++];
            e->name = name;
            e->n = n < EMU_CALL_ARGS ? n : EMU_CALL_ARGS;
            va_start(ap, n);
            for (int i = 0; i < e->n; i++) e->args[i] = va_arg(ap, emu_u64);
            va_end(ap);
        }
    }
    if (emu_injected_status && strcmp(name, emu_injected_name) == 0) status = emu_injected_status;
    emu_unlock();
    return status;
}

int emu_violation(const char *func, int rc, const char *fmt, ...) {
    va_list ap;
    emu_lock();
    if (emu_violations_used < EMU_MAX_VIOLATIONS) {
        char *text = emu_violations[emu_violations_used++];
        va_start(ap, fmt);
        vsnprintf(text, EMU_TEXT, fmt, ap);
        va_end(ap);
    }
    emu_unlock();
    return fake_fail(func, rc);
}

void emu_record_launch(const char *name, emu_u64 stream) {
    emu_lock();
    if (emu_launches_used < EMU_MAX_LAUNCHES) {
        snprintf(emu_launches[emu_launches_used].name, sizeof emu_launches[0].name, "%s", name);
        emu_launches[emu_launches_used++].stream = stream;
    }
    emu_unlock();
}

void emu_pause(void) {
    if (emu_latency_us == 0) sched_yield();
    else if (emu_latency_us > 0) usleep((useconds_t)emu_latency_us);
}

/* -- what the tests read and set (ctypes) -- */

int emu_call_count(void) { return emu_calls_used; }
const char *emu_call_name(int i) { return i >= 0 && i < emu_calls_used ? emu_calls[i].name : NULL; }
int emu_call_args(int i, emu_u64 *out) {
    if (i < 0 || i >= emu_calls_used) return -1;
    memcpy(out, emu_calls[i].args, (size_t)emu_calls[i].n * sizeof *out);
    return emu_calls[i].n;
}
int emu_violation_count(void) { return emu_violations_used; }
const char *emu_violation_text(int i) { return i >= 0 && i < emu_violations_used ? emu_violations[i] : NULL; }
int emu_launch_count(void) { return emu_launches_used; }
const char *emu_launch_name(int i) { return i >= 0 && i < emu_launches_used ? emu_launches[i].name : NULL; }
emu_u64 emu_launch_stream(int i) { return i >= 0 && i < emu_launches_used ? emu_launches[i].stream : 0; }

void emu_inject(const char *name, int status) {
    emu_lock();
    snprintf(emu_injected_name, sizeof emu_injected_name, "%s", name ? name : "");
    emu_injected_status = name ? status : 0;
    emu_unlock();
}

void emu_clear_calls(void) {
    emu_lock();
    emu_calls_used = 0;
    emu_unlock();
}

void emu_clear(void) {
    emu_lock();
    emu_calls_used = emu_violations_used = emu_launches_used = 0;
    emu_injected_status = 0;
    emu_unlock();
}

void *emu_memory_lookup(const char *symbol);
void *emu_events_lookup(const char *symbol);
void *emu_lookup(const char *symbol) {
    void *fn = emu_memory_lookup(symbol);
    return fn ? fn : emu_events_lookup(symbol);
}
