/* Golden case "abi_symbols": inline wrappers of versioned ABI symbols, as
 * nvJitLink.h declares its API (spec conventions.abi_symbol).
 *
 * Expect in model.json and report.txt: caseCreate bound with alias_of
 * __caseCreate_2_1 (its parameters differ only in const), caseDestroy with
 * alias_of __caseDestroy_2_1; the versioned declarations are not functions
 * of their own. caseVersion has no versioned symbol: bound as itself.
 * __caseOther_2_1 has no wrapper: bound as itself.
 */
#ifndef CASE_ABI_SYMBOLS_H
#define CASE_ABI_SYMBOLS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseLinker_st *caseHandle;

extern caseResult __caseCreate_2_1(caseHandle *handle, unsigned int numOptions, const char *const *options);
static inline caseResult caseCreate(caseHandle *handle, unsigned int numOptions, const char **options) {
  return __caseCreate_2_1(handle, numOptions, options);
}

extern caseResult __caseDestroy_2_1(caseHandle *handle);
static inline caseResult caseDestroy(caseHandle *handle) { return __caseDestroy_2_1(handle); }

extern caseResult __caseOther_2_1(int value);

/**
 * \param [out] major the major version
 * \param [out] minor the minor version
 */
caseResult caseVersion(unsigned int *major, unsigned int *minor);

#endif
