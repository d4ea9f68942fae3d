/* cubind's stand-in for Khronos's EGL/egl.h, for where the system has none.
 * cudaEGL.h and cuda_egl_interop.h include EGL/egl.h and EGL/eglext.h for
 * four types, declared here as Khronos does (same include guards, so a real
 * eglext.h beside this one does not clash); the bindings pass them as plain
 * integers and addresses, so their C type is all that matters.
 * A consumer of the .pxd files gets this directory from cubind.get_include()
 * as a plain include directory (-I), before the system's, so this file first
 * defers to the system's header (Debian's libegl-dev) where one follows it.
 * cubind's own build searches it after every system directory instead
 * (-idirafter, with -DCUBIND_PLATFORM_FALLBACK_LAST: cuda_paths.
 * FALLBACK_FLAGS): there a system header is found before this file, and
 * nothing follows to defer to; GCC refuses __has_include_next in the last
 * directory of the search ("no include path in which to search") instead
 * of answering 0, so the check is skipped there. */
#if defined(__has_include_next) && !defined(CUBIND_PLATFORM_FALLBACK_LAST)
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
