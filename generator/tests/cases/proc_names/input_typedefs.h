/* The ABI typedefs of golden case "proc_names" (cudaTypedefs.h's form). */
#ifndef CASE_PROC_NAMES_TYPEDEFS_H
#define CASE_PROC_NAMES_TYPEDEFS_H
#include "input.h"

typedef caseResult (*PFN_caseInit_v2000)(unsigned int flags);
typedef caseResult (*PFN_caseAlloc_v2000)(unsigned int *dptr, unsigned int bytesize);
typedef caseResult (*PFN_caseAlloc_v3020)(unsigned long long *dptr, unsigned long long bytesize);
typedef caseResult (*PFN_caseInstantiate_v11000)(caseExec *exec, caseGraph graph, caseNode *errorNode, char *log,
                                                 unsigned long long logSize);
typedef caseResult (*PFN_caseInstantiateWithFlags_v11040)(caseExec *exec, caseGraph graph, unsigned long long flags);

#endif
