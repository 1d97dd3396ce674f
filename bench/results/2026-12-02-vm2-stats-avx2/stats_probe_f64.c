#include "gpuprim/kernels.h"
#include "cpu_twins.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){ int64_t n=1<<26; double*y=malloc(n*8); for(int64_t i=0;i<n;i++) y[i]=(double)rand()/RAND_MAX;
 gp_stats s; for(int r=0;r<2;r++){ double t=now(); gp_cpu_stats(GP_F64,y,n,0,&s); printf("f64 %.3f ",now()-t); t=now(); gp_cpu_stats_ref(GP_F64,y,n,0,&s); printf("ref %.3f ",now()-t); t=now(); gp_cpu_stats(GP_U64,y,n,GP_STATS_ORDER,&s); printf("u64 order %.3f ",now()-t); t=now(); gp_cpu_stats_ref(GP_U64,y,n,GP_STATS_ORDER,&s); printf("ref %.3f\n",now()-t);} }
