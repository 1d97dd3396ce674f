#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static double rd(int fd, char *p, size_t b, size_t piece){double t=now(); for(size_t o=0;o<b;o+=piece) if(pread(fd,p+o,piece,o+2048)!=(ssize_t)piece) abort(); return now()-t;}
int main(int c,char**v){ size_t b=512u<<20; int fd=open("/tmp/x1g.h5",O_RDONLY); size_t piece=(c>1?strtoul(v[1],0,0):b);
 char*p=malloc(b); printf("malloc fresh: %.3f\n",rd(fd,p,b,piece)); printf("malloc again: %.3f\n",rd(fd,p,b,piece));
 char*q=mmap(0,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(q,b,MADV_NOHUGEPAGE); printf("anon4k fresh: %.3f\n",rd(fd,q,b,piece));
 char*h; posix_memalign((void**)&h,2<<20,b); madvise(h,b,MADV_HUGEPAGE); printf("thp fresh: %.3f\n",rd(fd,h,b,piece));
 int sfd=open("/dev/shm/rdtest",O_CREAT|O_RDWR,0600); ftruncate(sfd,b); char*r=mmap(0,b,PROT_READ|PROT_WRITE,MAP_SHARED,sfd,0); printf("shm fresh: %.3f\n",rd(fd,r,b,piece)); unlink("/dev/shm/rdtest");
 char*s=mmap(0,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0); double t=now(); s=mmap(0,b,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0); printf("populate cost: %.3f\n",now()-t); printf("populated read: %.3f\n",rd(fd,s,b,piece));
}
