/* Golden case "proc_names": what a version-resolving loader (the driver's
 * cuGetProcAddress) is asked for, by name and ABI version.
 *
 * Expect in model.json:
 *   caseAlloc        alias_of caseAlloc_v2, no proc_name (asked as caseAlloc),
 *                    abi_version 3020 (PFN_caseAlloc_v3020 has its parameters)
 *   caseInstantiate  alias_of caseInstantiateWithFlags and proc_name
 *                    caseInstantiateWithFlags, abi_version 11040: the
 *                    typedefs' caseInstantiate is the older ABI with an error
 *                    node and a log buffer, which a request for
 *                    "caseInstantiate" would return (cuda.h's
 *                    cuGraphInstantiate, whose flags were lost that way)
 *   caseInit         no alias: asked as itself at 2000
 *   caseNew          no prototype: asked as itself at the header's version
 * The C layer (c_layer.pyx) passes each function's proc_name to _resolve.
 */
#ifndef CASE_PROC_NAMES_H
#define CASE_PROC_NAMES_H

#define CASE_VERSION 13000

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseGraph_st *caseGraph;
typedef struct caseExec_st *caseExec;
typedef struct caseNode_st *caseNode;

#define caseAlloc caseAlloc_v2
#define caseInstantiate caseInstantiateWithFlags

caseResult caseInit(unsigned int flags);
caseResult caseAlloc(unsigned long long *dptr, unsigned long long bytesize);
caseResult caseInstantiate(caseExec *exec, caseGraph graph, unsigned long long flags);
caseResult caseNew(int value);
caseResult caseGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags, int *status);

#endif
