/* Golden case "callbacks": function-pointer typedefs and callback parameters.
 *
 * Expect in model.json:
 *   callbacks  caseHostFn (void (*)(void *userData)), caseStreamCallback
 *              (void (*)(int, unsigned long long, void *)), caseProgressFn
 *              (int (*)(const char *, float, void *)), caseDoneFn
 *              (void (*)(int)), with their docs; the
 *              type is a function_pointer whose inner[0] is the result.
 *              (Only builtin argument types: a typedef'd argument of a
 *              callback typedef loses its typedef: DISABLED_ test in unit/parse_test.cpp.)
 *   functions  caseLaunchHostFunc: named callback + the void* after it (roles
 *              callback and user_data, userdata_param userData);
 *              caseStreamAddCallback: the user data follows a flags argument;
 *              caseSetProgress: an unnamed function-pointer parameter type
 *              (int (*)(void *, void *)) + void* payload; spec.toml says it
 *              returns 1 to C when the Python callable raises
 *              (on_error_return; the trampoline's `return 1`), while
 *              caseSetProgressNamed's trampoline returns 0;
 *              caseOnDone: a callback without any void* (no user data: only a
 *              C function address is accepted);
 *              caseGetProc: a pointer to a function pointer, skipped with the
 *              reason in report.txt;
 *              caseBeginRecapture: its callback caseRecaptureFn returns the
 *              status enum (CUDA 13.5's CUgraphRecaptureCallback): when the
 *              Python callable raises, the trampoline returns the status's
 *              failure cast to it, `return <c.caseResult>1` (CASE_ERROR, the
 *              largest member, as the C layer's error value)
 *   Each typedef is also a class of its name (callback_class.pyx), which
 *   the parameters of its type take: case callback_classes covers that.
 */
#ifndef CASE_CALLBACKS_H
#define CASE_CALLBACKS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseStream_st *caseStream;

/** \brief Called on the host with the user data. */
typedef void (*caseHostFn)(void *userData);

/**
 * \brief Called when the stream's work is done.
 * \param status the stream's status
 * \param done bytes done
 * \param userData what was given with the callback
 */
typedef void (*caseStreamCallback)(int status, unsigned long long done, void *userData);

/** Reports progress; returns nonzero to cancel. */
typedef int (*caseProgressFn)(const char *stage, float fraction, void *userData);

/**
 * \brief Enqueues a host function.
 * \param [in] stream the stream
 * \param [in] fn the host function
 * \param [in] userData passed to \p fn
 */
caseResult caseLaunchHostFunc(caseStream stream, caseHostFn fn, void *userData);

caseResult caseStreamAddCallback(caseStream stream, caseStreamCallback callback, unsigned int flags,
                                 void *userData);

caseResult caseSetProgress(caseStream stream, int (*callback)(void *, void *), void *payload);

caseResult caseSetProgressNamed(caseProgressFn progress, void *userData);

/** \brief Called with the final status only. */
typedef void (*caseDoneFn)(int status);

caseResult caseOnDone(caseStream stream, caseDoneFn fn, unsigned int flags);

caseResult caseGetProc(const char *symbol, caseHostFn *pfn);

/** Called for each mismatch; anything but CASE_SUCCESS ends the recapture. */
typedef caseResult (*caseRecaptureFn)(void *data, int status);

caseResult caseBeginRecapture(caseStream stream, caseRecaptureFn callback, void *userData);

#endif
