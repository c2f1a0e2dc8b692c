#pragma once

// Everything public in xp.
#include "xp/config.hpp"
#include "xp/device.hpp"
#include "xp/error.hpp"
#include "xp/runtime.hpp"
#include "xp/version.hpp"
