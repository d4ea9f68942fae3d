/* cubind's stand-in for VDPAU's vdpau/vdpau.h, for where the system has none
 * (no libvdpau-dev). cudaVDPAU.h and cuda_vdpau_interop.h name five of its
 * types, declared here as VDPAU does (same include guard, so a real vdpau.h
 * beside this one does not clash); the bindings pass the handles as plain
 * integers and VdpGetProcAddress by its address, so their C type is all that
 * matters. Like EGL/egl.h beside it, this file defers to the system's header
 * wherever one follows it in the search. */
#if defined(__has_include_next) && !defined(CUBIND_PLATFORM_FALLBACK_LAST)
#if __has_include_next(<vdpau/vdpau.h>)
#define CUBIND_SYSTEM_VDPAU_H 1
#endif
#endif
#ifdef CUBIND_SYSTEM_VDPAU_H
#include_next <vdpau/vdpau.h>
#elif !defined(_VDPAU_H)
#define _VDPAU_H
#include <stdint.h>
typedef enum { VDP_STATUS_OK = 0 } VdpStatus;
typedef uint32_t VdpFuncId;
typedef uint32_t VdpDevice;
typedef uint32_t VdpVideoSurface;
typedef uint32_t VdpOutputSurface;
typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id, void **function_pointer);
#endif
