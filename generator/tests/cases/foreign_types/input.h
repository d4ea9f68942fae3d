/* Golden case "foreign_types": integer types and a function type of a header
 * outside the spec's (platform.h), which this header names without including
 * it, as cudaVDPAU.h names VDPAU's.
 *
 * Expect in model.json:
 *   typedefs    caseGLuint (unsigned int), caseEGLint (int), caseVdpDevice
 *               (unsigned int): spec.toml's foreign_typedefs, declared by
 *               their integer type at order -1 with the header of their first
 *               use; caseVdpUnused, used nowhere, is not declared
 *   handles     the same three as integer handles (integer_handles names
 *               them); caseVdpGetProcAddress (function_handles) a handle
 *               with "function": true, record_tag its own name
 *   functions   caseRegisterBuffer's buffer a handle caseGLuint;
 *               caseVdpGetDevice's getProcAddress (`caseVdpGetProcAddress *`)
 *               a handle caseVdpGetProcAddress
 * and in fragments/c_layer.pxd.txt platform.h included before input.h
 * (prelude_headers), in fragments/c_handle.pxd.txt the function handle's
 * ctypedef naming its C pointer type ("caseVdpGetProcAddress *"), in
 * fragments/c_typedef.pxd.txt `ctypedef unsigned int caseGLuint`.
 */
#ifndef CASE_FOREIGN_TYPES_H
#define CASE_FOREIGN_TYPES_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

/** \brief A graphics resource. */
typedef struct caseResource_st *caseResource;

caseResult caseRegisterBuffer(caseResource *resource, caseGLuint buffer, caseEGLint width);
caseResult caseVdpGetDevice(int *device, caseVdpDevice vdpDevice, caseVdpGetProcAddress *getProcAddress);

#endif
