// Attention forward, bf16, non-causal, head dim 128, for sm_90a: the wgmma
// forward template (../templates/attention_fwd_wgmma.cu; design in
// ../templates/README.md) with exact 128-row tiles and 2-D tensor maps.
// kernel.ptx is checked in (stored evaluations and tests refer to it).
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
#define ATTN_HEAD_DIM 128
#ifndef ATTN_CAUSAL
#define ATTN_CAUSAL 0
#endif
#include "../templates/attention_fwd_wgmma.cu"
