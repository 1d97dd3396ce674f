#include "gpuprim/kernels.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){ int64_t n=1<<27; float*y=malloc(n*4); for(int64_t i=0;i<n;i++) y[i]=(float)rand()/RAND_MAX;
 gp_stats s; for(int r=0;r<2;r++){ double t=now(); gp_cpu_stats(GP_F32,y,n,0,&s); printf("hash %.3f  ",now()-t); t=now(); gp_cpu_stats(GP_F32,y,n,GP_STATS_NOHASH,&s); printf("nohash %.3f  ",now()-t); t=now(); gp_cpu_stats(GP_U32,y,n,GP_STATS_ORDER,&s); printf("u32 order %.3f\n",now()-t);} }
