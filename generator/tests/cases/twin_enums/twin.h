/* The twin headers of golden case "twin_enums" (see input.h): parsed for
 * their enums only, never bound. */
#ifndef CASE_TWIN_H
#define CASE_TWIN_H

typedef enum CASE_device_attribute_enum {
  CASE_DEVICE_ATTRIBUTE_MAX_THREADS = 1,
  CASE_DEVICE_ATTRIBUTE_WARP_SIZE = 2,
  CASE_DEVICE_ATTRIBUTE_MAXIMUM_WIDTH = 3,
  CASE_DEVICE_ATTRIBUTE_CLOCK_RATE = 5,
  CASE_DEVICE_ATTRIBUTE_MAX = 6
} CASE_DEVICE_ATTRIBUTE;

typedef enum { CASE_ROUND_NEAREST = 0, CASE_ROUND_ZERO = 1, CASE_ROUND_UP = 2 } CASE_ROUNDING;

typedef enum {
  CASE_MEMORYTYPE_HOST = 1,
  CASE_MEMORYTYPE_DEVICE = 2,
  CASE_MEMORYTYPE_ARRAY = 3,
  CASE_MEMORYTYPE_UNIFIED = 4
} CASE_MEMORY_TYPE;

typedef enum { CASE_LONE_ONLY = 0 } CASE_LONE;

#endif
