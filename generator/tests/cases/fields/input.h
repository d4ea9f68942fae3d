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
 *   name       char[8]         -> fields/chars (all 8 bytes: the spec's
 *              conventions.char_arrays is "bytes", as CUDA's are)
 *   label      char[16]        -> fields/c_string: spec.toml's role "string";
 *              read up to its first NUL (cudaDeviceProp.name's reading)
 *   dims       int[3]          -> fields/array
 *   corners    struct[2]       -> fields/record_array
 *   items      struct*         -> fields/record_pointer (a list kept by the struct)
 *   data       void*           -> fields/address (a buffer kept by the struct)
 *   callback   function ptr    -> fields/address
 *   weights    float[2]        -> fields/float_array
 *   modes      enum[2]         -> fields/enum_array (enum members back)
 *   streams    handle[2]       -> fields/array of fields/element_handle (handles back)
 *   planes     void*[2]        -> fields/array of fields/element_address (ints)
 *   outs       handle*         -> fields/handle_array: spec.toml counts it by
 *              numOuts (a list of outs read, a list set and kept by the struct)
 *   kernelParams void**        -> fields/kernel_params: spec.toml's role; set
 *              in every form of a launch's kernelParams, packed by the launch's
 *              packer (kernel_params_kept), kept by the struct; read as an int
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

typedef struct caseAll_st {
  int count;                  /**< how many */
  unsigned char flags;
  _Bool enabled;
  double ratio;
  caseMode mode;
  caseStream stream;
  caseDim dim;
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
