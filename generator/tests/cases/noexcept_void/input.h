/* Golden case "noexcept_void": the spec's conventions.noexcept_void (UCX's
 * ucp_request_free, called by a data path without the GIL).
 *
 * Expect:
 *   - caseRequestFree and caseWorkerDestroy (void) declared noexcept in the
 *     C layer; their wrappers return without calling where the symbol could
 *     not be resolved (the loader's error is then printed, not raised).
 *   - The C layer has load() (except -1): it opens the library and raises
 *     the loader's error; its .pxd declares it.
 *   - Their Python functions call c.load() before the call.
 *   - caseRequestTest (a status) as in every library: except? its failure
 *     member, no load().
 */
#ifndef CASE_NOEXCEPT_VOID_H
#define CASE_NOEXCEPT_VOID_H

typedef enum { CASE_OK = 0, CASE_INPROGRESS = 1, CASE_ERR_LAST = -100 } caseStatus;
typedef struct caseWorker_st *caseWorker;

/** Frees a request. */
void caseRequestFree(void *request);
/** Destroys a worker. */
void caseWorkerDestroy(caseWorker worker);
/** A request's status. */
caseStatus caseRequestTest(void *request);

#endif
