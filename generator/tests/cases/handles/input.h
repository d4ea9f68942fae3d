/* Golden case "handles": opaque handles, typedefs of pointers to incomplete structs.
 *
 * Expect in model.json:
 *   handles     caseContext (record_tag caseContext_st) and caseStream (a
 *               CUstream_st-style tag), each with a \brief; caseEvent, whose
 *               comment has no \brief (doc body); caseModule, undocumented
 *   not handles casePlain (pointer to a complete struct: a typedef, not a
 *               handle; the struct is a record), caseVoidHandle (void*: a
 *               typedef)
 *   functions   handles by value (role handle), handle* out (out_scalar),
 *               handle* annotated [in] (inout_handle), a handle result.
 *   integer handles  spec.toml's integer_handles: caseDevice (a typedef of
 *               int through caseDevice_v1) and caseU64 become value classes
 *               (integer_handle.pyx: int(), __index__, equal to their int,
 *               printed in decimal); caseGetDevice returns one, caseSetValue
 *               takes one or an int; casePayload.words, a fixed array of
 *               caseU64, reads as a list of ints (fields/array).
 *   loader      spec.toml resolves through caseGetProcAddress
 *               (resolve_proc_address.pyx); status functions the loaded
 *               library lacks return CASE_ERROR (c_layer.pyx: missing_status),
 *               caseCtxGetCurrent (no status) raises FunctionNotFoundError.
 */
#ifndef CASE_HANDLES_H
#define CASE_HANDLES_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

/** \brief A context handle. */
typedef struct caseContext_st *caseContext;
/** \brief A stream handle. */
typedef struct CUstream_st *caseStream;
/** An event handle, documented without \brief. */
typedef struct caseEvent_st *caseEvent;
typedef struct caseModule_st *caseModule;

struct casePlain_st { int value; };
typedef struct casePlain_st *casePlain;
typedef void *caseVoidHandle;

/**
 * \brief Creates a context.
 * \param [out] ctx the new context
 * \param [in] flags creation flags
 */
caseResult caseCtxCreate(caseContext *ctx, unsigned int flags);
/**
 * \brief Destroys a context and clears the caller's handle.
 * \param [in] ctx the context
 */
caseResult caseCtxDestroy(caseContext *ctx);
caseResult caseStreamSynchronize(caseStream stream, caseEvent event);
caseResult caseModuleLoad(caseModule *module, caseContext ctx);
caseContext caseCtxGetCurrent(void);

typedef int caseDevice_v1;
typedef caseDevice_v1 caseDevice;
typedef unsigned long long caseU64;
typedef struct casePayload_st {
    caseU64 words[4];
    caseDevice device;
} casePayload;
caseResult caseGetDevice(caseDevice *device, int ordinal);
caseResult caseSetValue(caseDevice device, caseU64 value);

#endif
