// Work decomposition of the GEMM solutions: which output tile, which rows
// and which K range each unit of work covers. Host and device code alike
// (tests/solutions runs these very functions on the CPU against brute force),
// so the index math the kernels use is the index math that is tested.
//
// A unit is one BM×BN output tile and one K range (split-K) or the whole K.
// Persistent kernels walk units u = blockIdx.x, += gridDim.x; every role of a
// CTA (TMA producer, MMA consumers) derives the same job from u.
//
// Row spaces. Every operand is seen as a 2-D row-major matrix:
//   dense    A [M, K], C [M, N], B nt [N, K] / nn [K, N]
//   batched  A [L*M, K], C [L*M, N], B nt [L*N, K] / nn [L*K, N]
//   grouped  A [T, K], C [T, N], B nt [G*N, K]; group g owns rows
//            offsets[g] .. offsets[g+1]-1 of A and C
// A tile may read rows past its batch or group (they belong to the next one,
// or lie past the tensor and are zero-filled by TMA): their products land in
// accumulator rows or columns that are never stored. Columns past K are zero
// in A (TMA fills them), so rows of B read past K add nothing either.
#pragma once

#if defined(__CUDACC__)
#define GEMM_HD __host__ __device__ __forceinline__
#else
#define GEMM_HD inline
#endif

namespace gemm {

struct job {
  int row0;       // first row of the tile in the A/C row space
  int row_end;    // rows >= row_end are not stored (end of M, of the batch or the group)
  int b_row;      // nt: first row of the tile in B's row space; nn: first K row of B's batch
  int n0;         // first output column
  int kt_begin;   // K tiles [kt_begin, kt_end) of this unit
  int kt_end;
};

GEMM_HD int cdiv(int a, int b) { return (a + b - 1) / b; }
GEMM_HD int min_int(int a, int b) { return a < b ? a : b; }
GEMM_HD int max_int(int a, int b) { return a > b ? a : b; }

// Tile t of an m_blocks × n_blocks grid in grouped raster order: bands of
// group_m tile rows, walked column by column inside a band, so the CTAs that
// run together share a few A row blocks and B column blocks in L2.
// group_m <= 0: plain M-fastest order over the whole grid.
GEMM_HD void raster(int t, int m_blocks, int n_blocks, int group_m, int* mb, int* nb) {
  if (group_m <= 0 || group_m >= m_blocks) {
    *mb = t % m_blocks;
    *nb = t / m_blocks;
    return;
  }
  const int per_band = group_m * n_blocks;
  const int first_m = (t / per_band) * group_m;
  const int band_rows = min_int(m_blocks - first_m, group_m);
  const int local = t % per_band;
  *mb = first_m + local % band_rows;
  *nb = local / band_rows;
}

// K splits of a split-K GEMM: enough units to give each of `ctas` CTAs one,
// never more splits than K tiles (each split gets at least one).
GEMM_HD int split_count(int tiles, int k_tiles, int ctas) {
  return max_int(1, min_int(k_tiles, ctas / max_int(tiles, 1)));
}

// K tiles [begin, end) of split s out of `splits`, as even as integers allow.
GEMM_HD void split_range(int k_tiles, int splits, int s, int* begin, int* end) {
  *begin = int((long long)k_tiles * s / splits);
  *end = int((long long)k_tiles * (s + 1) / splits);
}

// Dense and batched problems. Units: batches × tiles × splits, split fastest.
struct dense_shape {
  int m, n, k;       // per batch
  int batches;       // 1 when not batched
  int bm, bn, bk;    // tile
  int group_m;       // raster band (see raster)
  int splits;        // 1 without split-K
  bool nn;           // B is [K, N]
};

GEMM_HD int dense_tiles(const dense_shape& s) { return cdiv(s.m, s.bm) * cdiv(s.n, s.bn); }
GEMM_HD int dense_units(const dense_shape& s) { return s.batches * dense_tiles(s) * s.splits; }

GEMM_HD job dense_job(const dense_shape& s, int unit) {
  const int m_blocks = cdiv(s.m, s.bm), n_blocks = cdiv(s.n, s.bn);
  const int split = unit % s.splits;
  const int tile = unit / s.splits;
  const int batch = tile / (m_blocks * n_blocks);
  int mb, nb;
  raster(tile % (m_blocks * n_blocks), m_blocks, n_blocks, s.group_m, &mb, &nb);
  job j;
  j.row0 = batch * s.m + mb * s.bm;
  j.row_end = batch * s.m + s.m;
  j.n0 = nb * s.bn;
  j.b_row = s.nn ? batch * s.k : batch * s.n + j.n0;
  split_range(cdiv(s.k, s.bk), s.splits, split, &j.kt_begin, &j.kt_end);
  return j;
}

// Grouped problems (nt). tile_prefix[g] is the number of tiles of groups
// before g (G+1 entries; computed by group_tile_prefix). Units: one per tile,
// group by group, M fastest inside a group.
struct grouped_shape {
  int groups, n, k;
  int bm, bn, bk;
};

GEMM_HD int group_tiles(const grouped_shape& s, int rows) { return cdiv(rows, s.bm) * cdiv(s.n, s.bn); }

// Serial prefix (the host test's reference; the kernel computes the same
// with a warp scan, see gemm_wgmma_tma.cu).
GEMM_HD void group_tile_prefix(const grouped_shape& s, const int* offsets, int* tile_prefix) {
  tile_prefix[0] = 0;
  for (int g = 0; g < s.groups; ++g)
    tile_prefix[g + 1] = tile_prefix[g] + group_tiles(s, offsets[g + 1] - offsets[g]);
}

// `group` is a cursor: the group of the previous unit of this CTA (units
// only grow), 0 at the start; it is advanced past groups that end before
// `unit` (empty groups end where they start and are skipped).
GEMM_HD job grouped_job(const grouped_shape& s, const int* offsets, const int* tile_prefix, int unit, int* group) {
  int g = *group;
  while (tile_prefix[g + 1] <= unit) ++g;
  *group = g;
  const int rows = offsets[g + 1] - offsets[g];
  const int m_blocks = cdiv(rows, s.bm);
  const int local = unit - tile_prefix[g];
  const int mb = local % m_blocks, nb = local / m_blocks;
  job j;
  j.row0 = offsets[g] + mb * s.bm;
  j.row_end = offsets[g + 1];
  j.n0 = nb * s.bn;
  j.b_row = g * s.n + j.n0;
  j.kt_begin = 0;
  j.kt_end = cdiv(s.k, s.bk);
  return j;
}

// Grouped problems launched one CTA per (m tile, n tile) instead of
// persistently: m tile t counts the m tiles of every group, group by group.
// Returns false when t lies past the last group's tiles (the grid is sized by
// an upper bound, cdiv(T, bm) + G, and CTAs past the end have no work).
GEMM_HD bool grouped_m_tile(const int* offsets, int groups, int bm, int t, int* group, int* mb) {
  for (int g = 0; g < groups; ++g) {
    const int tiles = cdiv(offsets[g + 1] - offsets[g], bm);
    if (t < tiles) {
      *group = g;
      *mb = t;
      return true;
    }
    t -= tiles;
  }
  return false;
}

}  // namespace gemm
