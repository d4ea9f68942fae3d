/* The platform's header of golden case "foreign_types" (GL/gl.h, EGL/egl.h
 * and vdpau/vdpau.h stand for it in CUDA's interop): not one of the spec's
 * headers, and input.h does not include it (cudaVDPAU.h does not include
 * vdpau/vdpau.h): the spec's prelude_headers includes it first. */
#ifndef CASE_PLATFORM_H
#define CASE_PLATFORM_H
#include <stdint.h>
typedef unsigned int caseGLuint;
typedef int32_t caseEGLint;
typedef uint32_t caseVdpDevice;
typedef uint32_t caseVdpUnused;
typedef int caseVdpStatus;
typedef caseVdpStatus caseVdpGetProcAddress(caseVdpDevice device, uint32_t function_id, void **function_pointer);
#endif
