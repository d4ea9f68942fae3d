/* Golden case "declaration_order": records C names before defining them.
 *
 * The C layer (.pxd) declares everything in the headers' order, so a record
 * named before its definition is declared forward where it is first named.
 * Expect in model.json "forward_declared": true on caseCopyOp_v1, caseResource_v1
 * and caseLater, on no other record; in fragments/c_record_forward.pxd.txt:
 *   caseCopyOp_v1    (CUDA 13.5's CUDA_FABRIC_COPY_BATCH_OP) typedef'd from
 *                    its tag long before its definition and typedef'd again
 *                    (caseCopyOp) for caseCopyBatch's pointer field:
 *                    `cdef struct caseCopyOp_st` + `ctypedef caseCopyOp_st
 *                    caseCopyOp_v1` at the first typedef, the body (without
 *                    the typedef) where the header defines it
 *   caseResource_v1  (CUdevResource) a pointer to itself among its fields,
 *                    by tag: declared forward just before its definition, so
 *                    `caseResource_v1* next` names a declared type
 *   caseLater        a pointer to a record defined further on, by tag only
 *                    (no typedef before): declared forward before caseHolder
 *   caseDone         defined before any use: no forward declaration
 */
#ifndef CASE_DECLARATION_ORDER_H
#define CASE_DECLARATION_ORDER_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef struct caseCopyOp_st caseCopyOp_v1;
typedef caseCopyOp_v1 caseCopyOp;

typedef struct caseDone_st {
  int value;
} caseDone;

typedef struct caseCopyBatch_st {
  unsigned int count;
  caseCopyOp *ops;
  caseDone *done;
} caseCopyBatch;

typedef struct caseResource_st {
  int kind;
  unsigned int size;
  struct caseResource_st *next;
} caseResource_v1;
typedef caseResource_v1 caseResource;

typedef struct caseHolder_st {
  struct caseLater *later;
} caseHolder;

struct caseLater {
  int x;
};

struct caseCopyOp_st {
  unsigned long long src;
  unsigned long long dst;
  unsigned long long size;
};

caseResult caseCopy(caseCopyBatch *batch);
caseResult caseSplit(caseResource *resources, unsigned int count);

#endif
