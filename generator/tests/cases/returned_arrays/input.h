/* Golden case "returned_arrays": arrays the library owns and hands back.
 *
 * Expect in model.json (roles and conversions) and in fragments/:
 *   caseGetCaptureInfo  `const caseNode **deps_out` and `const caseEdge
 *                       **edges_out` -> returned_array (params/returned_array:
 *                       a NULL pointer before the call, a list after it), both
 *                       counted by the output numDeps_out (found by the count
 *                       naming rule), which stays an int output; nodes come
 *                       back as handles (out_element_handle), edges as copied
 *                       records (out_element_record); an empty list when the
 *                       library leaves the pointer NULL
 *   caseGetOrphans      a returned array with no count output: skipped, with
 *                       the reason in report.txt
 */
#ifndef CASE_RETURNED_ARRAYS_H
#define CASE_RETURNED_ARRAYS_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseNode_st *caseNode;
typedef struct caseEdge_st {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;
} caseEdge;

/**
 * \brief Returns the capture's current dependencies.
 * \param deps_out - Returned dependencies, owned by the library
 * \param edges_out - Returned edge data, owned by the library
 * \param numDeps_out - Returned number of dependencies
 */
caseResult caseGetCaptureInfo(int stream, const caseNode **deps_out, const caseEdge **edges_out, size_t *numDeps_out);

/**
 * \brief Returns nodes without saying how many.
 * \param nodes_out - Returned nodes
 */
caseResult caseGetOrphans(const caseNode **nodes_out);

#endif
