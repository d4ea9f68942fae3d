/* Golden case "constants": numeric `#define`s, evaluated by the compiler.
 *
 * Expect in model.json (constants, in header order):
 *   CASE_INT 42, CASE_NEGATIVE -7, CASE_HEX 255, CASE_UNSIGNED 4294967295
 *   (unsigned), CASE_U64 max (unsigned 18446744073709551615), CASE_LONG_NEG,
 *   CASE_SHIFT (1U << 3) = 8 unsigned, CASE_MASK an expression of other
 *   constants, CASE_FLOAT 1.5 and CASE_DOUBLE 0.25 (kind float), CASE_CHAR 'A'
 *   = 65, CASE_PTR ((void*)0x01) and CASE_PTR_MAX ((void*)0xff) as their
 *   addresses (unsigned), CASE_SIZEOF 8.
 * First, before the macros: the members of an enum that names no type
 * (CASE_FLAG_A 1, CASE_FLAG_B 4, unsigned, as UCX's ucp.h writes its flags),
 * which are constants too, not an enum.
 * (No string macro: `#define X "text"` never becomes a constant today, see
 * DISABLED_StringMacroIsAStringConstant in generator/tests/unit/parse_test.cpp.)
 * Not constants: the include guard and other reserved __ names, empty macros,
 * function-like macros, a bare identifier (CASE_ALIAS_OF_INT), a type name,
 * and a macro that does not evaluate (CASE_BROKEN).
 * The header has no functions.
 */
#ifndef __CASE_CONSTANTS_H__
#define __CASE_CONSTANTS_H__

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

enum { CASE_FLAG_A = 1u << 0, CASE_FLAG_B = 1u << 2 };

#define __CASE_INTERNAL 1
#define CASEAPI
#define CASE_MAX(a, b) ((a) > (b) ? (a) : (b))

#define CASE_INT 42
#define CASE_NEGATIVE (-7)
#define CASE_HEX 0xff
#define CASE_UNSIGNED 0xffffffffU
#define CASE_U64 0xffffffffffffffffULL
#define CASE_LONG_NEG (-9223372036854775807LL - 1)
#define CASE_SHIFT (1U << 3)
#define CASE_MASK (CASE_SHIFT | CASE_HEX)
#define CASE_FLOAT 1.5f
#define CASE_DOUBLE 0.25
#define CASE_CHAR 'A'
#define CASE_PTR ((void*)0x01)
#define CASE_PTR_MAX ((void*)0xff)
#define CASE_SIZEOF sizeof(unsigned long long)
#define CASE_ALIAS_OF_INT CASE_INT
#define CASE_TYPE unsigned int
#define CASE_BROKEN (1 +)

#endif
