#pragma once

// Everything public in xp.
#include "xp/array.hpp"
#include "xp/buffer.hpp"
#include "xp/cache.hpp"
#include "xp/config.hpp"
#include "xp/device.hpp"
#include "xp/doctor.hpp"
#include "xp/dtype.hpp"
#include "xp/error.hpp"
#include "xp/interop.hpp"
#include "xp/memory.hpp"
#include "xp/precision.hpp"
#include "xp/program.hpp"
#include "xp/runtime.hpp"
#include "xp/sorting.hpp"
#include "xp/stream.hpp"
#include "xp/version.hpp"
