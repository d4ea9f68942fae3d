/* Golden case "compat_module_types": types NVIDIA's C-level module declares
 * itself rather than from the headers (GL's GLuint, the EGL interop's, the
 * runtime's #define'd cudaStreamAttrID), which Cython spells by its mangled C
 * name `__pyx_t_<len><part>..._<name>` in the signature text (spec
 * compat.module_types, passes: spell_compat_signatures).
 *
 * Expect in model.json:
 *   caseRegister  "caseResult (__pyx_t_4case_8bindings_6cycase_caseGLuint,
 *                 enum __pyx_t_4case_8bindings_6cycase_caseDeviceList,
 *                 caseVdpGetProcAddress *)": a module type mangled, an `enum`
 *                 the header writes keeping its keyword, a function type taken
 *                 by pointer (spec function_handles) keeping its "*"
 *   caseGetAttr   its attr param's "written_name" caseStreamAttrID (the
 *                 #define the header wrote for caseLaunchAttrID), spelled as
 *                 written and mangled: "caseResult (caseProgram,
 *                 __pyx_t_4case_8bindings_6cycase_caseStreamAttrID, int *)"
 *   caseSetAttr   the same name NVIDIA declares not in its module kept as
 *                 clang spells it: "caseResult (caseProgram, caseLaunchAttrID)"
 *   caseDescribe  a record typedef'd under its own tag, written by its
 *                 typedef ("caseDescr *"), and a handle's struct written by
 *                 its tag ("struct caseProgram_st **")
 *
 * Expect in fragments/cy_module.pxd.txt (the .pxd for source consumers, at
 * _cubind/cimport/case/bindings/cycase.pxd): the headers' declarations;
 * the spec's cimports; a private typedef per module type use, its C name
 * the text above, with a #define of each mangled name to the header's type
 * (_nv_caseGLuint, _nv_enum_caseDeviceList, _nv_caseVdpGetProcAddress whose C
 * name holds the "*", _nv_caseStreamAttrID of clang's caseLaunchAttrID); a
 * private typedef _nv_caseDescr "caseDescr", since cubind declares the
 * record `cdef struct caseDescr` (Cython: "struct caseDescr"), and so
 * _nv_caseLaunchAttrID "caseLaunchAttrID" for the enum; the handle's
 * struct by its Cython name (_caseProgram_struct **); each function
 * declared with those types and NVIDIA's exception clause.
 */
#ifndef CASE_COMPAT_MODULE_TYPES_H
#define CASE_COMPAT_MODULE_TYPES_H

typedef unsigned int caseGLuint;
typedef void caseVdpGetProcAddress(void);

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
enum caseDeviceList { CASE_ALL = 1, CASE_CURRENT = 2 };
typedef enum caseLaunchAttrID { CASE_ATTR_A = 1, CASE_ATTR_B = 2 } caseLaunchAttrID;
#define caseStreamAttrID caseLaunchAttrID

typedef struct caseProgram_st *caseProgram;

caseResult caseRegister(caseGLuint buffer, enum caseDeviceList list, caseVdpGetProcAddress *getProcAddress);
caseResult caseGetAttr(caseProgram prog, caseStreamAttrID attr, int *value);
caseResult caseSetAttr(caseProgram prog, caseLaunchAttrID attr);

typedef struct caseDescr { int fd; } caseDescr;
caseResult caseDescribe(caseDescr *descr, struct caseProgram_st **prog);

#endif
