/* Golden case "status_record": the status is a struct returned by value,
 * holding the status enum (cufile.h's CUfileError_t {CUfileOpError err;
 * CUresult cu_err;}), named by the spec's status_record and status_member.
 *
 * Expect in model.json: caseOpen, caseGetVersion and caseBufRegister with
 * returns_status and status_field "err"; each result_conversion
 * results/status of caseOpError (the member's enum), with no error value
 * (a struct: `except *` in c_layer.pxd). caseRead returns a count, not the
 * status: (CASE_OP_SUCCESS, value). In fragments/function.pyx the call
 * reads the member: `_err = c.caseOpen().err`, and returns
 * caseOpError, as a library whose calls return the enum itself does. The
 * struct is bound as a class too (record.pyx: err and cu_err), for the C
 * level's callers and for its fields' sake.
 *
 * The describer is static inline (cufileop_status_error): compiled in
 * from the header (header_only), the status's _describe_().
 */
#ifndef CASE_STATUS_RECORD_H
#define CASE_STATUS_RECORD_H

#include <stddef.h>

typedef enum caseOpError { CASE_OP_SUCCESS = 0, CASE_OP_INVALID = 5001, CASE_OP_DRIVER_ERROR = 5011 } caseOpError;
typedef enum caseDrvResult { CASE_DRV_SUCCESS = 0, CASE_DRV_ERROR = 1 } caseDrvResult;

/** The status every call returns. */
typedef struct caseError {
  caseOpError err;        /**< the library's status */
  caseDrvResult cu_err;   /**< the driver's, where err is CASE_OP_DRIVER_ERROR */
} caseError_t;

/** The status's text. */
static inline const char *caseOpErrorString(caseOpError status) {
  return status == CASE_OP_SUCCESS ? "success" : "error";
}

/** Opens the library. */
caseError_t caseOpen(void);

/**
 * Gets the version.
 * \param version - Returned version
 */
caseError_t caseGetVersion(int *version);

/**
 * Registers a buffer.
 * \param buf - the buffer
 * \param length - its size in bytes
 */
caseError_t caseBufRegister(const void *buf, size_t length);

/**
 * Reads; the byte count, or a negative error.
 * \param buf - where to read to
 * \param size - how many bytes
 */
long caseRead(void *buf, size_t size);

#endif
