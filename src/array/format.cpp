// Printing arrays as NumPy 2 prints them. The structure follows numpy/_core/arrayprint.py
// (FloatingFormat, IntegerFormat, BoolFormat, _formatArray, array_repr, array_str) and the digits
// follow NumPy's Dragon4 (numpy/_core/src/multiarray/dragon4.c): shortest digits that round-trip in
// the value's own format (float16 included), with IEEE round-half-even boundaries, a cutoff, a
// minimum number of digits, and NumPy's trimming and padding. std::to_chars would be shorter to
// write but cannot give the half-precision digits, the cutoffs or the minimum digits NumPy asks for.
#include "array/format.hpp"
#include "array/shape_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace xp::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Unsigned big integers, just what Dragon4 needs (little-endian 32-bit words).
class BigInt {
 public:
  BigInt() = default;
  explicit BigInt(std::uint64_t v) {
    while (v != 0) {
      w_.push_back(static_cast<std::uint32_t>(v));
      v >>= 32;
    }
  }
  static BigInt pow2(int n) {
    BigInt b(1);
    b.shift_left(n);
    return b;
  }
  bool is_zero() const { return w_.empty(); }
  void shift_left(int n) {
    if (is_zero() || n == 0) return;
    const int words = n / 32, bits = n % 32;
    std::vector<std::uint32_t> r(w_.size() + static_cast<std::size_t>(words) + 1, 0);
    for (std::size_t i = 0; i < w_.size(); ++i) {
      const std::uint64_t v = static_cast<std::uint64_t>(w_[i]) << bits;
      r[i + static_cast<std::size_t>(words)] |= static_cast<std::uint32_t>(v);
      r[i + static_cast<std::size_t>(words) + 1] |= static_cast<std::uint32_t>(v >> 32);
    }
    w_ = std::move(r);
    trim();
  }
  void multiply(std::uint32_t m) {
    std::uint64_t carry = 0;
    for (auto& x : w_) {
      const std::uint64_t v = static_cast<std::uint64_t>(x) * m + carry;
      x = static_cast<std::uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) w_.push_back(static_cast<std::uint32_t>(carry));
    trim();
  }
  void multiply_pow10(int n) {
    for (; n >= 9; n -= 9) multiply(1000000000u);
    static constexpr std::uint32_t small[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (n > 0) multiply(small[n]);
  }
  void add(const BigInt& o) {
    if (o.w_.size() > w_.size()) w_.resize(o.w_.size(), 0);
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      const std::uint64_t v = static_cast<std::uint64_t>(w_[i]) + (i < o.w_.size() ? o.w_[i] : 0) + carry;
      w_[i] = static_cast<std::uint32_t>(v);
      carry = v >> 32;
    }
    if (carry != 0) w_.push_back(static_cast<std::uint32_t>(carry));
  }
  void subtract(const BigInt& o) {  // requires *this >= o
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      std::int64_t v = static_cast<std::int64_t>(w_[i]) - (i < o.w_.size() ? o.w_[i] : 0) - borrow;
      borrow = v < 0 ? 1 : 0;
      if (v < 0) v += std::int64_t{1} << 32;
      w_[i] = static_cast<std::uint32_t>(v);
    }
    trim();
  }
  friend int compare(const BigInt& a, const BigInt& b) {
    if (a.w_.size() != b.w_.size()) return a.w_.size() < b.w_.size() ? -1 : 1;
    for (std::size_t i = a.w_.size(); i-- > 0;)
      if (a.w_[i] != b.w_[i]) return a.w_[i] < b.w_[i] ? -1 : 1;
    return 0;
  }
  // *this = *this mod d, returning the quotient, which the caller guarantees is below 10.
  std::uint32_t divide_small_quotient(const BigInt& d) {
    std::uint32_t q = 0;
    while (compare(*this, d) >= 0) {
      subtract(d);
      ++q;
    }
    return q;
  }

 private:
  void trim() {
    while (!w_.empty() && w_.back() == 0) w_.pop_back();
  }
  std::vector<std::uint32_t> w_;
};

// A binary float split as NumPy's Dragon4 wants it: value = mantissa * 2^exponent.
struct FloatParts {
  std::uint64_t mantissa = 0;
  int exponent = 0;
  int mantissa_bit = 0;  // index of the highest set bit of mantissa
  bool unequal_margins = false;
  bool negative = false;
  bool nan = false;
  bool inf = false;
  bool finite() const { return !nan && !inf; }
};

FloatParts split_ieee(std::uint64_t bits, int mant_bits, int exp_bits) {
  FloatParts p;
  const std::uint64_t mant = bits & ((std::uint64_t{1} << mant_bits) - 1);
  const std::uint64_t exp_mask = (std::uint64_t{1} << exp_bits) - 1;
  const auto e = static_cast<int>((bits >> mant_bits) & exp_mask);
  const int bias = (1 << (exp_bits - 1)) - 1;
  p.negative = ((bits >> (mant_bits + exp_bits)) & 1) != 0;
  if (static_cast<std::uint64_t>(e) == exp_mask) {
    p.nan = mant != 0;
    p.inf = mant == 0;
    return p;
  }
  if (e != 0) {
    p.mantissa = (std::uint64_t{1} << mant_bits) | mant;
    p.exponent = e - bias - mant_bits;
    p.mantissa_bit = mant_bits;
    p.unequal_margins = e != 1 && mant == 0;
  } else {
    p.mantissa = mant;
    p.exponent = 1 - bias - mant_bits;
    p.mantissa_bit = mant == 0 ? 0 : 63 - __builtin_clzll(mant);
  }
  return p;
}

enum class Cutoff { total_length, fraction_length };
enum class Trim { keep, zeros, leave_one_zero, dot_and_zeros };  // NumPy's 'k', '.', '0', '-'

struct Digits {
  std::string digits;
  int exponent = 0;  // base-10 exponent of the first digit
};

// Dragon4 in NumPy's unique mode: digits until the value is identified among its neighbours (the
// boundaries count when the mantissa is even, as IEEE round-half-even reads them back), and at
// least down to the cutoff_min digit, at most down to the cutoff_max digit (-1: no limit).
Digits dragon4(const FloatParts& p, Cutoff mode, int cutoff_max, int cutoff_min) {
  Digits out;
  if (p.mantissa == 0) {
    out.digits = "0";
    return out;
  }
  const bool even = (p.mantissa & 1) == 0;
  BigInt value(p.mantissa), scale, margin_low;
  // The margins are half the distance to the neighbours; the high one is twice the low one at a
  // power of two. Everything is scaled by 2 (by 4 with unequal margins) to stay integral.
  const int extra = p.unequal_margins ? 2 : 1;
  if (p.exponent > 0) {
    value.shift_left(p.exponent + extra);
    scale = BigInt(std::uint64_t{1} << extra);
    margin_low = BigInt::pow2(p.exponent);
  } else {
    value.shift_left(extra);
    scale = BigInt::pow2(-p.exponent + extra);
    margin_low = BigInt(1);
  }
  auto margin_high = [&] {
    BigInt h = margin_low;
    if (p.unequal_margins) h.shift_left(1);
    return h;
  };

  const double log10_2 = 0.30102999566398119521373889472449;
  int k = static_cast<int>(std::ceil(static_cast<double>(p.mantissa_bit + p.exponent) * log10_2 - 0.69));
  if (cutoff_max >= 0 && mode == Cutoff::fraction_length && k <= -cutoff_max) k = -cutoff_max + 1;
  if (k > 0) {
    scale.multiply_pow10(k);
  } else if (k < 0) {
    value.multiply_pow10(-k);
    margin_low.multiply_pow10(-k);
  }
  if (compare(value, scale) >= 0) {
    ++k;
  } else {
    value.multiply(10);
    margin_low.multiply(10);
  }

  int cutoff_max_exp = k - 20000;  // NumPy's buffer bound, never reached in practice
  if (cutoff_max >= 0) {
    const int desired = mode == Cutoff::total_length ? k - cutoff_max : -cutoff_max;
    cutoff_max_exp = std::max(cutoff_max_exp, desired);
  }
  int cutoff_min_exp = k;
  if (cutoff_min >= 0) {
    const int desired = mode == Cutoff::total_length ? k - cutoff_min : -cutoff_min;
    cutoff_min_exp = std::min(cutoff_min_exp, desired);
  }
  out.exponent = k - 1;

  bool low = false, high = false;
  std::uint32_t digit = 0;
  for (;;) {
    --k;
    digit = value.divide_small_quotient(scale);
    BigInt value_high = value;
    value_high.add(margin_high());
    const int cl = compare(value, margin_low);
    low = even ? cl <= 0 : cl < 0;
    const int ch = compare(value_high, scale);
    high = even ? ch >= 0 : ch > 0;
    if (((low || high) && k <= cutoff_min_exp) || k == cutoff_max_exp) break;
    out.digits.push_back(static_cast<char>('0' + digit));
    value.multiply(10);
    margin_low.multiply(10);
  }

  bool round_down = low;
  if (low == high) {  // both neighbours are legal (or neither): round to the closer, ties to even
    value.shift_left(1);
    const int c = compare(value, scale);
    round_down = c < 0 || (c == 0 && (digit & 1) == 0);
  }
  if (round_down) {
    out.digits.push_back(static_cast<char>('0' + digit));
  } else if (digit == 9) {
    while (!out.digits.empty() && out.digits.back() == '9') out.digits.pop_back();
    if (out.digits.empty()) {
      out.digits = "1";
      out.exponent += 1;
    } else {
      out.digits.back() = static_cast<char>(out.digits.back() + 1);
    }
  } else {
    out.digits.push_back(static_cast<char>('0' + digit + 1));
  }
  return out;
}

std::string inf_nan(const FloatParts& p) {
  if (p.nan) return "nan";
  return p.negative ? "-inf" : "inf";
}

// NumPy's dragon4_positional (unique digits, no '+' sign).
std::string format_positional(const FloatParts& p, int precision, int min_digits, Trim trim, int pad_left,
                              int pad_right, Cutoff mode = Cutoff::fraction_length) {
  if (!p.finite()) return inf_nan(p);
  std::string s = p.negative ? "-" : "";
  const int has_sign = p.negative ? 1 : 0;
  const Digits d = dragon4(p, mode, precision, min_digits);
  const int num_digits = static_cast<int>(d.digits.size());
  int whole = 0, frac = 0;
  if (d.exponent >= 0) {
    whole = d.exponent + 1;
    if (num_digits <= whole) {
      s += d.digits + std::string(static_cast<std::size_t>(whole - num_digits), '0');
    } else {
      s += d.digits.substr(0, static_cast<std::size_t>(whole)) + "." + d.digits.substr(static_cast<std::size_t>(whole));
      frac = num_digits - whole;
    }
  } else {
    const int zeros = -(d.exponent + 1);
    s += "0." + std::string(static_cast<std::size_t>(zeros), '0') + d.digits;
    frac = zeros + num_digits;
    whole = 1;
  }
  if (trim != Trim::dot_and_zeros && frac == 0) s += '.';
  int desired = std::max(min_digits, 0);
  if (mode == Cutoff::total_length) desired = min_digits - whole;
  if (trim == Trim::leave_one_zero) {
    if (frac == 0) {
      s += '0';
      ++frac;
    }
  } else if (trim == Trim::keep && desired > frac) {
    s += std::string(static_cast<std::size_t>(desired - frac), '0');
    frac = desired;
  }
  if (trim != Trim::keep && frac > 0) {
    while (s.back() == '0') {
      s.pop_back();
      --frac;
    }
    if (s.back() == '.') {
      if (trim == Trim::leave_one_zero) {
        s += '0';
        ++frac;
      } else if (trim == Trim::dot_and_zeros) {
        s.pop_back();
      }
    }
  }
  if (pad_right >= frac) {
    if (trim == Trim::dot_and_zeros && frac == 0) s += ' ';
    s += std::string(static_cast<std::size_t>(pad_right - frac), ' ');
  }
  if (pad_left > whole + has_sign) s.insert(0, static_cast<std::size_t>(pad_left - whole - has_sign), ' ');
  return s;
}

// NumPy's dragon4_scientific (unique digits, no '+' sign).
std::string format_scientific(const FloatParts& p, int precision, int min_digits, Trim trim, int pad_left,
                              int exp_digits) {
  if (!p.finite()) return inf_nan(p);
  std::string s;
  const int left = p.negative ? 2 : 1;
  if (pad_left > left) s.assign(static_cast<std::size_t>(pad_left - left), ' ');
  if (p.negative) s += '-';
  const Digits d =
      dragon4(p, Cutoff::total_length, precision < 0 ? -1 : precision + 1, min_digits < 0 ? -1 : min_digits + 1);
  s += d.digits[0];
  int frac = static_cast<int>(d.digits.size()) - 1;
  if (frac > 0) s += "." + d.digits.substr(1);
  if (trim != Trim::dot_and_zeros && frac == 0) s += '.';
  const int add = std::max(min_digits, 0);
  if (trim == Trim::leave_one_zero) {
    if (frac == 0) {
      s += '0';
      ++frac;
    }
  } else if (trim == Trim::keep && add > frac) {
    s += std::string(static_cast<std::size_t>(add - frac), '0');
    frac = add;
  }
  if (trim != Trim::keep && frac > 0) {
    while (s.back() == '0') s.pop_back();
    if (trim == Trim::leave_one_zero && s.back() == '.') s += '0';
  }
  if (exp_digits > 5) exp_digits = 5;
  if (exp_digits < 0) exp_digits = 2;
  int e = d.exponent;
  s += e >= 0 ? "e+" : "e-";
  e = std::abs(e);
  std::string ed = std::to_string(e);
  if (static_cast<int>(ed.size()) < exp_digits) ed.insert(0, static_cast<std::size_t>(exp_digits) - ed.size(), '0');
  return s + ed;
}

// ---------------------------------------------------------------------------------------------
// Element access.

struct View {
  DType dtype;
  std::span<const std::int64_t> shape;
  const unsigned char* data;
  std::size_t item;
};

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

FloatParts float_parts(DType t, const unsigned char* p) {
  switch (t) {
    case DType::float16:
      return split_ieee(load<std::uint16_t>(p), 10, 5);
    case DType::float32:
      return split_ieee(load<std::uint32_t>(p), 23, 8);
    default:
      return split_ieee(load<std::uint64_t>(p), 52, 11);
  }
}

double float_value(DType t, const unsigned char* p) {
  switch (t) {
    case DType::float16:
      return half_bits_to_float(load<std::uint16_t>(p));
    case DType::bfloat16:
      return bfloat16_bits_to_float(load<std::uint16_t>(p));
    case DType::float32:
      return load<float>(p);
    default:
      return load<double>(p);
  }
}

std::string integer_text(DType t, const unsigned char* p) {
  switch (t) {
    case DType::int8:
      return std::to_string(load<std::int8_t>(p));
    case DType::int16:
      return std::to_string(load<std::int16_t>(p));
    case DType::int32:
      return std::to_string(load<std::int32_t>(p));
    case DType::int64:
      return std::to_string(load<std::int64_t>(p));
    case DType::uint8:
      return std::to_string(load<std::uint8_t>(p));
    case DType::uint16:
      return std::to_string(load<std::uint16_t>(p));
    case DType::uint32:
      return std::to_string(load<std::uint32_t>(p));
    default:
      return std::to_string(load<std::uint64_t>(p));
  }
}

// ml_dtypes prints a bfloat16 scalar as C++ `ostream << float` does (printf's %g, six digits), nan
// without its sign; its arrays print each element that way, unpadded.
std::string bfloat16_text(const unsigned char* p) {
  const double v = bfloat16_bits_to_float(load<std::uint16_t>(p));
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The str of a NumPy float scalar (a 0-d array's str): positional with at least one fractional
// digit for moderate magnitudes, else scientific.
std::string float_scalar_str(DType t, const unsigned char* p) {
  const FloatParts parts = float_parts(t, p);
  const double v = float_value(t, p);
  bool positional = false;
  if (std::isnan(v) || v == 0) {
    positional = true;
  } else {
    const long double a = std::fabs(static_cast<long double>(v));
    const long double max_positional = t == DType::float16 ? 1.e3L : t == DType::float32 ? 1.e6L : 1.e16L;
    positional = a < max_positional && a >= (t == DType::float16 ? static_cast<long double>(1.e-4) : 1.e-4L);
  }
  if (positional) return format_positional(parts, -1, -1, Trim::leave_one_zero, -1, -1, Cutoff::total_length);
  return format_scientific(parts, -1, -1, Trim::dot_and_zeros, -1, -1);
}

// ---------------------------------------------------------------------------------------------
// Element formatters, made from the elements that will be shown (NumPy's format functions).

using Formatter = std::function<std::string(const unsigned char*)>;

// NumPy's FloatingFormat with the default options (precision 8, floatmode 'maxprec', sign '-').
class FloatingFormat {
 public:
  FloatingFormat(DType t, const std::vector<const unsigned char*>& elems) : dtype_(t) {
    std::vector<FloatParts> finite;
    bool any_neg_inf = false;
    bool any_nonfinite = false;
    double max_val = 0, min_val = std::numeric_limits<double>::infinity();
    bool any_nonzero = false;
    for (const unsigned char* e : elems) {
      const FloatParts p = float_parts(t, e);
      if (!p.finite()) {
        any_nonfinite = true;
        any_neg_inf = any_neg_inf || (p.inf && p.negative);
        continue;
      }
      finite.push_back(p);
      const double a = std::fabs(float_value(t, e));
      if (a != 0) {
        any_nonzero = true;
        max_val = std::max(max_val, a);
        min_val = std::min(min_val, a);
      }
    }
    if (any_nonzero) {
      // NumPy compares in the array's own type (the Python constants are weak scalars).
      const double cutoff = t == DType::float16 ? 1.e3 : t == DType::float32 ? 1.e6 : 1.e8;
      double small = 1.e-4, ratio = max_val / min_val;
      if (t == DType::float16) {
        small = half_bits_to_float(float_to_half_bits(1.e-4f));
        ratio = half_bits_to_float(float_to_half_bits(static_cast<float>(max_val) / static_cast<float>(min_val)));
      } else if (t == DType::float32) {
        small = static_cast<float>(1.e-4);
        ratio = static_cast<float>(max_val) / static_cast<float>(min_val);
      }
      exp_format_ = max_val >= cutoff || min_val < small || ratio > 1000.;
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
      trim_ = Trim::zeros;
      exp_size_ = -1;
      min_digits_ = -1;
    } else if (exp_format_) {
      std::size_t int_len = 0, frac_len = 0, exp_len = 0;
      for (const FloatParts& p : finite) {
        const std::string s = format_scientific(p, precision_, -1, Trim::zeros, -1, -1);
        const std::size_t e = s.find('e'), dot = s.find('.');
        int_len = std::max(int_len, dot);
        frac_len = std::max(frac_len, e - dot - 1);
        exp_len = std::max(exp_len, s.size() - e - 1);
      }
      exp_size_ = static_cast<int>(exp_len) - 1;
      trim_ = Trim::keep;
      precision_ = min_digits_ = static_cast<int>(frac_len);
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      std::size_t int_len = 0, frac_len = 0;
      for (const FloatParts& p : finite) {
        const std::string s = format_positional(p, precision_, -1, Trim::zeros, -1, -1);
        const std::size_t dot = s.find('.');
        int_len = std::max(int_len, dot);
        frac_len = std::max(frac_len, s.size() - dot - 1);
      }
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = static_cast<int>(frac_len);
      exp_size_ = -1;
      trim_ = Trim::zeros;
      min_digits_ = 0;
    }
    if (any_nonfinite) {
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (any_neg_inf ? 1 : 0) - offset});
    }
  }

  std::string operator()(const unsigned char* e) const {
    const FloatParts p = float_parts(dtype_, e);
    if (!p.finite()) {
      const std::string r = inf_nan(p);
      const int width = pad_left_ + pad_right_ + 1;
      return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(r.size()))), ' ') + r;
    }
    if (exp_format_) return format_scientific(p, precision_, min_digits_, trim_, pad_left_, exp_size_);
    return format_positional(p, precision_, min_digits_, trim_, pad_left_, pad_right_);
  }

 private:
  DType dtype_;
  bool exp_format_ = false;
  int precision_ = 8;
  int min_digits_ = -1;
  Trim trim_ = Trim::zeros;
  int pad_left_ = 0, pad_right_ = 0, exp_size_ = -1;
};

// NumPy's ComplexFloatingFormat: the real parts formatted together, the imaginary parts together
// with a sign always shown ('+' also for NaN), then 'j', the padding of the imaginary text moved
// after the 'j'. The imaginary parts are formatted by their magnitudes (a copy, made once) and the
// sign put before the first digit, which is what NumPy's sign='+' mode prints.
class ComplexFormat {
 public:
  ComplexFormat(DType t, const std::vector<const unsigned char*>& elems)
      : part_(real_dtype(t)), half_(itemsize(t) / 2), re_(part_, elems), im_(part_, magnitudes(elems)) {}
  std::string operator()(const unsigned char* e) const {
    std::string r = re_(e);
    const unsigned char* ip = e + half_;
    const double im = float_value(part_, ip);
    unsigned char mag[8];
    store_abs(ip, mag);
    std::string i = im_(mag);
    const std::size_t first = i.find_first_not_of(' ');
    const char sign = !std::isnan(im) && std::signbit(im) ? '-' : '+';
    i.insert(first == std::string::npos ? 0 : first, 1, sign);
    const std::size_t end = i.find_last_not_of(' ') + 1;
    return r + i.substr(0, end) + "j" + i.substr(end);
  }

 private:
  void store_abs(const unsigned char* p, unsigned char* out) const {
    std::memcpy(out, p, half_);
    out[half_ - 1] &= 0x7F;  // the sign bit, the top bit of the last byte (little-endian)
  }
  std::vector<const unsigned char*> magnitudes(const std::vector<const unsigned char*>& elems) {
    mags_.resize(elems.size() * half_);
    std::vector<const unsigned char*> ptrs;
    ptrs.reserve(elems.size());
    for (std::size_t k = 0; k < elems.size(); ++k) {
      store_abs(elems[k] + half_, mags_.data() + k * half_);
      ptrs.push_back(mags_.data() + k * half_);
    }
    return ptrs;
  }
  DType part_;
  std::size_t half_;
  std::vector<unsigned char> mags_;  // before im_: filled while im_ is built
  FloatingFormat re_, im_;
};

// The str of a NumPy complex scalar, as Python's complex repr: "(1+2j)", "2j" where the real part
// is +0, each part as the float's shortest text without a trailing ".0".
std::string complex_scalar_str(DType t, const unsigned char* p) {
  const DType part = real_dtype(t);
  const std::size_t half = itemsize(t) / 2;
  auto text = [&](const unsigned char* q) {
    const double v = float_value(part, q);
    if (std::isnan(v)) return std::string("nan");
    if (std::isinf(v)) return std::string(v < 0 ? "-inf" : "inf");
    std::string s = float_scalar_str(part, q);
    if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
    return s;
  };
  const double re = float_value(part, p), im = float_value(part, p + half);
  std::string i = text(p + half);
  if (i[0] != '-') i.insert(0, 1, '+');
  if (re == 0 && !std::signbit(re)) return i.substr(i[0] == '+' ? 1 : 0) + "j";
  (void)im;
  return "(" + text(p) + i + "j)";
}

Formatter make_formatter(DType t, const std::vector<const unsigned char*>& elems, bool zero_d) {
  switch (kind(t)) {
    case DTypeKind::boolean: {
      const std::string true_text = zero_d ? "True" : " True";
      return [true_text](const unsigned char* e) { return *e != 0 ? true_text : std::string("False"); };
    }
    case DTypeKind::signed_integer:
    case DTypeKind::unsigned_integer: {
      std::size_t width = 0;
      for (const unsigned char* e : elems) width = std::max(width, integer_text(t, e).size());
      return [t, width](const unsigned char* e) {
        std::string s = integer_text(t, e);
        if (s.size() < width) s.insert(0, width - s.size(), ' ');
        return s;
      };
    }
    case DTypeKind::floating:
      if (t == DType::bfloat16) return [](const unsigned char* e) { return bfloat16_text(e); };
      return FloatingFormat(t, elems);
    case DTypeKind::complex_floating: {
      auto f = std::make_shared<ComplexFormat>(t, elems);
      return [f](const unsigned char* e) { return (*f)(e); };
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Layout: NumPy's _formatArray and _extendLine (legacy=False), one string per array.

constexpr std::int64_t kThreshold = 1000;
constexpr std::int64_t kEdgeItems = 3;
constexpr int kLineWidth = 75;

class Layout {
 public:
  Layout(const View& v, bool summarise) : v_(v), summarise_(summarise) {
    strides_.assign(v.shape.size(), 1);
    for (std::size_t i = v.shape.size(); i-- > 1;) strides_[i - 1] = strides_[i] * v.shape[i];
  }

  // The elements shown, in order (NumPy's _leading_trailing).
  void collect(std::size_t axis, std::int64_t offset, std::vector<const unsigned char*>& out) const {
    if (axis == v_.shape.size()) {
      out.push_back(v_.data + static_cast<std::size_t>(offset) * v_.item);
      return;
    }
    const std::int64_t n = v_.shape[axis];
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarised(n) && i == kEdgeItems) i = n - kEdgeItems;
      collect(axis + 1, offset + i * strides_[axis], out);
    }
  }

  std::string format(const Formatter& f, const std::string& separator, int line_width,
                     const std::string& next_line_prefix) const {
    return recurse(f, separator, 0, 0, next_line_prefix, line_width);
  }

 private:
  bool summarised(std::int64_t n) const { return summarise_ && 2 * kEdgeItems < n; }

  static void extend_line(std::string& s, std::string& line, const std::string& word, int line_width,
                          const std::string& next_line_prefix) {
    bool needs_wrap = line.size() + word.size() > static_cast<std::size_t>(line_width);
    if (line.size() <= next_line_prefix.size()) needs_wrap = false;
    if (needs_wrap) {
      std::size_t end = line.find_last_not_of(" \t\n");
      s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
      line = next_line_prefix;
    }
    line += word;
  }

  std::string recurse(const Formatter& f, const std::string& sep, std::size_t axis, std::int64_t offset,
                      const std::string& hanging_indent, int curr_width) const {
    if (axis == v_.shape.size()) return f(v_.data + static_cast<std::size_t>(offset) * v_.item);
    const std::string next_hanging_indent = hanging_indent + " ";
    const int next_width = curr_width - 1;
    const std::int64_t n = v_.shape[axis];
    const bool show_summary = summarised(n);
    const std::int64_t leading = show_summary ? kEdgeItems : 0;
    const std::int64_t trailing = show_summary ? kEdgeItems : n;
    const std::size_t axes_left = v_.shape.size() - axis;
    auto child = [&](std::int64_t i) {
      return recurse(f, sep, axis + 1, offset + i * strides_[axis], next_hanging_indent, next_width);
    };
    std::string sep_rstrip = sep;
    while (!sep_rstrip.empty() && sep_rstrip.back() == ' ') sep_rstrip.pop_back();

    std::string s;
    if (axes_left == 1) {
      const int elem_width = curr_width - std::max(static_cast<int>(sep_rstrip.size()), 1);
      std::string line = hanging_indent;
      for (std::int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), elem_width, hanging_indent);
        line += sep;
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging_indent);
        line += sep;
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(n - i), elem_width, hanging_indent);
        line += sep;
      }
      extend_line(s, line, child(n - 1), elem_width, hanging_indent);
      s += line;
    } else {
      const std::string line_sep = sep_rstrip + std::string(axes_left - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i) s += hanging_indent + child(i) + line_sep;
      if (show_summary) s += hanging_indent + "..." + line_sep;
      for (std::int64_t i = trailing; i > 1; --i) s += hanging_indent + child(n - i) + line_sep;
      s += hanging_indent + child(n - 1);
    }
    return "[" + s.substr(hanging_indent.size()) + "]";
  }

  const View& v_;
  bool summarise_;
  std::vector<std::int64_t> strides_;
};

std::int64_t element_count(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// NumPy's array2string with default options; `prefix` is "array(" for repr.
std::string array2string(const View& v, const std::string& separator, const std::string& prefix, int line_width) {
  const std::int64_t size = element_count(v.shape);
  if (size == 0) return "[]";
  const Layout layout(v, size > kThreshold);
  std::vector<const unsigned char*> shown;
  layout.collect(0, 0, shown);
  const Formatter f = make_formatter(v.dtype, shown, v.shape.empty());
  return layout.format(f, separator, line_width, std::string(prefix.size() + 1, ' '));
}

}  // namespace

std::string format_repr(DType dtype, std::span<const std::int64_t> shape, const void* data) {
  const View v{dtype, shape, static_cast<const unsigned char*>(data), itemsize(dtype)};
  const std::string prefix = "array(";
  const std::string body = array2string(v, ", ", prefix, kLineWidth - 1);
  const std::int64_t size = element_count(shape);

  std::vector<std::string> extras;
  if ((size == 0 && !(shape.size() == 1 && shape[0] == 0)) || size > kThreshold)
    extras.push_back("shape=" + shape_str(shape));
  const bool implied =
      dtype == DType::float64 || dtype == DType::int64 || dtype == DType::bool_ || dtype == DType::complex128;
  if (!implied || size == 0) {
    extras.push_back(std::string("dtype=") +
                     (dtype == DType::bfloat16 ? std::string("dtype(bfloat16)") : std::string(name(dtype))));
  }
  if (extras.empty()) return prefix + body + ")";

  const std::string arr = prefix + body + ",";
  std::string extra;
  for (std::size_t i = 0; i < extras.size(); ++i) extra += (i > 0 ? ", " : "") + extras[i];
  extra += ")";
  const std::size_t nl = arr.rfind('\n');
  const std::size_t last_line = arr.size() - (nl == std::string::npos ? 0 : nl + 1);
  const std::string spacer = last_line + extra.size() + 1 > static_cast<std::size_t>(kLineWidth)
                                 ? "\n" + std::string(prefix.size(), ' ')
                                 : " ";
  return arr + spacer + extra;
}

std::string format_str(DType dtype, std::span<const std::int64_t> shape, const void* data) {
  const View v{dtype, shape, static_cast<const unsigned char*>(data), itemsize(dtype)};
  if (shape.empty()) {  // a 0-d array prints as its scalar
    switch (kind(dtype)) {
      case DTypeKind::boolean:
        return *v.data != 0 ? "True" : "False";
      case DTypeKind::signed_integer:
      case DTypeKind::unsigned_integer:
        return integer_text(dtype, v.data);
      case DTypeKind::floating:
        return dtype == DType::bfloat16 ? bfloat16_text(v.data) : float_scalar_str(dtype, v.data);
      case DTypeKind::complex_floating:
        return complex_scalar_str(dtype, v.data);
    }
  }
  return array2string(v, " ", "", kLineWidth);
}

}  // namespace xp::detail
