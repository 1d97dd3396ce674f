#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static void *big(size_t b){void*p; posix_memalign(&p,2<<20,b); madvise(p,b,MADV_HUGEPAGE); memset(p,0,b); return p;}
static void lsd(uint32_t *a, uint32_t *t, size_t n, int bits){
  const int B=1<<bits, passes=(32+bits-1)/bits; size_t *h=calloc((size_t)passes*B,sizeof(size_t));
  for(size_t i=0;i<n;i++){uint32_t k=a[i]; for(int p=0;p<passes;p++) h[p*B+((k>>(p*bits))&(B-1))]++;}
  uint32_t *src=a,*dst=t;
  for(int p=0;p<passes;p++){ size_t *o=h+p*B, s=0; for(int b=0;b<B;b++){size_t c=o[b];o[b]=s;s+=c;}
    const int sh=p*bits; for(size_t i=0;i<n;i++){uint32_t k=src[i]; dst[o[(k>>sh)&(B-1)]++]=k;}
    uint32_t*x=src;src=dst;dst=x;}
  if(src!=a) memcpy(a,src,n*4);
  free(h);
}
/* 8-bit LSD with software write-combining buffers of 16 keys per bucket */
static void lsd_wc(uint32_t *a, uint32_t *t, size_t n, int bits){
  const int B=1<<bits, passes=(32+bits-1)/bits; size_t *h=calloc((size_t)passes*B,sizeof(size_t));
  for(size_t i=0;i<n;i++){uint32_t k=a[i]; for(int p=0;p<passes;p++) h[p*B+((k>>(p*bits))&(B-1))]++;}
  uint32_t *src=a,*dst=t; uint32_t (*buf)[16]=aligned_alloc(64,(size_t)B*64); unsigned *cnt=calloc(B,sizeof(unsigned));
  for(int p=0;p<passes;p++){ size_t *o=h+p*B, s=0; for(int b=0;b<B;b++){size_t c=o[b];o[b]=s;s+=c;}
    const int sh=p*bits; memset(cnt,0,B*sizeof(unsigned));
    for(size_t i=0;i<n;i++){uint32_t k=src[i]; unsigned b=(k>>sh)&(B-1); buf[b][cnt[b]++]=k;
      if(cnt[b]==16){memcpy(dst+o[b],buf[b],64);o[b]+=16;cnt[b]=0;}}
    for(int b=0;b<B;b++){memcpy(dst+o[b],buf[b],cnt[b]*4);o[b]+=cnt[b];}
    uint32_t*x=src;src=dst;dst=x;}
  if(src!=a) memcpy(a,src,n*4);
  free(h);free(buf);free(cnt);
}

#include <immintrin.h>
/* LSD with per-bucket line buffers flushed with non-temporal stores when the bucket's next
 * output position is 64-byte aligned */
static void lsd_nt(uint32_t *a, uint32_t *t, size_t n, int bits){
  const int B=1<<bits, passes=(32+bits-1)/bits; size_t *h=calloc((size_t)passes*B,sizeof(size_t));
  for(size_t i=0;i<n;i++){uint32_t k=a[i]; for(int p=0;p<passes;p++) h[p*B+((k>>(p*bits))&(B-1))]++;}
  uint32_t *src=a,*dst=t; uint32_t (*buf)[16]=aligned_alloc(64,(size_t)B*64); size_t *pos=malloc(B*sizeof(size_t));
  for(int p=0;p<passes;p++){ size_t *o=h+p*B, s=0; for(int b=0;b<B;b++){size_t c=o[b];o[b]=s;s+=c;}
    const int sh=p*bits;
    for(int b=0;b<B;b++) pos[b]=o[b]; /* next write position = o[b] (flushed) + fill */
    for(size_t i=0;i<n;i++){uint32_t k=src[i]; unsigned b=(k>>sh)&(B-1); size_t q=pos[b]++;
      buf[b][q&15]=k;
      if((q&15)==15){ uint32_t *d=dst+(q-15);
        if(q-15>=o[b]){ for(int z=0;z<4;z++) _mm_stream_si128((__m128i*)(d+4*z),_mm_load_si128((__m128i*)(buf[b]+4*z))); }
        else { for(size_t j=o[b];j<=q;j++) dst[j]=buf[b][j&15]; }
      }}
    for(int b=0;b<B;b++){ size_t q=pos[b]; size_t start=q&~(size_t)15; if(start<o[b]) start=o[b]; for(size_t j=start;j<q;j++) dst[j]=buf[b][j&15]; }
    _mm_sfence();
    uint32_t*x=src;src=dst;dst=x;}
  if(src!=a) memcpy(a,src,n*4);
  free(h);free(buf);free(pos);
}
int main(int c,char**v){
  size_t n=c>1?strtoull(v[1],0,0):(1u<<27);
  uint32_t *a=big(n*4),*t=big(n*4),*r=big(n*4); uint64_t s=1;
  for(size_t i=0;i<n;i++){s=s*6364136223846793005ull+1442695040888963407ull; r[i]=(uint32_t)(s>>32);}
  double x=now(); memcpy(a,r,n*4); printf("memcpy %.3f s (%.2f GB/s)\n",now()-x,n*8/(now()-x)/1e9);
  for(int bits=8;bits<=11;bits++){ memcpy(a,r,n*4); x=now(); lsd(a,t,n,bits); double d=now()-x;
    int ok=1; for(size_t i=1;i<n;i++) if(a[i-1]>a[i]){ok=0;break;}
    printf("lsd bits=%d %.3f s %.2f ns/key ok=%d\n",bits,d,d/n*1e9,ok);}
  for(int bits=8;bits<=11;bits++){ memcpy(a,r,n*4); x=now(); lsd_nt(a,t,n,bits); double d=now()-x;
    int ok=1; for(size_t i=1;i<n;i++) if(a[i-1]>a[i]){ok=0;break;}
    printf("lsd_nt bits=%d %.3f s %.2f ns/key ok=%d\n",bits,d,d/n*1e9,ok);}
  for(int bits=8;bits<=11;bits+=3){ memcpy(a,r,n*4); x=now(); lsd_wc(a,t,n,bits); double d=now()-x;
    int ok=1; for(size_t i=1;i<n;i++) if(a[i-1]>a[i]){ok=0;break;}
    printf("lsd_wc bits=%d %.3f s %.2f ns/key ok=%d\n",bits,d,d/n*1e9,ok);}
}
