// The translation unit of xp_test_pch (tests/CMakeLists.txt), whose precompiled header the test
// programs reuse.
