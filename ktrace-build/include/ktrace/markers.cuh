// ktrace device header, part of ktrace.cuh (include that, not this): the
// markers (KTRACE_OPEN, KTRACE_B, KTRACE_SCOPE ...), which record through
// the chosen recorder's Context in the traced build and expand to nothing
// in the untraced one.
#ifndef KTRACE_MARKERS_CUH
#define KTRACE_MARKERS_CUH

#ifndef KTRACE_CUH
#error "ktrace: include <ktrace.cuh>, not ktrace/markers.cuh"
#endif

#if KTRACE_ON

namespace ktrace {

/// Records one event, `tag` (`region | type << 16`), with a 32-bit value,
/// with any recorder: the event, then a value entry (KTRACE_EVENT_VALUE)
/// holding the value and the event's region, in one asm block with one
/// skip branch: a value site of a warp that records nothing runs one
/// instruction, as any other marker.
template <class Ctx>
__device__ __forceinline__ void record_value(Ctx& ctx, uint32_t tag, uint32_t value) {
  ctx.record_value(tag, (tag & 0xffffu) | (KTRACE_EVENT_VALUE << layout::kTypeShift), value);
}

/// Ends a region when it goes out of scope (KTRACE_SCOPE), on any context
/// (a recorder's Context, or Idle in a dispatched body).
template <class Ctx>
class Scope {
 public:
  __device__ __forceinline__ Scope(Ctx& ctx, uint32_t region) : ctx_(ctx), region_(region) {
    ctx_.record(region_ | (KTRACE_EVENT_BEGIN << layout::kTypeShift));
  }
  __device__ __forceinline__ ~Scope() { ctx_.record(region_ | (KTRACE_EVENT_END << layout::kTypeShift)); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Ctx& ctx_;
  uint32_t region_;
};

}  // namespace ktrace

// The region id of a string literal, checked at compile time.
#define KTRACE_ID_(var, name)                                                      \
  constexpr uint32_t var = ::ktrace_regions::lookup(name);                         \
  static_assert(var != KTRACE_REGION_UNKNOWN,                                      \
                "ktrace: region " #name " is not in the region table; "            \
                "ktrace-build scans the sources given to Build::kernel_dir/kernel "  \
                "and found no marker with this name (a marker in a header outside "  \
                "them: add its directory with Build::scan_dir)")

#define KTRACE_REC_(name, type)                          \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    ktrace_ctx.record(ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift)); \
  } while (0)
#define KTRACE_REC_IF_(cond, name, type)                 \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    if (cond) ktrace_ctx.record(ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift)); \
  } while (0)

#define KTRACE_REC_V_(name, type, value)                 \
  do {                                                   \
    KTRACE_ID_(ktrace_id_, name);                        \
    ::ktrace::record_value(ktrace_ctx, ktrace_id_ | ((type) << ::ktrace::layout::kTypeShift), \
                            static_cast<uint32_t>(value));                          \
  } while (0)

/// Opens the calling warp's context, named `ktrace_ctx`, from a `ktrace_arg`.
#define KTRACE_OPEN(arg) ::ktrace::Context ktrace_ctx(arg)
/// Writes the closing timers and count now (the destructor does it otherwise).
#define KTRACE_FLUSH() ktrace_ctx.flush()
/// Begin, end and mark (instant) events of the region `name`.
#define KTRACE_B(name) KTRACE_REC_(name, KTRACE_EVENT_BEGIN)
#define KTRACE_E(name) KTRACE_REC_(name, KTRACE_EVENT_END)
#define KTRACE_M(name) KTRACE_REC_(name, KTRACE_EVENT_MARK)
/// The same, recorded only when the warp-uniform `cond` holds.
#define KTRACE_B_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_BEGIN)
#define KTRACE_E_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_END)
#define KTRACE_M_IF(cond, name) KTRACE_REC_IF_(cond, name, KTRACE_EVENT_MARK)
/// Begins `name` now and ends it when the enclosing scope closes.
/// Begin, end and mark events of `name` that record a 32-bit value with
/// the event (a tile index, a stage, a queue depth; converted to uint32_t).
/// The value must be warp-uniform, as the markers are; it is not evaluated
/// when tracing is compiled out.
#define KTRACE_B_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_BEGIN, value)
#define KTRACE_E_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_END, value)
#define KTRACE_M_V(name, value) KTRACE_REC_V_(name, KTRACE_EVENT_MARK, value)
#define KTRACE_SCOPE(name)                                          \
  KTRACE_ID_(KTRACE_CAT(ktrace_scope_id_, __LINE__), name);         \
  ::ktrace::Scope KTRACE_CAT(ktrace_scope_, __LINE__)(ktrace_ctx,   \
                                                      KTRACE_CAT(ktrace_scope_id_, __LINE__))

#else

#define KTRACE_OPEN(arg) ::ktrace::Context ktrace_ctx(arg)
#define KTRACE_FLUSH() ((void)0)
#define KTRACE_B(name) ((void)0)
#define KTRACE_E(name) ((void)0)
#define KTRACE_M(name) ((void)0)
#define KTRACE_B_IF(cond, name) ((void)0)
#define KTRACE_E_IF(cond, name) ((void)0)
#define KTRACE_M_IF(cond, name) ((void)0)
#define KTRACE_B_V(name, value) ((void)0)
#define KTRACE_E_V(name, value) ((void)0)
#define KTRACE_M_V(name, value) ((void)0)
#define KTRACE_SCOPE(name) ((void)0)

#endif  // KTRACE_ON

/// Runs the statement `...` (a call of the kernel's body, which names the
/// context `ktrace_ctx`) once per thread, with the block's choice of
/// context: the recorder's when any warp of the block records, else one
/// whose markers are empty (ktrace::dispatch). Untraced, the call alone.
/// Called by every thread of the block at the kernel's top level:
///
///   KTRACE_DISPATCH(trace, body<128>(x, n, ktrace_ctx));
#define KTRACE_DISPATCH(arg, ...) \
  ::ktrace::dispatch((arg), [&](auto& ktrace_ctx) { __VA_ARGS__; })

/// Markers in a `__device__` helper: the helper takes the caller's context
/// as a parameter, `KTRACE_CTX_PARAM`, and the caller passes `KTRACE_CTX`:
///
///   __device__ void load(float* x, KTRACE_CTX_PARAM) { KTRACE_B("load"); ... }
///   ... KTRACE_OPEN(trace); load(x, KTRACE_CTX); ...
///
/// The context is an empty object when tracing is off. A helper called
/// from a dispatched body (KTRACE_DISPATCH) is given either context: make
/// it a template, `template <class Trace> __device__ void load(float* x,
/// Trace& ktrace_ctx)`.
#define KTRACE_CTX_PARAM ::ktrace::Context& ktrace_ctx
#define KTRACE_CTX ktrace_ctx

#endif  // KTRACE_MARKERS_CUH
