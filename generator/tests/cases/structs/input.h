/* Golden case "structs": record layouts as the parser reads them.
 *
 * Expect in model.json (records, nested definitions before their parent):
 *   caseDim3          plain struct: three unsigned ints, size 12, offsets 0/32/64
 *   caseInner         a named struct defined inside caseOuter (its own record,
 *                     parent caseOuter) and caseOuter's field `inner` of it
 *   caseOuter_anon0   anonymous struct member: an unnamed field of caseOuter
 *   caseOuter_anon1   anonymous union member: an unnamed field whose offset is
 *                     its first field's
 *   caseOuter_params  unnamed struct type of the named field `params`
 *   caseArrays        fixed arrays (char name[16], int dims[3], an array of
 *                     structs)
 *   caseBits          bit-fields: bit_width and bit offsets
 *   casePointers      pointer fields: void*, const char*, struct pointers (by
 *                     typedef, by tag), handle, pointer to pointer
 *   caseLocation_anon0            an unnamed union member (CUDA 13.5's
 *                                 CUmemLocation) holding `int id` and
 *   caseLocation_anon0_localized  the unnamed struct type of its field
 *                                 `localized`: its C spelling in the .pxd goes
 *                                 through caseLocation, the nearest record that
 *                                 is not an anonymous member:
 *                                 __typeof__(((struct caseLocation_st*)0)->localized)
 * and one function per struct-by-value/pointer form (roles record / record_in).
 */
#ifndef CASE_STRUCTS_H
#define CASE_STRUCTS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseHandle_st *caseHandle;

/** A 3-D size. */
typedef struct caseDim3_st {
  unsigned int x; /**< width */
  unsigned int y; /**< height */
  unsigned int z; /**< depth */
} caseDim3;

typedef struct caseOuter_st {
  int kind;
  struct caseInner {
    int a;
    long long b;
  } inner;
  struct {
    int anon_x;
    int anon_y;
  };
  union {
    float as_float;
    unsigned int as_bits;
  };
  struct {
    void *ptr;
    unsigned long long size;
  } params;
  double tail;
} caseOuter;

typedef struct caseArrays_st {
  char name[16];
  int dims[3];
  caseDim3 blocks[2];
} caseArrays;

typedef struct caseBits_st {
  unsigned int enabled : 1;
  unsigned int mode : 3;
  unsigned int : 4;
  unsigned int level : 8;
  int value;
} caseBits;

typedef struct casePointers_st {
  void *data;
  const char *label;
  caseDim3 *dim;
  struct caseInner *inner;
  caseHandle owner;
  char **names;
} casePointers;

typedef struct caseLocation_st {
  int type;
  union {
    int id;
    struct {
      unsigned char deviceId;
      unsigned char domainId;
    } localized;
  };
} caseLocation;

caseResult caseLaunch(caseDim3 grid, caseDim3 block, caseHandle h);
caseResult caseConfigure(const caseOuter *config, const caseArrays *arrays);
caseResult caseSetBits(caseBits bits);
caseResult caseSetLocation(const caseLocation *location);

#endif
