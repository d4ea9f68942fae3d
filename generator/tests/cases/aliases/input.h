/* Golden case "aliases": `#define f f_v2` API aliases, as cuda.h writes them.
 *
 * Expect in model.json:
 *   aliases    caseCtxCreate -> caseCtxCreate_v2 (plain), caseMemcpy ->
 *              caseMemcpy_v2_ptds and caseMemset -> caseMemset_ptds (through the
 *              pasting macro __CASE_API_PTDS), caseLaunch -> caseLaunch (through
 *              the identity macro __CASE_API_PTSZ: the name is declared as is)
 *   functions  bound under the public name with alias_of the ABI symbol:
 *              caseCtxCreate (alias_of caseCtxCreate_v2), caseMemcpy (alias_of
 *              caseMemcpy_v2_ptds), caseMemset (alias_of caseMemset_ptds);
 *              caseLaunch and caseInit unchanged. report.txt shows
 *              "caseCtxCreate (calls caseCtxCreate_v2)".
 * Not aliases: caseNotDeclared (its target is no declared function) and
 *   caseAlsoNotDeclared (pasted target not declared); neither is a constant.
 * The generated C layer resolves each function by its ABI symbol.
 */
#ifndef CASE_ALIASES_H
#define CASE_ALIASES_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

#define __CASE_API_PTDS(api) api ## _ptds
#define __CASE_API_PTSZ(api) api

#define caseCtxCreate caseCtxCreate_v2
#define caseMemcpy __CASE_API_PTDS(caseMemcpy_v2)
#define caseMemset __CASE_API_PTDS(caseMemset)
#define caseLaunch __CASE_API_PTSZ(caseLaunch)
#define caseNotDeclared caseNotDeclared_v9
#define caseAlsoNotDeclared __CASE_API_PTDS(caseAlsoNotDeclared)

typedef struct caseContext_st *caseContext;

/**
 * \brief Creates a context.
 * \param [out] pctx the context
 * \param [in] flags flags
 */
caseResult caseCtxCreate(caseContext *pctx, unsigned int flags);
caseResult caseMemcpy(unsigned long long dst, unsigned long long src, unsigned long long nbytes);
caseResult caseMemset(unsigned long long dst, unsigned char value, unsigned long long count);
caseResult caseLaunch(caseContext ctx);
caseResult caseInit(unsigned int flags);

#endif
