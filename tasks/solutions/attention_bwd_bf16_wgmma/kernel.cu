// Attention backward, bf16, non-causal, head dim 128, for sm_90a: the wgmma
// backward template (../templates/attention_bwd_wgmma.cu; design in
// ../templates/README.md) at its defaults. kernel.ptx is checked in (stored
// evaluations and tests refer to it).
//
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -ptx kernel.cu
#define ATTN_HEAD_DIM 128
#define ATTN_CAUSAL 0
#include "../templates/attention_bwd_wgmma.cu"
