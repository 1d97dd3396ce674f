#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(){ size_t b=512u<<20; double t;
 void*p; posix_memalign(&p,2<<20,b); madvise(p,b,MADV_HUGEPAGE); t=now(); memset(p,1,b); printf("anon THP first touch: %.3f s\n",now()-t); t=now(); memset(p,2,b); printf("anon THP second: %.3f s\n",now()-t);
 void*q=mmap(0,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(q,b,MADV_NOHUGEPAGE); t=now(); memset(q,1,b); printf("anon 4K first touch: %.3f s\n",now()-t);
 int fd=open("/dev/shm/fttest",O_CREAT|O_RDWR,0600); ftruncate(fd,b); void*r=mmap(0,b,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0); t=now(); memset(r,1,b); printf("shm first touch: %.3f s\n",now()-t); unlink("/dev/shm/fttest");
}
