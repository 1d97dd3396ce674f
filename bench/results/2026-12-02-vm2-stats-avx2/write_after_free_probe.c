#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int c,char**v){ size_t b=512u<<20; int mode=atoi(v[1]);
 char*src=malloc(b); memset(src,3,b);
 double t0=now();
 if(mode==1){ void*p; posix_memalign(&p,2<<20,b); madvise(p,b,MADV_HUGEPAGE); memset(p,1,b); free(p);}
 if(mode==2){ int fd=open("/dev/shm/wrtest",O_CREAT|O_RDWR,0600); ftruncate(fd,b); char*r=mmap(0,b,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0); memset(r,1,b); madvise(r,b,MADV_REMOVE); munmap(r,b); close(fd); unlink("/dev/shm/wrtest");}
 if(mode==3){ char*q=mmap(0,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); memset(q,1,b); munmap(q,b);}
 double t1=now();
 int fd=open(v[2],O_CREAT|O_TRUNC|O_WRONLY,0600);
 double t=now(); for(size_t o=0;o<b;o+=64<<20) pwrite(fd,src+o,64<<20,o); double tw=now()-t; close(fd);
 printf("mode %d: prep %.3f write %.3f\n",mode,t1-t0,tw);
}
