/* Golden case "fields": one struct field of each kind and its property.
 *
 * Expect in model.json (each field's conversion) and in fragments/fields/:
 *   count      int             -> fields/scalar (int32 range)
 *   flags      unsigned char   -> fields/scalar (uint8 range)
 *   enabled    _Bool           -> fields/scalar (0..1)
 *   ratio      double          -> fields/float
 *   mode       enum            -> fields/enum (an enum member back)
 *   stream     handle          -> fields/handle
 *   dim        struct          -> fields/record (a view into the parent)
 *   sync       union           -> fields/record (a view, as a struct is); its
 *              `void *fence` prints in hex (record.pyx's _hex_fields of
 *              caseSync: NVIDIA's `fence : 0x0`), `unsigned long long` not
 *   name       char[8]         -> fields/chars (all 8 bytes: the spec's
 *              conventions.char_arrays is "bytes", as CUDA's are)
 *   label      char[16]        -> fields/c_string: spec.toml's role "string";
 *              read up to its first NUL (cudaDeviceProp.name's reading)
 *   dims       int[3]          -> fields/array
 *   corners    struct[2]       -> fields/array of fields/element_record_copy
 *              (a list of copies, as NVIDIA's modules read it; set from a list)
 *   items      struct*         -> fields/record_pointer (a list kept by the struct)
 *   data       void*           -> fields/address (a buffer kept by the struct);
 *              prints in hex (prints_hex, caseAll's _hex_fields)
 *   callback   function ptr    -> fields/address
 *   weights    float[2]        -> fields/array of fields/element_float
 *   modes      enum[2]         -> fields/array of fields/element_enum (members back)
 *   streams    handle[2]       -> fields/array of fields/element_handle (handles back)
 *   planes     void*[2]        -> fields/array of fields/element_address (ints);
 *              prints each in hex (prints_hex)
 *   outs       handle*         -> fields/handle_array: spec.toml counts it by
 *              numOuts (a list of outs read, a list set and kept by the struct)
 *   kernelParams void**        -> fields/kernel_params: spec.toml's role; set
 *              in every form of a launch's kernelParams, packed by the launch's
 *              packer (kernel_params_kept), kept by the struct; read as an int
 *              (not in hex: NVIDIA prints only void* fields so)
 * and in record.pyx every class's __init__ taking _ptr (the struct at an address).
 * and in fragments/stub.pyi.txt a class with a typed property per field.
 */
#ifndef CASE_FIELDS_H
#define CASE_FIELDS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum { CASE_MODE_A = 0, CASE_MODE_B = 1 } caseMode;
typedef struct caseStream_st *caseStream;

typedef struct caseDim_st {
  unsigned int x;
  unsigned int y;
} caseDim;

/** NvSciSync's shape in CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS. */
typedef union caseSync_u {
  void *fence;
  unsigned long long reserved;
} caseSync;

typedef struct caseAll_st {
  int count;                  /**< how many */
  unsigned char flags;
  _Bool enabled;
  double ratio;
  caseMode mode;
  caseStream stream;
  caseDim dim;
  caseSync sync;
  char name[8];
  char label[16];
  int dims[3];
  caseDim corners[2];
  caseDim *items;
  void *data;
  void (*callback)(void *);
  float weights[2];
  caseMode modes[2];
  caseStream streams[2];
  void *planes[2];
  caseStream *outs;
  unsigned int numOuts;
  void **kernelParams;        /**< Array of pointers to kernel parameters */
} caseAll;

caseResult caseUse(const caseAll *all);

#endif
