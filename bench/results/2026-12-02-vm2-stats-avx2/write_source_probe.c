#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int c,char**v){ size_t b=512u<<20; int mode=atoi(v[1]); char*src;
 if(mode==0){ src=malloc(b); memset(src,3,b);}
 else { int fd=open("/dev/shm/wrtest",O_CREAT|O_RDWR,0600); ftruncate(fd,b); src=mmap(0,b,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0); memset(src,3,b); unlink("/dev/shm/wrtest");}
 int fd=open(v[2],O_CREAT|O_TRUNC|O_WRONLY,0600);
 double t=now(); if(mode==2) pwrite(fd,src,b,0); else for(size_t o=0;o<b;o+=64<<20) pwrite(fd,src+o,64<<20,o); double tw=now()-t; close(fd);
 printf("mode %d: write %.3f\n",mode,tw);
}
