/* Golden case "typedef_chains": names through chains of typedefs.
 *
 *   typedef struct X_st {...} X_v2;  typedef X_v2 X;
 *
 * Expect in model.json:
 *   records   caseMemcpy2D_v2 (tag caseMemcpy2D_st): a record is named by the
 *             first typedef that names it directly, so by the versioned name;
 *             caseLaunchConfig_v1 (tag caseLaunchConfig_st): the struct defined
 *             on its own, then typedef'd
 *   enums     caseFlags_v1 (tag caseFlags_enum), by the same rule
 *   typedefs  every further link of each chain, in header order:
 *             caseDeviceptr_v2 -> unsigned long long;
 *             caseDeviceptr -> caseDeviceptr_v2 (canonical unsigned long long);
 *             caseSizeBase, caseSize likewise for unsigned long;
 *             caseFlags -> enum caseFlags_v1; caseMemcpy2D -> record
 *             caseMemcpy2D_v2; caseLaunchConfig -> record caseLaunchConfig_v1
 *             (not caseMode_t: `typedef enum caseMode_t caseMode_t;` names
 *             the tag the C layer declares already, and Cython warns at a
 *             second declaration)
 *   functions parameters spelled with the typedef the header uses: a
 *             caseDeviceptr* is an out_scalar, caseDeviceptr and caseSize by
 *             value are scalars, pointers to const records are record_in.
 */
#ifndef CASE_TYPEDEF_CHAINS_H
#define CASE_TYPEDEF_CHAINS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef unsigned long long caseDeviceptr_v2;
typedef caseDeviceptr_v2 caseDeviceptr;

typedef unsigned long caseSizeBase;
typedef caseSizeBase caseSize;

typedef enum caseFlags_enum { CASE_FLAGS_NONE = 0, CASE_FLAGS_ALL = 3 } caseFlags_v1;
typedef caseFlags_v1 caseFlags;

typedef enum caseMode_t { CASE_MODE_A = 0, CASE_MODE_B = 1 } caseMode;
typedef enum caseMode_t caseMode_t;

/** Parameters of a 2-D copy. */
typedef struct caseMemcpy2D_st {
  caseSize srcPitch;
  caseDeviceptr srcDevice;
  caseSize WidthInBytes;
  caseSize Height;
} caseMemcpy2D_v2;
typedef caseMemcpy2D_v2 caseMemcpy2D;

struct caseLaunchConfig_st {
  unsigned int gridDimX;
  caseFlags flags;
};
typedef struct caseLaunchConfig_st caseLaunchConfig_v1;
typedef caseLaunchConfig_v1 caseLaunchConfig;

caseResult caseMemAlloc(caseDeviceptr *dptr, caseSize bytesize);
caseResult caseMemFree(caseDeviceptr dptr);
caseResult caseMemcpy2DCall(const caseMemcpy2D *pCopy, caseFlags flags);
caseResult caseLaunch(const caseLaunchConfig *config);
caseResult caseSetMode(caseMode_t mode);

#endif
