/* Golden case "compat_error_values": the exception clause of each function
 * in NVIDIA's C-level module, after which a consumer compiled against
 * NVIDIA's declaration looks for an exception (passes: compat_exception):
 * the wrapper returns that value when cubind's C layer raised.
 *
 * Expect in model.json "compat_exception":
 *   caseInit       the status: "except? <caseResult>-42" (compat.error_value,
 *                  a value of no member as NVIDIA's -42)
 *   caseErrorName  a pointer result: "except? NULL", text "char const *(caseResult)"
 *   caseRead       a result that is no status: "except *"; its text spells
 *                  ssize_t as NVIDIA declares it (compat.type_spellings:
 *                  "Py_ssize_t (caseProgram, uint32_t, size_t)"), uint32_t kept
 *   caseClose      void: "except *", text "void (caseProgram)"
 * and in fragments/cy_module.pyx.txt each wrapper declared with its clause.
 */
#ifndef CASE_COMPAT_ERROR_VALUES_H
#define CASE_COMPAT_ERROR_VALUES_H

typedef __SIZE_TYPE__ size_t;
typedef long ssize_t;
typedef unsigned int uint32_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseProgram_st *caseProgram;

caseResult caseInit(unsigned int flags);
const char *caseErrorName(caseResult result);
ssize_t caseRead(caseProgram prog, uint32_t flags, size_t size);
void caseClose(caseProgram prog);

#endif
