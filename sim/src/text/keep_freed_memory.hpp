#pragma once
// The libtorch plugin's malloc setting (no torch header here).

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace dyncheck::sim::text {

// Keep the memory of freed tensors in the process instead of giving it back to the kernel after every step.
// Called once by each plugin entry point (torch_lm_plugin.cpp, torch_hier_plugin.cpp) before it trains.
// A training step allocates and frees the same large tensors every time (the logits and their gradient are
// bptt x batch x vocabulary floats, 28 MB at vocabulary 10001). With glibc's defaults the freed heap top is
// trimmed (brk) and the next step touches fresh pages. Measured at the bench's vocabulary 10001, emsize 200,
// 1 layer (session 15, CPU time per step, load ~9): 19,100 page faults and 140-147 ms a step, against 375 faults
// and 112-121 ms with the settings below; Python PyTorch, with glibc's defaults, 8,700 faults and 125-134 ms
// (its heap top is trimmed less often: 2.7 brk calls a step against the C++ step's 5.1, strace). Given the same
// settings, Python's step takes 116 ms: the two run the same kernels, and this was the whole difference.
// Only speed changes: every tensor still comes from c10's 64-byte-aligned allocation, so the arithmetic and the
// numbers are the same (checked bit for bit, 1 and 2 parallel runs, and joma.real_text_entropy_drop_then_bounce
// at ci). Process-wide (glibc has no per-library setting) and set once, when the plugin first trains: chunks
// below 32 MiB (glibc's largest mmap threshold) come from the heap (dynamic threshold off), and at most 1 GiB of
// freed heap top stays mapped. Tensors of 32 MiB or more (vocabulary above ~12000 at bptt 35, batch 20) are
// still mmap'ed and faulted in every step.
// The Table 1 model (torch_hier_plugin.cpp), joma.hierarchy_learned_bottom_up at ci (load ~9): 1.70 million page
// faults and 29.1 CPU seconds (3.0 of them system) for the claim before, 23,900 and 25.0 (0.25 system) after, with
// the same numbers bit for bit.
inline void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace dyncheck::sim::text
