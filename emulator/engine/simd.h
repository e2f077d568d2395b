#pragma once
// Inner loops that should vectorise are compiled twice where the loader can choose at run time
// (x86-64 ELF: ifunc): for AVX2, whose 16-lane integer operations they vectorise to, and for the
// baseline instruction set, which every x86-64 has. Elsewhere they are built once, for the target.

#if defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define ETHOSU_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ETHOSU_SIMD_CLONES
#endif
