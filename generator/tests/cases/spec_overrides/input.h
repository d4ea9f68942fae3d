/* Golden case "spec_overrides": what the spec, not the header, decides.
 *
 * spec.toml names CASE_VERSION (12040) as the version macro of this header:
 * model.json has cuda_version "12.4" and the generated banner says CUDA 12.4;
 * CASE_VERSION is also an ordinary constant.
 * Expect in model.json / report.txt:
 *   caseGetLog       char* without a size query: the rules skip it, the spec's
 *                    override makes it a buffer sized by caseLogLength
 *   caseReset        an unannotated handle*: the rules say out_scalar, the
 *                    override says inout_handle / inout
 *   caseSetStrides   strides has rank - 1 items: the override's count_offset
 *                    makes the generated check `(<long long>_c_rank - 1)`
 *   caseLogLength    [gil] keep: called without `with nogil:`, and
 *                    "releases_gil": false in model.json
 *   caseGetText      an alias of caseGetText_v2 (char* without a size query);
 *                    the override is keyed by the ABI symbol caseGetText_v2
 *                    and still applies: buffer sized by caseTextLength
 *   caseSplit        its output `remainder` is `remaining` in older headers:
 *                    the override keyed by the old name lists the new one in
 *                    other_names and applies (record_out)
 *   caseAddEdges     the override of `edgeData` (a parameter other versions'
 *                    headers have) is optional: nothing fails, edges stays an
 *                    input array (an override naming a parameter the function
 *                    lacks, without optional, fails the generation)
 *   caseInternalA/B  skipped by the spec's [[skip]] pattern, with its reason
 *   caseInternal     not matched: the pattern must match the whole name
 */
#ifndef CASE_SPEC_OVERRIDES_H
#define CASE_SPEC_OVERRIDES_H

#define CASE_VERSION 12040

#define caseGetText caseGetText_v2

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseObject_st *caseObject;

caseResult caseLogLength(caseObject obj, size_t *length);
caseResult caseGetLog(caseObject obj, char *log);
caseResult caseReset(caseObject *obj);
caseResult caseTextLength(caseObject obj, size_t *size);
caseResult caseGetText(caseObject obj, char *text);
caseResult caseSetStrides(unsigned int rank, const unsigned long long *strides);
typedef struct caseGroup_st {
  unsigned int count;
} caseGroup;

caseResult caseSplit(const caseGroup *input, caseGroup *remainder);
caseResult caseAddEdges(const int *edges, size_t numEdges);

caseResult caseInternalA(caseObject obj);
caseResult caseInternalB(int flags);
caseResult caseInternal(void);

#endif
