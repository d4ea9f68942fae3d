/* cubind's stand-in for OpenGL's GL/gl.h, for where the system has none
 * (no libgl-dev). cudaGL.h and cuda_gl_interop.h include it for two types,
 * declared here as GL does (same include guard, so a real gl.h beside this
 * one does not clash), and GL_VERSION, which cuda_gl_interop.h requires on
 * Arm; the bindings pass GLenum and GLuint as plain integers, so their C type
 * is all that matters. Like EGL/egl.h beside it, this file defers to the
 * system's header wherever one follows it in the search. */
#if defined(__has_include_next) && !defined(CUBIND_PLATFORM_FALLBACK_LAST)
#if __has_include_next(<GL/gl.h>)
#define CUBIND_SYSTEM_GL_H 1
#endif
#endif
#ifdef CUBIND_SYSTEM_GL_H
#include_next <GL/gl.h>
#elif !defined(__gl_h_)
#define __gl_h_
#define GL_VERSION 0x1F02
typedef unsigned int GLenum;
typedef unsigned int GLuint;
#endif
