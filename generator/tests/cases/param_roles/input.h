/* Golden case "param_roles": one function per parameter rule of the passes.
 *
 * Expect in model.json (role, direction and links of each parameter) and in
 * the generated Python layer (one conversion template per role):
 *   caseVersion            out scalars: int* x2 -> out_scalar, direction out
 *   caseSetValues          by value: scalar (int, float, size_t), enum, handle
 *   caseAddName            const char* -> string
 *   caseCompile            const char* const* with a preceding numOptions ->
 *                          count + string_array (count_param numOptions)
 *   caseCreateProgram      handle* out, two strings, two string arrays sharing
 *                          one count numHeaders
 *   caseGetPTXSize/PTX     char* with a sibling caseGetPTXSize -> buffer
 *                          (query_function caseGetPTXSize), direction out:
 *                          written by the call (into_buffer_queried)
 *   caseGetLoweredName     const char** -> out_string
 *   caseGetNumArchs/Archs  int* with a sibling caseGetNumArchs -> out_array
 *                          (query_function caseGetNumArchs)
 *   caseDestroyProgram     handle* annotated [in] -> inout_handle
 *   caseSetFlowCallback    unnamed function pointer + void* -> callback +
 *                          user_data (userdata_param payload)
 *   caseCopy               void* / const void* -> void_ptr
 *   caseGetLog             char* without a size query (and not documented as
 *                          an output): skipped; report.txt gives the reason
 *   caseGetNames           char** (not const): skipped with its reason
 *   caseScale              an int* annotated [in]: skipped with its reason
 *   caseSetEdges           const struct* counted by numEdges -> array (None
 *                          only with a count of 0)
 *   caseAddEdges           the same, documented "Optional ..." (the spec's
 *                          optional_wording) -> array, optional: None whatever
 *                          the count
 */
#ifndef CASE_PARAM_ROLES_H
#define CASE_PARAM_ROLES_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR_INVALID_INPUT = 1, CASE_ERROR_INVALID_PROGRAM = 2 } caseResult;

typedef enum caseMode_enum { CASE_MODE_DEFAULT = 0, CASE_MODE_FAST = 1 } caseMode;

typedef struct _caseProgram *caseProgram;

/**
 * \brief Sets the output parameters \p major and \p minor.
 * \param [out] major major version number
 * \param [out] minor minor version number
 */
caseResult caseVersion(int *major, int *minor);

caseResult caseSetValues(caseProgram prog, int count, float scale, size_t nbytes, caseMode mode);

/**
 * \param [in] prog the program
 * \param [in] name_expression a name expression
 */
caseResult caseAddName(caseProgram prog, const char *name_expression);

caseResult caseCompile(caseProgram prog, int numOptions, const char * const *options);

/**
 * \param [out] prog the new program
 * \param [in] src the source
 * \param [in] name the program name
 * \param [in] numHeaders number of headers
 * \param [in] headers header sources
 * \param [in] includeNames header names
 */
caseResult caseCreateProgram(caseProgram *prog, const char *src, const char *name, int numHeaders,
                             const char * const *headers, const char * const *includeNames);

/**
 * \param [in] prog the program
 * \param [out] ptxSizeRet size of the PTX, with the terminating NUL
 */
caseResult caseGetPTXSize(caseProgram prog, size_t *ptxSizeRet);

/**
 * \param [in] prog the program
 * \param [out] ptx the PTX
 */
caseResult caseGetPTX(caseProgram prog, char *ptx);

caseResult caseGetLoweredName(caseProgram prog, const char *name_expression, const char **lowered_name);

caseResult caseGetNumArchs(int *numArchs);

caseResult caseGetArchs(int *archs);

/**
 * \param [in] prog the program to destroy; set to NULL
 */
caseResult caseDestroyProgram(caseProgram *prog);

caseResult caseSetFlowCallback(caseProgram prog, int (*callback)(void *, void *), void *payload);

caseResult caseCopy(void *dst, const void *src, size_t nbytes);

caseResult caseGetLog(caseProgram prog, char *log);

caseResult caseGetNames(caseProgram prog, char **names);

/**
 * \param [in] factor scaled in place
 */
caseResult caseScale(int *factor);

typedef struct caseEdge_st { int weight; } caseEdge;

/**
 * \param prog the program
 * \param edges - The edges to set.
 * \param numEdges - Number of edges.
 */
caseResult caseSetEdges(caseProgram prog, const caseEdge *edges, size_t numEdges);

/**
 * \param prog the program
 * \param edges - Optional edge data. If NULL, the edges are the defaults.
 * \param numEdges - Number of edges.
 */
caseResult caseAddEdges(caseProgram prog, const caseEdge *edges, size_t numEdges);

#endif
