/* Golden case "classic_helpers": the helpers every classic module has.
 *
 * Expect in py_layer.pyx: sizeof(cls), published under that name from a
 * table of every struct, union and handle class of the module (casePoint,
 * caseValue, the pointer handle caseStream, the integer handle caseDevptr)
 * to its C size; and the spec's [helpers] getVersionLocal bound to
 * caseGetVersion (model.json's "helpers"), in __all__ and the stub.
 */
#ifndef CASE_CLASSIC_HELPERS_H
#define CASE_CLASSIC_HELPERS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef struct caseStream_st *caseStream;
typedef unsigned long long caseDevptr;

typedef struct casePoint_st {
  int x;
  int y;
} casePoint;

typedef union caseValue_u {
  int i;
  double d;
} caseValue;

caseResult caseGetVersion(int *version);
caseResult caseStreamCreate(caseStream *stream, caseDevptr base);

#endif
