/* cubind's stand-in for Khronos's EGL/eglext.h: see egl.h beside it (it
 * defers to the system's header the same way). */
#if defined(__has_include_next) && !defined(CUBIND_PLATFORM_FALLBACK_LAST)
#if __has_include_next(<EGL/eglext.h>)
#define CUBIND_SYSTEM_EGLEXT_H 1
#endif
#endif
#ifdef CUBIND_SYSTEM_EGLEXT_H
#include_next <EGL/eglext.h>
#elif !defined(__eglext_h_)
#define __eglext_h_
#include "EGL/egl.h"
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
#endif
