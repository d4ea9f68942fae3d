/* cubind's stand-in for Khronos's EGL/eglext.h: see egl.h beside it. */
#ifndef __eglext_h_
#define __eglext_h_
#include "EGL/egl.h"
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
#endif
