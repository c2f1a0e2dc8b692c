#pragma once

// Symbols of libxp are hidden unless marked XP_API: the ABI is what the headers promise, no more.
#if defined(XP_BUILDING_LIBRARY)
#define XP_API __attribute__((visibility("default")))
#else
#define XP_API
#endif
