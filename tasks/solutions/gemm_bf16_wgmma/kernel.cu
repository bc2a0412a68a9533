// GEMM bf16 with wgmma: the gemm_bf16_wgmma_tma solution (TMA loads are
// allowed here, and wgmma carries the math). See ../gemm_bf16_wgmma_tma/kernel.cu.
#include "../gemm_bf16_wgmma_tma/kernel.cu"
