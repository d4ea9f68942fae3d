/* Golden case "doc_comments": doxygen comments into model docs and docstrings.
 *
 * Expect in model.json (doc of each entity) and in the generated docstrings
 * (markup turned into plain text: \p, \c, ::, #, \link ... \endlink, \n):
 *   caseResult      enum: brief over two lines, \ingroup dropped; every value
 *                   with a trailing member comment (slash-star-star-less-than):
 *                   its text is the value's doc body
 *   caseProgram     handle: brief + a body paragraph
 *   caseVersion     nvrtc style: \brief, \param [out] x2, \return followed by
 *                   "- \link #caseResult CASE_SUCCESS \endlink" lines
 *   caseCompile     nvrtc style: \param [in] with multi-line text and "\n",
 *                   \p and \c markup; the count is `numOptions`
 *   caseCtxCreate   driver style: `\param pctx - text`, `\return ::A, ::B`
 *                   over lines, \notefnerr dropped, \sa list into the body
 *   caseMemcpy      a \code ... \endcode block kept verbatim in the body,
 *                   and a \note
 *   caseUndocumented no comment at all: docstring from the signature only
 */
#ifndef CASE_DOC_COMMENTS_H
#define CASE_DOC_COMMENTS_H

/**
 * \ingroup error
 * \brief   The enumerated type caseResult defines API call result codes.
 *          Every function returns it.
 */
typedef enum {
  CASE_SUCCESS = 0,             /**< No error */
  CASE_ERROR_INVALID_VALUE = 1, /**< An argument is out of range */
  CASE_ERROR_OUT_OF_MEMORY = 2  /**< The allocation failed */
} caseResult;

/**
 * \brief   caseProgram is the unit of compilation, and an opaque handle for
 *          a program.
 *
 * To compile a program, an instance of caseProgram must be
 * created first with ::caseCreateProgram.
 */
typedef struct _caseProgram *caseProgram;

/**
 * \ingroup query
 * \brief   caseVersion sets the output parameters \p major and \p minor
 *          with the version number.
 *
 * \param   [out] major Major version number.
 * \param   [out] minor Minor version number.
 * \return
 *   - \link #caseResult CASE_SUCCESS \endlink
 *   - \link #caseResult CASE_ERROR_INVALID_VALUE \endlink
 *
 */
caseResult caseVersion(int *major, int *minor);

/**
 * \brief   caseCompile compiles the given program.
 *
 * \param   [in] prog        CUDA Runtime Compilation program.
 * \param   [in] numOptions  Number of compiler options passed.
 * \param   [in] options     Compiler options in the form of C string array.\n
 *                           \p options can be \c NULL when \p numOptions is 0.
 * \return
 *   - \link #caseResult CASE_SUCCESS \endlink
 *   - \link #caseResult CASE_ERROR_OUT_OF_MEMORY \endlink
 */
caseResult caseCompile(caseProgram prog, int numOptions, const char * const *options);

/**
 * \brief Create a CUDA context
 *
 * Creates a new CUDA context and associates it with the calling thread.
 *
 * \param pctx  - Returned context handle of the new context
 * \param flags - Context creation flags
 *
 * \return
 * ::CUDA_SUCCESS,
 * ::CUDA_ERROR_DEINITIALIZED,
 * ::CUDA_ERROR_INVALID_VALUE
 * \notefnerr
 *
 * \sa ::caseCtxDestroy,
 * ::caseVersion
 */
caseResult caseCtxCreate(caseProgram *pctx, unsigned int flags);

/**
 * \brief Copies memory
 *
 * The address is computed as:
 * \code
 *   T* pElement = (T*)((char*)BaseAddress + Row * Pitch) + Column;
 * \endcode
 *
 * \note Synchronous.
 *
 * \param dst - Destination address
 * \param src - Source address
 * \param ByteCount - Size of memory copy in bytes
 *
 * \return ::CUDA_SUCCESS, ::CUDA_ERROR_INVALID_VALUE
 */
caseResult caseMemcpy(unsigned long long dst, unsigned long long src, unsigned long long ByteCount);

caseResult caseUndocumented(int value);

#endif
