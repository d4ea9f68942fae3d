/* Golden case "kernel_params": a launch's void** of kernel arguments.
 *
 * spec.toml gives kernelParams and extra the role kernel_params (no rule can
 * tell a void** of arguments from others). Expect in fragments/:
 *   params/kernel_params  both parameters packed by kernel_params() into the
 *                         caller's KernelArgSpace, kept alive for the call
 *   params/in_handle      the function handle and stream
 *   params/in_integer     grid and block sizes (unsigned int range)
 * and in function.pyx's docstring, under each parameter's header text, the
 * Python forms its template's `forms` slot lists ("Takes None; an int address
 * of a void*[]; ... or (values, types): ..."), with no signature line (help()
 * shows the signature above the docstring).
 */
#ifndef CASE_KERNEL_PARAMS_H
#define CASE_KERNEL_PARAMS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseFunc_st *caseFunction;
typedef struct caseStream_st *caseStream;

caseResult caseLaunch(caseFunction f, unsigned int gridDimX, unsigned int blockDimX, unsigned int sharedMemBytes,
                      caseStream hStream, void **kernelParams, void **extra);

#endif
