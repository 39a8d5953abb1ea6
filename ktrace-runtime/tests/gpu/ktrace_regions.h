// Region table for probe.cu, in the form ktrace-build generates.
#ifndef KTRACE_REGIONS_H
#define KTRACE_REGIONS_H

#include "ktrace_layout.h"

namespace ktrace_regions {

__host__ __device__ constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

__host__ __device__ constexpr uint32_t lookup(const char* name) {
  return same_name(name, "outer")  ? 0u
         : same_name(name, "spin") ? 1u
         : same_name(name, "tick") ? 2u
                                   : KTRACE_REGION_UNKNOWN;
}

}  // namespace ktrace_regions

#endif  // KTRACE_REGIONS_H
