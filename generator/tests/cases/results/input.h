/* Golden case "results": functions that return a value, not the status.
 * Each returns (success, value) to Python, as every call returns a status
 * first: the spec's conventions.success_member (CASE_SUCCESS) is
 * model.json's success_status of each, and function_value.pyx returns
 * (_caseResult_of(0), value); the stubs type tuple[caseResult, value].
 *
 * Expect in model.json (each function's result_conversion with the error
 * value its C-layer declaration checks after) and in fragments/results/:
 *   caseErrorString  const char*  -> results/bytes, error NULL
 *   caseModeOf       enum         -> results/enum, error its largest value
 *   caseRatio        double       -> results/float, error -1
 *   caseCount        int          -> results/value, error -1
 *   caseReset        void         -> results/none, always checked (except *)
 *   caseStatus       the status   -> results/status, error its largest value
 *   casePairOf       a struct     -> results/record (a new casePair holding a
 *                    copy), always checked (except *)
 *   caseVersion      void, with [out] major and minor -> its outputs alone:
 *                    (CASE_SUCCESS, major, minor), typed tuple[caseResult,
 *                    int, int] (UCX's ucp_get_version)
 *   caseCountOf      int, with an [out] mode -> (CASE_SUCCESS, value, mode)
 *   make_casePair    a struct, inline in the header, which the spec says
 *                    returns its value alone (`result = "value"`, as the
 *                    classic modules' make_cudaExtent): model.json's
 *                    value_only, no success_status; function_value.pyx
 *                    returns the casePair itself, the stub types casePair.
 *
 * The spec's status_description names caseErrorString: model.json's
 * caseResult has it as description_function, and enum.pyx's caseResult
 * class a _describe_() calling it (what CUDAError's message reads).
 */
#ifndef CASE_RESULTS_H
#define CASE_RESULTS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 7, CASE_ERROR_OTHER = 3 } caseResult;
typedef enum { CASE_MODE_A = 0, CASE_MODE_B = 1 } caseMode;

const char *caseErrorString(caseResult error);
caseMode caseModeOf(int value);
double caseRatio(void);
int caseCount(void);
void caseReset(void);
caseResult caseStatus(void);
/**
 * @param [out] major  Filled with the major version.
 * @param [out] minor  Filled with the minor version.
 */
void caseVersion(unsigned *major, unsigned *minor);
/**
 * @param [in]  n      What to count.
 * @param [out] mode   Filled with its mode.
 */
int caseCountOf(int n, caseMode *mode);

typedef struct casePair_st {
  int x;
  int y;
} casePair;
casePair casePairOf(int x, int y);
static __inline__ casePair make_casePair(int x, int y) {
  casePair p;
  p.x = x;
  p.y = y;
  return p;
}

#endif
