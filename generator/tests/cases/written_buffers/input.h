/* Golden case "written_buffers": the caller's buffers a call writes into,
 * one rule for every library (issue 30). A buffer counted by a size query or
 * a byte count, whose C type lets the call write there (char*, or void*
 * without const), is written: it takes any writable buffer (a read-only one
 * is a TypeError naming it, before anything is written), bytes (written in
 * place, as the classic convention does), an int address or None, and holds
 * the buffer's export for the call.
 *
 * Expect in model.json (direction, conversion) and in the Python layer:
 *   caseGetLogSize/caseGetLog
 *                    char* with a size query (nvrtcGetPTX, nvJitLinkGetInfoLog,
 *                    nvvmGetProgramLog) -> buffer, direction out,
 *                    into_buffer_queried with c_string (the lone NUL of an
 *                    empty log is spared a shared bytes object)
 *   caseGetImageSize/caseGetImage
 *                    void* with a size query (nvJitLinkGetLinkedCubin) ->
 *                    void_ptr, direction out, into_buffer_queried, no c_string
 *   caseCopyDtoH     void* with a byte count (cuMemcpyDtoH's dstHost) ->
 *                    direction out, into_buffer_sized
 *   caseCopyHtoD     const void* with a byte count -> direction in,
 *                    in_voidptr_sized (read: any buffer, bytes included)
 *   caseRegister     void* with a byte count that the call only reads (spec
 *                    `direction = "in"`, as cuMemHostRegister's p) ->
 *                    direction in, in_voidptr_sized
 *   caseFreeHost     void* without a count: not known to be written ->
 *                    direction in, in_voidptr
 */
#ifndef CASE_WRITTEN_BUFFERS_H
#define CASE_WRITTEN_BUFFERS_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR_INVALID_VALUE = 1 } caseResult;

typedef struct _caseProgram *caseProgram;

/**
 * \param [in] prog the program
 * \param [out] logSizeRet the size of the log, its NUL included
 */
caseResult caseGetLogSize(caseProgram prog, size_t *logSizeRet);

/**
 * \param [in] prog the program
 * \param [out] log the log
 */
caseResult caseGetLog(caseProgram prog, char *log);

/**
 * \param [in] prog the program
 * \param [out] size the size of the image in bytes
 */
caseResult caseGetImageSize(caseProgram prog, size_t *size);

/**
 * \param [in] prog the program
 * \param [out] image the image
 */
caseResult caseGetImage(caseProgram prog, void *image);

caseResult caseCopyDtoH(void *dstHost, unsigned long long srcDevice, size_t ByteCount);

caseResult caseCopyHtoD(unsigned long long dstDevice, const void *srcHost, size_t ByteCount);

caseResult caseRegister(void *p, size_t ByteCount, unsigned int flags);

caseResult caseFreeHost(void *p);

#endif
