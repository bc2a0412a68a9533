// Attention forward, bf16, head dim 128, causal: the non-causal solution's
// kernel with ATTN_CAUSAL set (key j attends query i iff j <= i). See
// ../attention_fwd_bf16_wgmma/kernel.cu for the design.
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
#define ATTN_CAUSAL 1
#include "../attention_fwd_bf16_wgmma/kernel.cu"
