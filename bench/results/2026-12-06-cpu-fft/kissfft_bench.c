// KissFFT (Debian 12 libkissfft-dev 131.1.0, float only) timed as bench/cpu_fft.cpp times xp: medians of 7.
// Build: cc -O3 -march=native kissfft_bench.c -o kissfft_bench -lkissfft-float; run: ./kissfft_bench N
#include <kissfft/kiss_fft.h>
#include <kissfft/kiss_fftr.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){ int n=atoi(argv[1]);
 kiss_fft_cfg c=kiss_fft_alloc(n,0,0,0); kiss_fftr_cfg r=kiss_fftr_alloc(n,0,0,0);
 kiss_fft_cpx*in=malloc(sizeof(kiss_fft_cpx)*n),*out=malloc(sizeof(kiss_fft_cpx)*n); float*rin=malloc(sizeof(float)*n);
 for(int i=0;i<n;i++){in[i].r=rand()/(float)RAND_MAX;in[i].i=rand()/(float)RAND_MAX;rin[i]=in[i].r;}
 double t[7]; for(int k=0;k<7;k++){double t0=now();kiss_fft(c,in,out);t[k]=now()-t0;} qsort(t,7,8,cmp); printf("kiss fft float n=%d: %.3f ms\n",n,t[3]);
 if(n%2==0){for(int k=0;k<7;k++){double t0=now();kiss_fftr(r,rin,out);t[k]=now()-t0;} qsort(t,7,8,cmp); printf("kiss rfft float n=%d: %.3f ms\n",n,t[3]);}
}
