// How many clusters of 1, 2 and 4 CTAs an sm_90 GPU runs at once, one CTA per SM (384 threads, ~214 KB of dynamic
// shared memory, as the GEMM kernel's 256 x 128 tiles take): cudaOccupancyMaxActiveClusters. NOTES 79: a tail split
// over clusters of 4 needs its grid within what runs at once. Build here, run on the GPU machine:
//   nvcc -O2 -arch=sm_90a -cudart static benchmarks/experiments/cluster_occupancy.cu -o .clusterprobe/cluster_occupancy
#include <cstdio>
#include <cuda_runtime.h>

__global__ void probe_kernel(int* out) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
  if (out) out[blockIdx.x] = smem[threadIdx.x];
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 2;
  std::printf("# %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  const int smem_sizes[] = {219136, 203776};
  for (int smem : smem_sizes) {
    cudaError_t e = cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e != cudaSuccess) { std::printf("set smem: %s\n", cudaGetErrorString(e)); return 2; }
    e = cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    for (int size : {1, 2, 4, 8}) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(size * 64);
      config.blockDim = dim3(384);
      config.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr;
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = size;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      config.attrs = &attr;
      config.numAttrs = 1;
      int clusters = -1;
      e = cudaOccupancyMaxActiveClusters(&clusters, probe_kernel, &config);
      std::printf("smem %d B, clusters of %d: %d at once (%d CTAs)%s%s\n", smem, size, clusters, clusters * size,
                  e == cudaSuccess ? "" : " error: ", e == cudaSuccess ? "" : cudaGetErrorString(e));
    }
  }
  return 0;
}
