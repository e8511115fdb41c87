// Kernels for internal/cuda's device tests; probe.ptx is built from this with
//   nvcc -ptx -arch=compute_80 -o probe.ptx probe.cu
extern "C" __global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// reverse writes out[i] = i for i < n through n floats of dynamic shared
// memory, in reverse: it needs n*4 bytes of dynamic shared memory.
extern "C" __global__ void reverse(float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = static_cast<float>(n - 1 - i);
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buf[n - 1 - i];
}
