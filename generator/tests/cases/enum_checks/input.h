/* Golden case "enum_checks": where C takes an enum, Python takes a member of
 * that enum class or a plain int; a member of another enum class is a
 * TypeError (an enum is not silently stored as another's number).
 *
 * Expect:
 *   caseSetKind(kind, count)  kind -> params/in_enum: as_enum(kind,
 *                             _caseKind_class, b"caseKind", b"kind") before
 *                             the integer conversion; count stays
 *                             params/in_integer
 *   caseCopy.srcKind           fields/enum: the setter checks the same way
 *   caseSetSigned(level)       a signed enum: as_enum, then as_signed
 *   caseSetKinds(kinds, n)     each item of an array of enums:
 *                              params/element_enum, the same check
 */
#ifndef CASE_ENUM_CHECKS_H
#define CASE_ENUM_CHECKS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum caseKind_enum { CASE_KIND_HOST = 1, CASE_KIND_DEVICE = 2 } caseKind;
typedef enum { CASE_LEVEL_LOW = -1, CASE_LEVEL_HIGH = 1 } caseLevel;

typedef struct caseCopy_st {
  caseKind srcKind;
  unsigned int count;
} caseCopy;

caseResult caseSetKind(caseKind kind, unsigned int count);
caseResult caseSetSigned(caseLevel level);
caseResult caseSetKinds(const caseKind *kinds, unsigned int numKinds);

#endif
