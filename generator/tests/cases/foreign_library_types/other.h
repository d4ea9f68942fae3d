/* Another library's header (as cuda.h, <time.h>, <sys/socket.h> for
 * cufile.h): input.h includes it; the spec binds nothing of it. */
#ifndef CASE_OTHER_H
#define CASE_OTHER_H
typedef struct caseStream_st *caseStream;
typedef enum caseDrvResult_enum { CASE_DRV_SUCCESS = 0, CASE_DRV_ERROR = 1 } caseDrvResult;
struct caseTimespec { long sec; long nsec; };
struct caseSockaddr { unsigned short family; char data[14]; };
#endif
