/* Golden case "compat_const_pointers": how NVIDIA's C-level module spells
 * pointer types in the signature text a consumer compiled against it looks
 * its capsules up by (spec [compat], passes: spell_compat_signatures). NVIDIA
 * puts every const of a pointer type on its pointee, and Cython writes it
 * after the pointee's name.
 *
 * Expect in model.json, each function's "compat_signature":
 *   caseCreate   `const char *const name` (a const pointer by value) is
 *                "char const *", `const char *const *headers` "char const **",
 *                `void *const *dsts` "void const **", `const int *` "int const *":
 *                "caseResult (caseProgram *, char const *, int, char const **, void const **, int const *)"
 *   caseSetFlow  a function pointer the header spells out is "void *":
 *                "caseResult (caseProgram, void *, void *)"
 *   caseOffsets  `unsigned long long *` is Cython's "unsigned PY_LONG_LONG *",
 *                `long long` "PY_LONG_LONG"
 * and "compat_exception": "except? CASE_ERROR" (compat.error_value); in
 * fragments/cy_module.pyx.txt a wrapper per function, with the C layer's
 * types, and the capsules named with those texts.
 */
#ifndef CASE_COMPAT_CONST_POINTERS_H
#define CASE_COMPAT_CONST_POINTERS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseProgram_st *caseProgram;

caseResult caseCreate(caseProgram *prog, const char *const name, int numHeaders, const char *const *headers,
                      void *const *dsts, const int *flags);
caseResult caseSetFlow(caseProgram prog, int (*callback)(void *, void *), void *payload);
caseResult caseOffsets(caseProgram prog, unsigned long long *offsets, long long base);

#endif
