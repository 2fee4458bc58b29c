// Where a persistent GEMM's CTAs land (NOTES 81): one CTA per SM (384 threads, 218 KB of dynamic shared memory, as
// the 128 x 192 and 256 x 128 kernels), launched with no cluster attribute, with a cluster dimension of 1, and in
// clusters of 2, on grids of 118, 128 and 132. Each CTA records its SM (%smid); printed per launch: the SM of every
// CTA, and how often CTAs c and c + 1 (which take adjacent tiles: the same A block) sit on the same TPC (SMs 2t and
// 2t + 1, as numbered here) or within 8 SM ids. A cluster launch of size 1 ran dense GEMMs 0.2-1.0% slower than none;
// if it places adjacent CTAs farther apart, fewer of their same-line requests can merge before L2.
// Then which SMs share a GPC: a cluster's CTAs always sit in one GPC, so launches in clusters of 2 to 16 (one CTA per
// SM) join the SMs of each cluster; the groups that result are printed, and for each grid without the attribute
// the GPC of every CTA and how many GPCs the CTAs of each run of 8 consecutive indices span.
//   nvcc -O2 -arch=sm_90a -cudart static benchmarks/experiments/cta_placement.cu -o .clusterprobe/cta_placement
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void record_sm(int* sm_of_cta) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  unsigned int smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) sm_of_cta[blockIdx.x] = static_cast<int>(smid) + smem[0];
}

static void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

// An SM id as recorded, or 256 where the CTA recorded none (the buffer's fill): an index into gpc[] either way.
static int sm_or_none(int sm) { return sm >= 0 && sm < 256 ? sm : 256; }

static int find(int* parent, int x) { return parent[x] == x ? x : parent[x] = find(parent, parent[x]); }

// Joins the SMs that held one cluster, over launches in clusters of 2 to 16; returns the number of groups and sets
// gpc[sm] to a group number (SMs never seen in a cluster of 2 or more stay alone).
static int group_sms_by_cluster(int num_sms, int smem, int* d_sm, int* gpc) {
  int parent[256];
  for (int s = 0; s < 256; ++s) parent[s] = s;
  check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), "non-portable clusters");
  int sm[1024];
  for (int size : {2, 4, 8, 16}) {
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = size;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    config.gridDim = dim3(size);
    if (cudaOccupancyMaxActiveClusters(&clusters, record_sm, &config) != cudaSuccess || clusters == 0) {
      cudaGetLastError();
      std::printf("clusters of %d: none fit\n", size);
      continue;
    }
    const int grid = clusters * size;
    config.gridDim = dim3(grid);
    std::printf("clusters of %d: %d active at once (%d CTAs)\n", size, clusters, grid);
    for (int rep = 0; rep < 4; ++rep) {
      check(cudaMemset(d_sm, 0xFF, 1024 * sizeof(int)), "cudaMemset");
      check(cudaLaunchKernelEx(&config, record_sm, d_sm), "cudaLaunchKernelEx (clusters)");
      check(cudaDeviceSynchronize(), "kernel (clusters)");
      check(cudaMemcpy(sm, d_sm, grid * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
      for (int c = 0; c < grid; ++c)
        if (sm[c] >= 0 && sm[c] < num_sms && sm[c - c % size] >= 0 && sm[c - c % size] < num_sms)
          parent[find(parent, sm[c])] = find(parent, sm[c - c % size]);
    }
  }
  int label[256], groups = 0;
  for (int s = 0; s < num_sms; ++s) label[s] = -1;
  for (int s = 0; s < num_sms; ++s) {
    const int root = find(parent, s);
    if (label[root] < 0) label[root] = groups++;
    gpc[s] = label[root];
  }
  std::printf("%d groups of SMs (GPCs):", groups);
  for (int g = 0; g < groups; ++g) {
    int n = 0;
    for (int s = 0; s < num_sms; ++s) n += gpc[s] == g;
    std::printf(" %d", n);
  }
  std::printf("\n");
  for (int g = 0; g < groups; ++g) {
    std::printf("  GPC %d:", g);
    for (int s = 0; s < num_sms; ++s)
      if (gpc[s] == g) std::printf(" %d", s);
    std::printf("\n");
  }
  return groups;
}

int main() {
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int smem = 218112;
  check(cudaFuncSetAttribute(record_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "max dynamic smem");
  int* d_sm = nullptr;
  check(cudaMalloc(&d_sm, 1024 * sizeof(int)), "cudaMalloc");
  if (prop.multiProcessorCount > 256) {
    std::printf("more than 256 SMs: the tables here hold 256\n");
    return 2;
  }
  int gpc[257];  // -1: no group (an id past the SM count; gpc[256]: a CTA that recorded no SM, see sm_or_none)
  for (int& g : gpc) g = -1;
  group_sms_by_cluster(prop.multiProcessorCount, smem, d_sm, gpc);
  int sm[1024];
  for (int grid : {118, 128, 132}) {
    for (int mode = 0; mode < 3; ++mode) {  // 0: no attribute, 1: cluster dimension 1, 2: clusters of 2
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(grid);
      config.blockDim = dim3(384);
      config.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = mode == 2 ? 2 : 1;
      attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
      config.attrs = &attr;
      config.numAttrs = mode == 0 ? 0 : 1;
      for (int rep = 0; rep < 2; ++rep) {  // twice: is the placement the same from launch to launch?
        check(cudaMemset(d_sm, 0xFF, 256 * sizeof(int)), "cudaMemset");
        check(cudaLaunchKernelEx(&config, record_sm, d_sm), "cudaLaunchKernelEx");
        check(cudaDeviceSynchronize(), "kernel");
        check(cudaMemcpy(sm, d_sm, grid * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
        int same_tpc = 0, near = 0;
        for (int c = 0; c + 1 < grid; ++c) {
          same_tpc += sm[c] / 2 == sm[c + 1] / 2;
          near += std::abs(sm[c] - sm[c + 1]) <= 8;
        }
        std::printf("grid %d, %s, launch %d: adjacent CTAs on one TPC %d of %d, within 8 SM ids %d\n  SMs:", grid,
                    mode == 0 ? "no cluster attribute" : mode == 1 ? "cluster dimension 1" : "clusters of 2", rep,
                    same_tpc, grid - 1, near);
        for (int c = 0; c < grid; ++c) std::printf(" %d", sm[c]);
        std::printf("\n  GPCs:");
        for (int c = 0; c < grid; ++c) std::printf(" %d", gpc[sm_or_none(sm[c])]);
        int spans = 0, runs = 0;
        for (int c0 = 0; c0 + 8 <= grid; c0 += 8, ++runs) {
          unsigned long long seen = 0;  // up to 64 groups
          for (int c = c0; c < c0 + 8; ++c) {
            const int g = gpc[sm_or_none(sm[c])];
            seen |= g >= 0 && g < 64 ? 1ull << g : 0ull;
          }
          spans += __builtin_popcountll(seen);
        }
        std::printf("\n  runs of 8 consecutive CTAs span %.2f GPCs on average\n", double(spans) / runs);
      }
    }
  }
  return 0;
}
