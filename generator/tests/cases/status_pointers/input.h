/* Golden case "status_pointers": a result type holding either a status or a
 * request (UCX's ucs_status_ptr_t), named by the spec's
 * conventions.status_pointer.
 *
 * Expect:
 *   - caseSendNbx and caseRecvNbx bound (not skipped as a void* result): in
 *     Python they return (status, request): (CASE_OK, None) for NULL, the
 *     status and None for a value from CASE_ERR_LAST (-100) up as an address,
 *     (CASE_INPROGRESS, the request's address) otherwise
 *     (results/status_pointer); model.json's "status_pointer" gives the enum,
 *     first_error -100 and pending 1.
 *   - Their C layer's exception value is that first error as an address
 *     (`except? <caseStatusPtr>(-100)`), a value no call returns: a
 *     NULL result (done at once) never makes a caller without the GIL take
 *     it.
 *   - caseRequestCheck returns the status as usual, its exception value
 *     CASE_ERR_LAST (conventions.failure_members), not CASE_INPROGRESS, the
 *     largest member, which it returns while a request runs.
 *   - caseName returns bytes, a pointer result of another type.
 *   - caseRecvStream, with an [out] length: its (status, request) spread
 *     before the output, (status, request, length) (UCX's
 *     ucp_stream_recv_nbx), typed tuple[caseStatus, int | None, int].
 */
#ifndef CASE_STATUS_POINTERS_H
#define CASE_STATUS_POINTERS_H

#include <stddef.h>

typedef enum {
    CASE_OK = 0,
    CASE_INPROGRESS = 1,
    CASE_ERR_NO_MEMORY = -4,
    CASE_ERR_LAST = -100
} caseStatus;

typedef void *caseStatusPtr;
typedef struct caseWorker_st *caseWorker;

/** Sends `count` bytes of `buffer`. */
caseStatusPtr caseSendNbx(caseWorker worker, const void *buffer, size_t count);
/** Receives up to `count` bytes into `buffer`. */
caseStatusPtr caseRecvNbx(caseWorker worker, void *buffer, size_t count);
/**
 * Receives stream data into `buffer`.
 * @param [out] length  Filled with the bytes received where done at once.
 */
caseStatusPtr caseRecvStream(caseWorker worker, void *buffer, size_t count, size_t *length);
/** A request's status. */
caseStatus caseRequestCheck(void *request);
/** The worker's name. */
const char *caseName(caseWorker worker);

#endif
