/* Golden case "enums": the enum forms of the CUDA headers.
 *
 * Expect in model.json, in this order:
 *   caseResult    typedef'd anonymous enum: name caseResult, no tag, unsigned
 *                 (C gives an enum without negative values an unsigned type)
 *   caseMode      tagged enum + typedef: name caseMode, tag caseMode_enum
 *   caseFlags     unsigned values up to 0x80000000 (hex, shifts): unsigned
 *   caseOffset    negative values: signed (-1, -2147483648 ...)
 *   caseLevel     duplicate values and aliases (LOW = DEFAULT = 0, an alias
 *                 defined through another enumerator), all kept in order
 * and a function returning caseResult that takes each enum by value (role enum).
 */
#ifndef CASE_ENUMS_H
#define CASE_ENUMS_H

typedef enum {
  CASE_SUCCESS = 0,
  CASE_ERROR_INVALID_VALUE = 1,
  CASE_ERROR_UNKNOWN = 999
} caseResult;

typedef enum caseMode_enum {
  CASE_MODE_DEFAULT = 0,
  CASE_MODE_FAST,
  CASE_MODE_SAFE = 5,
  CASE_MODE_NEXT
} caseMode;

typedef enum caseFlags_enum {
  CASE_FLAG_NONE = 0x0,
  CASE_FLAG_A = 0x1,
  CASE_FLAG_B = (1U << 3),
  CASE_FLAG_HIGH = 0x80000000U
} caseFlags;

typedef enum caseOffset_enum {
  CASE_OFFSET_MIN = -2147483647 - 1,
  CASE_OFFSET_BACK = -1,
  CASE_OFFSET_ZERO = 0,
  CASE_OFFSET_MAX = 0x7fffffff
} caseOffset;

typedef enum caseLevel_enum {
  CASE_LEVEL_LOW = 0,
  CASE_LEVEL_DEFAULT = 0,
  CASE_LEVEL_HIGH = 2,
  CASE_LEVEL_MAX = CASE_LEVEL_HIGH
} caseLevel;

caseResult caseSetEnums(caseMode mode, caseFlags flags, caseOffset offset, caseLevel level);

#endif
