#pragma once
// A strict reader for numpy .npy arrays (format versions 1.0, 2.0 and 3.0): the magic, the
// header dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} and the element
// bytes, whose size must match descr x shape exactly. Object arrays (pickles) are refused.

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/loaders/byte_reader.h"

namespace ethosu {

struct NpyArray {
    std::string descr;  // e.g. "<i8", "|S580"
    bool fortran_order = false;
    std::vector<uint64_t> shape;  // () for a scalar
    ByteReader elements;          // exactly the element bytes
};

// member: a reader over the whole .npy; name: for error messages ("cmd_data.npy").
NpyArray parse_npy(ByteReader member, const std::string& name);

}  // namespace ethosu
