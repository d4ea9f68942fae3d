/* Golden case "compat_versioned_names": the names a function is exported
 * under in NVIDIA's C-level module (passes: spell_compat_signatures).
 * NVIDIA's cynvml names a function by the ABI symbol the header's #define
 * makes it (nvmlDeviceGetCount_v2); spec compat.abi_names exports both.
 *
 * Expect in model.json "compat_names":
 *   caseGetCount  ["caseGetCount", "caseGetCount_v2"] (`#define caseGetCount
 *                 caseGetCount_v2`), one text "caseResult (unsigned int *)"
 *   caseGetInfo   ["caseGetInfo"]: no #define, one name
 *   caseVersion   ["caseVersion", "getVersion"]: the spec's [helpers] entry
 *                 (cyruntime's getLocalRuntimeVersion) under the function's text
 * and in fragments/cy_module.pyx.txt two capsules pointing at one wrapper
 * for each of caseGetCount and caseVersion.
 */
#ifndef CASE_COMPAT_VERSIONED_NAMES_H
#define CASE_COMPAT_VERSIONED_NAMES_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

#define caseGetCount caseGetCount_v2
caseResult caseGetCount(unsigned int *count);
caseResult caseGetInfo(unsigned int *info);
caseResult caseVersion(int *version);

#endif
