/* Golden case "header_only": functions defined inline in the header.
 *
 * Expect in model.json: make_casePos and caseTwice are header_only (static,
 * or inline: the library has no symbol for them); caseInit is not.
 * In fragments/c_layer.pyx: the header-only ones are declared from
 * input.h and called directly (compiled into the C layer), with no
 * _resolve, and declared noexcept (they load nothing, so no loader error can
 * reach the caller, and Cython checks for none after each call); caseInit
 * keeps its function pointer resolved on first use, and its except? clause.
 */
#ifndef CASE_HEADER_ONLY_H
#define CASE_HEADER_ONLY_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
struct casePos { unsigned long x, y; };

/** Builds a position. */
static __inline__ struct casePos make_casePos(unsigned long x, unsigned long y)
{
    struct casePos p;
    p.x = x;
    p.y = y;
    return p;
}
static inline int caseTwice(int v) { return 2 * v; }
caseResult caseInit(unsigned int flags);

#endif
