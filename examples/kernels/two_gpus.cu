// Ping-pong between two GPUs through peer memory, for checking that traces
// of two GPUs merged on one timeline keep cause before effect.
//
// One warp per GPU. Each GPU has an inbox (a u32 in its own memory) and a
// pointer to the other's. Round r (from base + 1 to base + rounds):
//   role 0 (ping): mark "ping sent", write r to the peer's inbox, wait until
//                  its own inbox holds r, mark "pong seen";
//   role 1 (pong): wait until its own inbox holds r, mark "ping seen", mark
//                  "pong sent", write r to the peer's inbox.
// A "sent" mark is recorded before the write and a "seen" mark after the
// read that saw it, so on a correct timeline every "seen" lies after its
// "sent". Values only grow from launch to launch (base), so the inboxes
// need no reset between launches. A wait of more than a second gives up
// and sets *status to 1.
#include <ktrace.cuh>

__device__ __forceinline__ uint64_t tg_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

__device__ __forceinline__ unsigned tg_load(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void tg_store(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Lane 0 waits until *p holds at least v; the warp learns whether it did
// within a second.
__device__ __forceinline__ bool tg_wait(const unsigned* p, unsigned v) {
  bool ok = true;
  if (threadIdx.x == 0) {
    const uint64_t t0 = tg_now();
    while (tg_load(p) < v) {
      if (tg_now() - t0 > 1000000000ull) {
        ok = false;
        break;
      }
    }
  }
  return __shfl_sync(0xffffffffu, ok, 0);
}

extern "C" __global__ void __launch_bounds__(32)
    two_gpus(unsigned* inbox, unsigned* peer_inbox, unsigned role, unsigned base,
             unsigned rounds, unsigned* status, ktrace_arg trace) {
  KTRACE_OPEN(trace);
  const bool leader = threadIdx.x == 0;
  for (unsigned r = base + 1; r <= base + rounds; ++r) {
    if (role == 0) {
      KTRACE_M("ping sent");
      if (leader) tg_store(peer_inbox, r);
      __syncwarp();
      if (!tg_wait(inbox, r)) {
        if (leader) *status = 1;
        return;
      }
      KTRACE_M("pong seen");
    } else {
      if (!tg_wait(inbox, r)) {
        if (leader) *status = 1;
        return;
      }
      KTRACE_M("ping seen");
      KTRACE_M("pong sent");
      if (leader) tg_store(peer_inbox, r);
      __syncwarp();
    }
  }
}
