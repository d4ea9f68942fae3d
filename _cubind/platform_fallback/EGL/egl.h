/* cubind's stand-in for Khronos's EGL/egl.h, for where the system has none.
 * cudaEGL.h and cuda_egl_interop.h include EGL/egl.h and EGL/eglext.h for
 * four types, declared here as Khronos does (same include guards, so a real
 * eglext.h beside this one does not clash); the bindings pass them as plain
 * integers and addresses, so their C type is all that matters.
 * cubind's build searches this directory after every system one (-idirafter);
 * a consumer of the .pxd files gets it from cubind.get_include() as a plain
 * include directory, so this file first defers to the system's header
 * (Debian's libegl-dev) wherever one follows it in the search. */
#if defined(__has_include_next)
#if __has_include_next(<EGL/egl.h>)
#define CUBIND_SYSTEM_EGL_H 1
#endif
#endif
#ifdef CUBIND_SYSTEM_EGL_H
#include_next <EGL/egl.h>
#elif !defined(__egl_h_)
#define __egl_h_
#include <stdint.h>
typedef int32_t EGLint;
#endif
