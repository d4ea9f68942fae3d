/* cubind's stand-in for Khronos's EGL/egl.h, found only where the system has
 * none (setup.py passes -idirafter: the real header, Debian's libegl-dev,
 * wins wherever it is installed). cudaEGL.h and cuda_egl_interop.h include
 * EGL/egl.h and EGL/eglext.h for four types, declared here as Khronos does
 * (same include guards, so a real eglext.h beside this one does not clash);
 * the bindings pass them as plain integers and addresses, so their C type is
 * all that matters. */
#ifndef __egl_h_
#define __egl_h_
#include <stdint.h>
typedef int32_t EGLint;
#endif
