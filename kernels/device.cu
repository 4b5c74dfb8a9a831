/*
 * device.cu - whether a CUDA device is usable (mgk_device_count), for the extension's
 * mavgame.cuda_status() and the engine's device selection.  Its driver prints the answer.
 */
#include "common.cuh"

#include <stdio.h>

extern "C" int mgk_device_count(char *msg, size_t msglen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        snprintf(msg, msglen, "no usable CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        cudaGetLastError(); /* clear the sticky error */
        return 0;
    }
#if MGK_ON_GPU
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
        snprintf(msg, msglen, "%d CUDA device(s); device 0: %s, compute capability %d.%d, %.1f GiB", count, p.name,
                 p.major, p.minor, (double)p.totalGlobalMem / (1 << 30));
    else
#endif
        snprintf(msg, msglen, "%d CUDA device(s)", count);
    return count;
}

#ifdef MGK_MAIN
#include "driver.h"

int main()
{
    char msg[256];
    int n = mgk_device_count(msg, sizeof msg);
    std::printf("%s\n", msg);
    /* on the CPU harness there is never a device: the answer must say so */
    int fails = !MGK_ON_GPU && (n != 0 || std::strstr(msg, "no usable CUDA device") == nullptr);
    if (!fails)
        std::printf("ok device count %d\n", n);
    return drv::finish(fails);
}
#endif
