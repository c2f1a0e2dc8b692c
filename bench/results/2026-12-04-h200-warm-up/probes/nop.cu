extern "C" __global__ void nop() {}
