/* Golden case "buffer_sizes": a void* buffer paired with the bytes the call
 * reads or writes there, so that a buffer object smaller than that is a
 * ValueError naming the parameter (an int address stays unchecked).
 *
 * Expect in model.json, in report.txt (a "buffer" line per void*) and in the
 * Python layer:
 *   caseCopyHtoD     const void* srcHost, size_t ByteCount (a name of the
 *                    spec's byte_count_params) -> in_voidptr_sized,
 *                    count_param ByteCount, converted after ByteCount (late)
 *   caseCopy         void* dst and const void* src share one count (the
 *                    cudaMemcpy form) -> into_buffer_sized (dst, written:
 *                    see the written_buffers case) and in_voidptr_sized (src)
 *   caseCopyDtoH     the count after another parameter -> into_buffer_sized
 *   caseGetImageSize/caseGetImage
 *                    void* with a sibling caseGetImageSize -> into_buffer_queried
 *                    (query_function caseGetImageSize); the query is called
 *                    only for a buffer object
 *   caseAddData      `size` is not in byte_count_params nor next to data;
 *                    the spec's count_param override pairs it
 *                    -> in_voidptr_sized
 *   caseAddText      const char* text followed by its length (`size`, a name
 *                    of length_params): read for `size` bytes, not up to a
 *                    NUL (link_read_lengths) -> role void_ptr, count_param
 *                    size, in_chars_sized (the same check as
 *                    in_voidptr_sized, the address cast to const char*)
 *   caseAddModule    the nvvmAddModuleToProgram form (buffer, size, name):
 *                    buffer -> in_chars_sized; the name after `size` stays
 *                    a C string -> in_string
 *   caseAddBlob      const void* followed by its length (`len`, not a byte
 *                    count name) -> in_voidptr_sized, count_param len
 *   caseSetLabel     const char* before a length, but the spec's role =
 *                    "string" says it is text read up to its NUL -> in_string
 *   caseRangeHandle  void* with a `size` that sizes a device range -> plain
 *                    in_voidptr, reported unchecked
 *   caseHostFunc     a callback's user data is no buffer, even with a byte
 *                    count beside it -> in_userdata, no count_param
 */
#ifndef CASE_BUFFER_SIZES_H
#define CASE_BUFFER_SIZES_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR_INVALID_VALUE = 1 } caseResult;

typedef struct _caseLink *caseLink;

caseResult caseCopyHtoD(unsigned long long dstDevice, const void *srcHost, size_t ByteCount);

caseResult caseCopy(void *dst, const void *src, size_t count);

caseResult caseCopyDtoH(void *dstHost, unsigned long long srcDevice, size_t ByteCount);

/**
 * \param [in] link the link
 * \param [out] size the size of the image in bytes
 */
caseResult caseGetImageSize(caseLink link, size_t *size);

/**
 * \param [in] link the link
 * \param [out] image the image
 */
caseResult caseGetImage(caseLink link, void *image);

caseResult caseAddData(caseLink link, const void *data, unsigned int kind, size_t size, const char *name);

caseResult caseAddText(caseLink link, const char *text, size_t size);

caseResult caseAddModule(caseLink link, const char *buffer, size_t size, const char *name);

caseResult caseAddBlob(caseLink link, const void *blob, size_t len);

caseResult caseSetLabel(caseLink link, const char *label, size_t len);

caseResult caseRangeHandle(void *handle, unsigned long long dptr, size_t size);

caseResult caseHostFunc(void (*fn)(void *), void *userData, size_t ByteCount);

#endif
