/* matmul_bench.c - the engine's matmul kernels alone on the shipped Connect Four model's shapes (4 layers of
 * 128x128, 2 x 128x32, 128x128, 2 x 128x384, 384x128, then 128x2723), n rows, AVX2 vs AVX-512, CPU time:
 * "sequence" runs all the matrices in turn (4.4 MB of weights: from L3), "each hot" repeats each one (L2).
 *   cd csrc && gcc -std=c11 -O2 -march=x86-64-v2 -I. ../experiments/2026-12-02-avx512-engine/matmul_bench.c model/matmul.c -o /tmp/mb && /tmp/mb 8 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model/matmul.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+1e-9*t.tv_nsec;}
typedef struct {int in,out;} shp;
int main(int argc,char**argv){
  int n=atoi(argv[1]); const char*names[]={"avx2","avx512"};
  shp L[]={{128,128},{128,32},{128,32},{128,128},{128,384},{128,384},{384,128}};
  int nl=4; float *W[64]; int ns=0; shp S[64];
  for(int l=0;l<nl;l++)for(int i=0;i<7;i++){S[ns]=L[i];W[ns]=calloc(mg_matmul_packed_floats(L[i].in,L[i].out),4);for(size_t q=0;q<mg_matmul_packed_floats(L[i].in,L[i].out);q++)W[ns][q]=(float)(q%7)*0.01f;ns++;}
  S[ns]=(shp){128,2723};W[ns]=calloc(mg_matmul_packed_floats(128,2723),4);ns++;
  float*x=calloc((size_t)n*4096,4),*y=calloc((size_t)n*4096,4);
  for(int kk=0;kk<3;kk++)for(int kn=0;kn<2;kn++){mg_matmul_fn f;mg_matmul_find(names[kn],&f);
    double fl=0,t0=now();int reps=0;
    while(now()-t0<0.3){for(int s=0;s<ns;s++){f(y,x,W[s],n,S[s].in,S[s].out,0,S[s].out,0);fl+=2.0*n*S[s].in*S[s].out;}reps++;}
    double seq=fl/(now()-t0)/1e9;
    /* hot: each shape repeated */
    double hf=0,ht=0;
    for(int s=0;s<ns;s+=(s==0?1:1)){double f2=0,t1=now();while(now()-t1<0.01){f(y,x,W[s],n,S[s].in,S[s].out,0,S[s].out,0);f2+=2.0*n*S[s].in*S[s].out;}ht+=now()-t1;hf+=f2;}
    printf("n=%d %s: sequence %.1f GFLOP/s, each hot %.1f GFLOP/s\n",n,names[kn],seq,hf/ht/1e9);}
  return 0;}
