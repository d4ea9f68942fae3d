/* Golden case "callback_classes": function-pointer typedefs as Python classes.
 *
 * Expect:
 *   callback_class.pyx  caseB2DSize and caseHostFn each a class of its name
 *              (the classic modules' `CUoccupancyB2DSize(address)`): int(f),
 *              f.getPtr(), repr, and the converter _as_<name> that takes an
 *              instance, an int, a ctypes function pointer or None and
 *              refuses a str or float naming the parameter. model.json
 *              marks both `"class": true` (mark_callback_classes).
 *   params     caseOccupancy.b2d (no user data, in_callback_raw) and
 *              caseLaunchHostFunc.fn (a Python callable through the
 *              trampoline, else in_callback) convert through _as_<class>
 *              and type it in the stub (`caseB2DSize | ...`); the unnamed
 *              function-pointer parameter of caseSetHandler has no class
 *              and keeps function_address.
 *   fields     caseHostNodeParams.fn (fields/address) takes the class too
 *              (its stub_set).
 *   py_layer   the classes are declared (.pxd), sized (sizeof table) and
 *              exported with the handles; report.txt lists each `class`.
 */
#ifndef CASE_CALLBACK_CLASSES_H
#define CASE_CALLBACK_CLASSES_H

#include <stddef.h>

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

/** Dynamic shared memory a block of this size needs. */
typedef size_t (*caseB2DSize)(int blockSize);

/** \brief Called on the host with the user data. */
typedef void (*caseHostFn)(void *userData);

typedef struct caseHostNodeParams_st {
  caseHostFn fn;
  void *userData;
} caseHostNodeParams;

caseResult caseOccupancy(int *minGridSize, caseB2DSize b2d, size_t dynamicSMemSize);

caseResult caseLaunchHostFunc(caseHostFn fn, void *userData);

caseResult caseSetHandler(void (*handler)(int));

#endif
