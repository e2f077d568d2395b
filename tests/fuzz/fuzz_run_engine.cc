// The engine and the timing model on the bundled example model whose command stream is the fuzz
// input (see run_harness.h), mutated by libFuzzer's byte-level mutators.

#include "tests/fuzz/run_harness.h"

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    ethosu::fuzz::seed_empty_corpus(*argc, *argv);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    ethosu::fuzz::run_example_with_stream(data, size);
    return 0;
}
