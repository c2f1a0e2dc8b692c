// The exact conversions between float32 and float16 / bfloat16 (their bits in a u16), rounding to
// nearest even and keeping NaNs quiet, in integer operations only (no cuda_fp16.h): the same bits as
// xp::float16 and xp::bfloat16 on the host (docs/semantics.md). After types.cuh.
// ---- float16 and bfloat16 (bits in a u16) ----
XP_D float xp_f16_to_f32(u16 h) {
  const u32 sign = ((u32)h & 0x8000u) << 16;
  const u32 o = ((u32)h & 0x7FFFu) << 13;
  const u32 e = o & 0x0F800000u;
  u32 r;
  if (e == 0x0F800000u) {
    r = (o + 0x70000000u) | ((o & 0x7FFFFFu) != 0 ? 0x400000u : 0u);  // inf, quiet NaN
  } else if (e == 0) {
    // m * 2^-24 = (2^-14 + m * 2^-24) - 2^-14, exact
    r = __float_as_uint(__fsub_rn(__uint_as_float(o + 0x38800000u), __uint_as_float(0x38800000u)));
  } else {
    r = o + 0x38000000u;
  }
  return __uint_as_float(r | sign);
}
XP_D u16 xp_f32_to_f16(float f) {
  const u32 x = __float_as_uint(f);
  const u32 sign = (x >> 16) & 0x8000u;
  const u32 ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return (u16)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));  // quiet NaN
  if (ax >= 0x477FF000u) return (u16)(sign | 0x7C00u);                         // from 65520: inf
  if (ax >= 0x38800000u) {
    const u32 v = ax - 0x38000000u;
    return (u16)(sign | ((v + 0x0FFFu + ((v >> 13) & 1u)) >> 13));
  }
  // Below 2^-14: units of 2^-24, to nearest even (2^-25 itself rounds to 0).
  const u32 e = ax >> 23;
  if (e < 102u) return (u16)sign;
  const u32 m = (ax & 0x7FFFFFu) | 0x800000u;
  const u32 shift = 126u - e;  // 14 .. 24
  u32 q = m >> shift;
  const u32 rem = m & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u) != 0)) ++q;  // may carry into the smallest normal
  return (u16)(sign | q);
}
XP_D float xp_bf16_to_f32(u16 h) {
  const u32 x = (u32)h << 16;
  return __uint_as_float((x & 0x7FFFFFFFu) > 0x7F800000u ? (x | 0x400000u) : x);
}
XP_D u16 xp_f32_to_bf16(float f) {
  const u32 x = __float_as_uint(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (u16)((x >> 16) | 0x40u);
  return (u16)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
