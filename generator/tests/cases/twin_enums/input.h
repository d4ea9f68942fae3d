/* Golden case "twin_enums": one C enum spelled twice, here and in the
 * spec's twin_headers (twin.h), as the CUDA runtime's cudaDeviceAttr and the
 * driver's CUdevice_attribute are.
 *
 * Expect in model.json the twins of each enum (find_twin_enums), and in
 * fragments/enum.pyx.txt a `_twins_` tuple in the class of each enum that
 * has one, which the enum parameters' check reads (a member of a twin is
 * taken where this enum is):
 *   caseDeviceAttr  twin of CASE_DEVICE_ATTRIBUTE (twin.h): the same values,
 *                   every name the same once the prefixes, underscores and
 *                   case are dropped, but one (caseDevAttrMaxWidth is
 *                   CASE_DEVICE_ATTRIBUTE_MAXIMUM_WIDTH: more than half match)
 *   caseCacheMode   no twin: CASE_ROUNDING (twin.h) has its values, but not
 *                   its names
 *   caseMemoryKind  no twin: CASE_MEMORY_TYPE (twin.h) shares two members,
 *                   but neither enum holds every value of the other (0 and
 *                   3 here, 4 there: cudaMemoryType and CUmemorytype)
 *   caseLone        no twin: one member says nothing
 */
#ifndef CASE_TWIN_ENUMS_H
#define CASE_TWIN_ENUMS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

enum caseDeviceAttr {
  caseDevAttrMaxThreads = 1,
  caseDevAttrWarpSize = 2,
  caseDevAttrMaxWidth = 3,
  caseDevAttrClockRate = 5
};

typedef enum { caseCacheModeNone = 0, caseCacheModeAll = 1, caseCacheModeGlobal = 2 } caseCacheMode;

typedef enum {
  caseMemoryKindUnregistered = 0,
  caseMemoryKindHost = 1,
  caseMemoryKindDevice = 2,
  caseMemoryKindManaged = 3
} caseMemoryKind;

typedef enum { caseLoneOnly = 0 } caseLone;

caseResult caseDeviceGetAttribute(int *value, enum caseDeviceAttr attr, int device);

#endif
