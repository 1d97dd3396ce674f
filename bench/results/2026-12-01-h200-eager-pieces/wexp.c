/* write experiment: P processes each write 1/P of TOTAL bytes into one file, by method M.
 * usage: wexp FILE TOTAL_BYTES P METHOD(pwrite|direct|mmap|falloc) [PIECE] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int c,char**v){
  if(c<5)return 2;
  const char*f=v[1]; long long tot=atoll(v[2]); int P=atoi(v[3]); const char*m=v[4];
  long long piece=c>5?atoll(v[5]):(32ll<<20);
  unlink(f);
  int fd=open(f,O_CREAT|O_RDWR,0644); if(fd<0){perror("open");return 1;}
  if(!strcmp(m,"falloc")){ if(fallocate(fd,0,0,tot)) perror("fallocate"); }
  else if(ftruncate(fd,tot)){perror("ftruncate");return 1;}
  close(fd);
  double t0=now();
  for(int r=0;r<P;r++){ if(fork()==0){
    long long lo=tot/P*r, hi=r==P-1?tot:tot/P*(r+1);
    int fl=O_RDWR; if(!strcmp(m,"direct")) fl|=O_DIRECT;
    int d=open(f,fl); if(d<0){perror("open2");_exit(1);}
    char*buf; if(posix_memalign((void**)&buf,1<<21,piece))_exit(1);
    memset(buf,r+1,piece);
    double a=now();
    if(!strcmp(m,"mmap")){
      char*p=mmap(NULL,hi-lo,PROT_WRITE|PROT_READ,MAP_SHARED,d,lo); if(p==MAP_FAILED){perror("mmap");_exit(1);}
      for(long long o=0;o<hi-lo;o+=piece){long long n=hi-lo-o<piece?hi-lo-o:piece; memcpy(p+o,buf,n);}
      munmap(p,hi-lo);
    } else {
      for(long long o=lo;o<hi;o+=piece){long long n=hi-o<piece?hi-o:piece; if(pwrite(d,buf,n,o)!=n){perror("pwrite");_exit(1);}}
    }
    close(d);
    fprintf(stderr,"  rank %d %.3f s\n",r,now()-a);
    _exit(0);} }
  int st,bad=0; for(int r=0;r<P;r++){wait(&st); if(!WIFEXITED(st)||WEXITSTATUS(st))bad=1;}
  double t=now()-t0;
  printf("wexp method=%s P=%d bytes=%lld piece=%lld seconds=%.4f GBps=%.3f%s\n",m,P,tot,piece,t,tot/t/1e9,bad?" FAILED":"");
  unlink(f);
  return bad;
}
