#pragma once

// NumPy's .npy files, read and written on a plain description of an array (dtype, shape, bytes),
// for the array layer to wrap. The format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//
// Reading accepts format versions 1.0, 2.0 and 3.0. The header is a Python dict literal, parsed
// strictly but as Python would: the keys 'descr', 'fortran_order' and 'shape', each exactly once, in
// any order; single or double quotes; spaces, tabs and newlines between tokens; a trailing comma;
// any padding (NumPy pads to 64 bytes, old versions to 16). A shape is a tuple of non-negative
// integers: () for a scalar, (n,) for 1-D; versions 1.0 and 2.0 may carry Python 2's 'L' suffix.
// The descr is one of xp's dtypes in either byte order ('|b1', '|i1', '|u1', '<i2' ... '<u8',
// '<f2', '<f4', '<f8', their '>' forms, '=' or no marker for native); big-endian data is swapped
// to native order on read. Anything else is a FileError that names it ("'<c8' (complex64) is not
// an xp dtype"), as are a missing or unreadable file, a bad magic string, an unsupported version,
// a malformed header, object and structured arrays, a shape whose byte count overflows, a
// truncated data section (with the bytes expected and found) and bytes after the data.
//
// bfloat16. ml_dtypes' bfloat16 arrays are written by np.save with descr '<V2', a raw 2-byte void
// type: NumPy's header says nothing more, so such a file cannot be told apart from any other
// 2-byte void data and xp rejects '<V2' (and '|V2') with an error that says so. xp writes bfloat16
// with descr 'bfloat16' (little-endian data, xp's only byte order): np.load reads that as an
// ml_dtypes.bfloat16 array once ml_dtypes is imported (NumPy then resolves np.dtype('bfloat16')),
// and fails loudly without it rather than guessing. xp reads descr 'bfloat16' back as bfloat16.
// From NumPy, save bfloat16 for xp by writing that header (see tests/ref/npy_reference.py).
//
// Writing produces exactly what np.save produces for the same array (version 1.0, the header
// padded as NumPy 2 pads it; version 2.0 should the header not fit in 65,535 bytes, which needs
// more dimensions than the 64 that xp and NumPy allow). Writing a regular file is atomic: the bytes
// go to a temporary file in the target's folder, which is then renamed over the target, so a failed
// write leaves neither a partial file nor a temporary one, and an existing file stays as it was.
// The target is the end of any symbolic links (the links stay); character devices and FIFOs are
// written in place, folders, block devices and sockets refused (docs/semantics.md, "Files").
// (Atomic against failures of the write, not against power loss: there is no fsync, as np.save.)

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "xp/dtype.hpp"

namespace xp::detail {

// NumPy's limit on dimensions, and xp's.
constexpr std::size_t kNpyMaxDims = 64;

struct NpyArray {
  DType dtype = DType::float64;
  std::vector<std::int64_t> shape;  // () for a scalar
  // The layout of `data`: C order (row major) when false, Fortran order (column major) when true.
  bool fortran_order = false;
  // The elements in native (little-endian) byte order. bool bytes are 0 or 1 (a nonzero byte in
  // the file reads as 1, as NumPy's truth value of it).
  std::vector<std::byte> data;

  std::int64_t size() const noexcept;  // the number of elements (1 for a scalar)
  // Strides in bytes for `shape` in the layout of `data` (C or Fortran order).
  std::vector<std::int64_t> byte_strides() const;
};

// Reads a .npy file. Throws FileError (the path and the reason) for everything the file can get
// wrong, see above.
NpyArray read_npy(const std::string& path);

// Writes `data`, laid out in C order (or in Fortran order when `fortran_order`), in native byte
// order, as a .npy file. Throws ValueError for bad arguments (an empty path, a negative dimension,
// more than 64 dimensions, a byte count that overflows, null data with a nonzero byte count) and
// FileError when the file cannot be written; either way nothing is left behind at `path`.
void write_npy(const std::string& path, DType dtype, std::span<const std::int64_t> shape, const void* data,
               bool fortran_order = false);

// The descr xp writes for a dtype: '|b1', '|i1', '<i2', '<f4', 'bfloat16', ...
std::string npy_descr(DType dtype);

// The bytes before the data in a file write_npy writes: magic, version, header length, the header
// dict and its padding (a multiple of 64 bytes in all).
std::string npy_preamble(DType dtype, std::span<const std::int64_t> shape, bool fortran_order);

}  // namespace xp::detail
