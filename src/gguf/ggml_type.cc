#include "gguf/ggml_type.h"

namespace pg {

const GgmlTypeInfo* GgmlTypeInfoFor(uint32_t type) {
  static const GgmlTypeInfo kF32{"F32", 1, 4, true};
  static const GgmlTypeInfo kF16{"F16", 1, 2, true};
  static const GgmlTypeInfo kQ4_0{"Q4_0", 32, 18, true};
  static const GgmlTypeInfo kQ4_1{"Q4_1", 32, 20, true};
  static const GgmlTypeInfo kQ5_0{"Q5_0", 32, 22, true};
  static const GgmlTypeInfo kQ5_1{"Q5_1", 32, 24, true};
  static const GgmlTypeInfo kQ8_0{"Q8_0", 32, 34, true};
  static const GgmlTypeInfo kQ8_1{"Q8_1", 32, 36, false};
  static const GgmlTypeInfo kQ2_K{"Q2_K", 256, 84, true};
  static const GgmlTypeInfo kQ3_K{"Q3_K", 256, 110, true};
  static const GgmlTypeInfo kQ4_K{"Q4_K", 256, 144, true};
  static const GgmlTypeInfo kQ5_K{"Q5_K", 256, 176, true};
  static const GgmlTypeInfo kQ6_K{"Q6_K", 256, 210, true};
  static const GgmlTypeInfo kQ8_K{"Q8_K", 256, 292, false};
  static const GgmlTypeInfo kIQ4_NL{"IQ4_NL", 32, 18, true};
  static const GgmlTypeInfo kIQ4_XS{"IQ4_XS", 256, 136, true};
  static const GgmlTypeInfo kMXFP4{"MXFP4", 32, 17, true};
  static const GgmlTypeInfo kNVFP4{"NVFP4", 64, 36, true};
  static const GgmlTypeInfo kFP8_E4M3{"FP8_E4M3", 64, 68, true};
  static const GgmlTypeInfo kI8{"I8", 1, 1, false};
  static const GgmlTypeInfo kI16{"I16", 1, 2, false};
  static const GgmlTypeInfo kI32{"I32", 1, 4, false};
  static const GgmlTypeInfo kI64{"I64", 1, 8, false};
  static const GgmlTypeInfo kF64{"F64", 1, 8, false};
  static const GgmlTypeInfo kBF16{"BF16", 1, 2, true};
  switch (type) {
    case 0: return &kF32;
    case 1: return &kF16;
    case 2: return &kQ4_0;
    case 3: return &kQ4_1;
    case 6: return &kQ5_0;
    case 7: return &kQ5_1;
    case 8: return &kQ8_0;
    case 9: return &kQ8_1;
    case 10: return &kQ2_K;
    case 11: return &kQ3_K;
    case 12: return &kQ4_K;
    case 13: return &kQ5_K;
    case 14: return &kQ6_K;
    case 15: return &kQ8_K;
    case 20: return &kIQ4_NL;
    case 23: return &kIQ4_XS;
    case 24: return &kI8;
    case 25: return &kI16;
    case 26: return &kI32;
    case 27: return &kI64;
    case 28: return &kF64;
    case 30: return &kBF16;
    case 39: return &kMXFP4;
    case 40: return &kNVFP4;
    case 1000: return &kFP8_E4M3;
    default: return nullptr;
  }
}

}  // namespace pg
