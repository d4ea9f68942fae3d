/* Golden case "internal_headers": a header the umbrella header includes with
 * a macro defined, and which warns when included without it (CUDA's
 * driver_functions.h through crt/host_defines.h).
 *
 *   spec: headers = ["input.h", "internal.h"], internal_headers = ["internal.h"],
 *         internal_macro = "CASE_INTERNAL_HEADERS"
 *
 * Expect in fragments/c_layer.pxd: input.h declared as usual; internal.h
 * included verbatim between a definition of CASE_INTERNAL_HEADERS (only when
 * not defined already) and its removal, not as `cdef extern from "internal.h"`.
 */
#ifndef CASE_INTERNAL_HEADERS_H
#define CASE_INTERNAL_HEADERS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
caseResult caseInit(unsigned int flags);

#endif
