/* Part of golden case "internal_headers" (see input.h). */
#ifndef CASE_INTERNAL_H
#define CASE_INTERNAL_H
#if !defined(CASE_INTERNAL_HEADERS)
#warning "internal.h is an internal header file"
#endif
#include "input.h"
static inline int caseTwice(int v) { return 2 * v; }
#endif
