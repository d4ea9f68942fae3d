/* Not one of spec.toml's headers: what the case's header includes from
 * elsewhere, as cudaEGL.h includes EGL/eglext.h. */
#ifndef CASE_FOREIGN_H
#define CASE_FOREIGN_H
typedef void *caseImageKHR;
typedef void *caseSyncKHR;
typedef void *caseUnusedKHR;
typedef int caseInt;
#endif
