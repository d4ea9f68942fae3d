/* Golden case "struct_versions": versioned structs the caller stamps with
 * their version before a call (NVML's nvmlMemory_v2_t, whose `version` must
 * be nvmlMemory_v2 = sizeof | 2 << 24). The spec's struct_version rewrite maps
 * a record's name to the constant holding its version.
 *
 * Expect in model.json and the Python layer (record.pyx):
 *   caseMemory_v2_t  `version` field, constant caseMemory_v2 defined -> its
 *                    class's __cinit__ sets version = 33554448 (16 | 2 << 24),
 *                    model.json's "version" names field, constant and value
 *   caseInfo_v1_t    reached through its typedef caseInfo_t (an alias): the
 *                    rewrite matches the versioned name -> version 16777224
 *   caseNoConst_v3_t a `version` field but no constant caseNoConst_v3 -> no stamp
 *   casePlain_t      no `version` field -> no stamp
 */
#ifndef CASE_STRUCT_VERSIONS_H
#define CASE_STRUCT_VERSIONS_H

#define CASE_STRUCT_VERSION(data, ver) (unsigned int)(sizeof(case ## data ## _v ## ver ## _t) | (ver << 24U))

typedef enum { CASE_SUCCESS = 0, CASE_ERROR_INVALID_VALUE = 1 } caseResult;

typedef struct {
  unsigned int version;
  unsigned int pad;
  unsigned long long total;
} caseMemory_v2_t;
#define caseMemory_v2 CASE_STRUCT_VERSION(Memory, 2)

typedef struct caseInfo_v1_st {
  unsigned int version;
  unsigned int value;
} caseInfo_v1_t;
typedef caseInfo_v1_t caseInfo_t;
#define caseInfo_v1 CASE_STRUCT_VERSION(Info, 1)

typedef struct {
  unsigned int version;
} caseNoConst_v3_t;

typedef struct {
  unsigned int count;
} casePlain_t;

/**
 * \param [out] memory the memory
 */
caseResult caseGetMemory(caseMemory_v2_t *memory);
caseResult caseGetInfo(caseInfo_t *info);
caseResult caseGetNoConst(caseNoConst_v3_t *v);
caseResult caseGetPlain(casePlain_t *p);

#endif
