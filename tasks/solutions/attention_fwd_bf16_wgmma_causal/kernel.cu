// Attention forward, bf16, head dim 128, causal: the wgmma forward template
// (../templates/attention_fwd_wgmma.cu; design in ../templates/README.md) with
// ATTN_CAUSAL set (key j attends query i iff j <= i).
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
#define ATTN_CAUSAL 1
#include "../attention_fwd_bf16_wgmma/kernel.cu"
