/* Golden case "foreign_library_types": types of a header this one includes
 * but the spec does not bind (other.h, as cufile.h names cuda.h's CUstream
 * and CUresult, <time.h>'s struct timespec and <sys/socket.h>'s sockaddr).
 *
 * Expect in model.json:
 *   handles     caseStream (spec foreign_handles) at order -1, record_tag
 *               caseStream_st: the tag other.h's own module gives its
 *               class, so that its objects are taken (handle.pyx's
 *               _c_struct)
 *   typedefs    caseDrvResult (spec foreign_typedefs, an enum there): its
 *               integer type, and caseError_t's drv field an integer
 *   records     caseTimespec (`struct caseTimespec`: a tag) and
 *               caseSockaddr_t (input.h's typedef of other.h's struct: no
 *               tag, its typedef's name) from spec foreign_records, at
 *               order -1 without fields; caseUnusedRecord, named in the
 *               spec but used nowhere, not declared
 * and in fragments/c_handle.pxd.txt `cdef struct _caseStream_struct
 * "caseStream_st"`, in fragments/c_record.pxd.txt `cdef struct
 * caseTimespec: pass` and `ctypedef struct caseSockaddr_t: pass`, in
 * fragments/c_typedef.pxd.txt `ctypedef unsigned int caseDrvResult`.
 */
#ifndef CASE_FOREIGN_LIBRARY_TYPES_H
#define CASE_FOREIGN_LIBRARY_TYPES_H

#include "other.h"

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseSockaddr caseSockaddr_t;

/** A status with the other library's. */
typedef struct caseError {
  caseResult err;     /**< this library's */
  caseDrvResult drv;  /**< the other library's */
} caseError_t;

/** Operations a caller provides. */
typedef struct caseOps {
  int (*peer)(void *handle, caseSockaddr_t *addr);  /**< the peer's address */
} caseOps_t;

caseResult caseStreamRegister(caseStream stream, unsigned flags);
caseResult caseWait(const struct caseTimespec *timeout);
caseResult caseLastError(caseError_t *error);
caseResult caseSetOps(const caseOps_t *ops);

#endif
