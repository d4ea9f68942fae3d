/* What fake_libcuda.c shares with the parts of the emulated GPU that live in
 * their own files: memory backed by host memory (emulated_memory.c), events
 * that finish after a number of queries (emulated_events.c), cubind.Array's
 * copy and fill kernels run by name (emulated_kernels.c), and the record of
 * calls, launches and violations the tests read through ctypes
 * (emulated_record.c; tests/fake_driver/controls.py is its Python side).
 *
 * A violation is what a real driver would crash on or refuse (a device
 * access outside every live allocation, memory freed twice, an event used
 * after its destruction): it is recorded with its reason and the call is
 * answered with an error, which tests/conftest.py's failed-call log reports. */
#ifndef CUBIND_FAKE_EMULATED_H
#define CUBIND_FAKE_EMULATED_H

#include <stddef.h>

typedef unsigned long long emu_u64;

/* fake_libcuda.c */
int fake_fail(const char *func, int rc);

/* emulated_record.c: one lock for every table of the emulated GPU (the
 * binding calls in from many threads at once, the GIL released). */
void emu_lock(void);
void emu_unlock(void);
/* Records ``name(args...)`` when recording is on; answers the status the
 * tests injected for ``name`` (0 when none). */
int emu_call(const char *name, int n, ...);
/* Records a violation of ``func`` (printf-style reason); returns fake_fail(func, rc). */
int emu_violation(const char *func, int rc, const char *fmt, ...);
void emu_record_launch(const char *name, emu_u64 stream);
void emu_pause(void); /* the tests' latency before each use of an event */

/* emulated_memory.c */
int emu_alloc(emu_u64 *ptr, size_t n, int host);
int emu_free(const char *func, emu_u64 ptr, int host);
int emu_pool_put(const char *func, emu_u64 ptr);
int emu_pool_take(emu_u64 *ptr, size_t n);
/* The host address of device bytes [addr, addr + n), or NULL when they are
 * outside every live allocation; call with the lock held. */
void *emu_device(emu_u64 addr, size_t n);
int emu_copy(const char *func, emu_u64 dst, int dst_device, emu_u64 src, int src_device, size_t n);
int emu_memset(const char *func, emu_u64 dst, unsigned value, size_t count, int width);

/* emulated_events.c */
void emu_event_made(emu_u64 event);
int emu_event_use(const char *func, emu_u64 event);
int emu_event_query(emu_u64 event);
int emu_event_destroy(emu_u64 event);

/* emulated_kernels.c */
emu_u64 emu_kernel_handle(const char *name);
/* 1 when ``f`` is one of the array's kernels (run, with its status in *rc), else 0. */
int emu_launch(emu_u64 f, void **params, emu_u64 stream, int *rc);

/* The functions the emulated GPU adds to fake_libcuda.c's table, by name (NULL when none). */
void *emu_lookup(const char *symbol);

#endif
