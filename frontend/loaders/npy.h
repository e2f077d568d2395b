#pragma once
// A strict reader for numpy .npy arrays (format versions 1.0, 2.0 and 3.0): the magic, the
// header dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} and the element
// bytes, whose size must match descr x shape exactly. Object arrays (pickles) are refused.
// And a writer of version 1.0 files, as numpy.save writes them.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/model.h"

namespace ethosu {

struct NpyArray {
    std::string descr;  // e.g. "<i8", "|S580"
    bool fortran_order = false;
    std::vector<uint64_t> shape;  // () for a scalar
    ByteReader elements;          // exactly the element bytes
};

// member: a reader over the whole .npy; name: for error messages ("cmd_data.npy").
NpyArray parse_npy(ByteReader member, const std::string& name);

// numpy's descr of a tensor element type ("|i1", "<f4"...); empty for a type numpy lacks.
std::string npy_descr(ElementType type);

// A shape as numpy prints it: "(1, 8)", "(5,)", "()".
std::string shape_tuple(std::span<const int64_t> shape);

// numpy's own limit on an array's dimensions (NPY_MAXDIMS before numpy 2): parse_npy refuses more,
// and npy_file's callers refuse to write more.
inline constexpr size_t kMaxNpyDimensions = 32;

// A .npy file (format 1.0, C order) holding `elements` as an array of descr and shape.
std::vector<uint8_t> npy_file(const std::string& descr, std::span<const int64_t> shape, std::span<const uint8_t> elements);

}  // namespace ethosu
