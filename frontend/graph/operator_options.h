#pragma once
// A CPU kernel's builtin options: the TFLite options table its operator carries, which the
// kernel's own code reads into its own options struct (ops_*.cc). As TFLM's parsers do, a kernel
// whose operator carries no table, or one of another type, takes the table's defaults.

#include "frontend/graph/cpu_operator.h"
#include "frontend/loaders/vela_tflite_generated.h"

namespace ethosu {

// The operator's options table of type T (tflite::Conv2DOptionsT, ...), else T's defaults.
template <class T>
T builtin_options(const OperatorView& v) {
    const tflite::BuiltinOptionsUnion* options = v.op.builtin_options.get();
    if (options && options->type == tflite::BuiltinOptionsUnionTraits<T>::enum_value && options->value)
        return *static_cast<const T*>(options->value);
    return T{};
}

}  // namespace ethosu
