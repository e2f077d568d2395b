#pragma once
// Inner loops that should vectorise are compiled three times where the loader can choose at run
// time (x86-64 ELF: ifunc): for x86-64-v4 (AVX-512: 64-bit integer shifts, min/max and multiplies
// in one instruction each, which the output stage's 64-bit arithmetic needs; 2.2x faster there
// than AVX2, which emulates them), for AVX2, whose 16-lane integer operations they vectorise to,
// and for the baseline instruction set, which every x86-64 has. Elsewhere they are built once.

#if defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_ADDRESS__)
#define ETHOSU_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define ETHOSU_SIMD_CLONES
#endif
