/* Golden case "foreign_handles": handles the header spells in ways other
 * than its own handle typedef (the EGL interop headers do both).
 *
 * Expect in model.json:
 *   handles     caseResource (record_tag caseResource_st); caseImageKHR and
 *               caseSyncKHR, spec.toml's void_handles: void* typedefs of
 *               foreign.h (not one of the spec's headers), declared where
 *               they are used (record_tag their own name, header input.h,
 *               order -1); caseUnusedKHR, used nowhere, is no handle
 *   functions   caseRegisterImage: `struct caseResource_st **` is an output
 *               of caseResource (out_scalar), as caseMapResource's
 *               `caseResource *` is; image is a handle (role handle), not a
 *               buffer; caseCreateFromSync: sync a handle, width a plain
 *               int (caseInt is foreign too, but no handle)
 * and in fragments/c_handle.pxd.txt the two void handles declared as the
 * others are, in fragments/stub.pyi.txt `image: caseImageKHR | int | None`.
 */
#ifndef CASE_FOREIGN_HANDLES_H
#define CASE_FOREIGN_HANDLES_H

#include "foreign.h"

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

/** \brief A graphics resource. */
typedef struct caseResource_st *caseResource;

caseResult caseRegisterImage(struct caseResource_st **resource, caseImageKHR image, unsigned int flags);
caseResult caseMapResource(caseResource *resource, caseSyncKHR sync);
caseResult caseCreateFromSync(caseResource resource, caseSyncKHR sync, caseInt width);

#endif
