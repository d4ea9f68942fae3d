/* Golden case "unions": unions at top level and inside structs.
 *
 * Expect in model.json (records):
 *   caseValue           typedef'd tagged union: union true, size 8 (the largest
 *                       member), every field at offset 0
 *   caseRawBytes        a union named by its tag only (no typedef)
 *   caseParam_value     unnamed union type of caseParam's named field `value`
 *                       (parent caseParam)
 *   caseParam           struct holding it, after a leading enum field
 * and a function taking the union by value (role record).
 */
#ifndef CASE_UNIONS_H
#define CASE_UNIONS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef enum caseKind_enum { CASE_KIND_INT = 0, CASE_KIND_FLOAT = 1 } caseKind;

/** A value of one of several types. */
typedef union caseValue_u {
  int i;           /**< as an integer */
  float f;         /**< as a float */
  unsigned long long u64; /**< as 64 bits */
  unsigned char bytes[8]; /**< as bytes */
} caseValue;

union caseRawBytes {
  unsigned int word;
  unsigned short half[2];
};

typedef struct caseParam_st {
  caseKind kind;
  union {
    int i;
    double d;
  } value;
} caseParam;

caseResult caseSetValue(caseValue value, caseKind kind);
caseResult caseSetParam(caseParam param);

#endif
