# The fake CUDA driver and the tests that point XP_CUDA_DRIVER at it. Included from
# tests/CMakeLists.txt, so relative paths below are relative to tests/.

# libxp_fake_cuda.so: the driver entry points xp uses, answering as XP_FAKE_CUDA says.
add_library(xp_fake_cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cuda.cpp)
set_target_properties(xp_fake_cuda PROPERTIES
  OUTPUT_NAME xp_fake_cuda
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_link_libraries(xp_fake_cuda PRIVATE xp_flags)
target_link_options(xp_fake_cuda PRIVATE -Wl,--no-undefined)

# Each case runs `xp doctor --json` in a process of its own with the fault it names.
xp_add_test(test_fault_matrix SOURCES test_fault_matrix.cpp)

# In-process tests of the public API against two fake devices; ctest runs every case in a process
# of its own, so each starts with no detection cached.
xp_add_test(test_fake_device SOURCES test_fake_device.cpp)
target_link_libraries(test_fake_device PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
# Its environment is set by a ctest include file of its own, read after the one that
# gtest_discover_tests writes: a list passed through gtest_discover_tests' PROPERTIES (as
# xp_add_test's ENVIRONMENT does) is split again on its way to set_tests_properties, and every
# variable after the first is lost.
set(xp_fake_env "XP_CUDA_DRIVER=$<TARGET_FILE:xp_fake_cuda>;XP_FAKE_CUDA=devices=2")
# CUDA_VISIBLE_DEVICES, which the fake honours, is removed so that both fake devices are seen.
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/test_fake_device_env.cmake CONTENT
  "if(test_fake_device_TESTS)
  set_tests_properties(\${test_fake_device_TESTS} PROPERTIES
    ENVIRONMENT \"${xp_fake_env}\"
    ENVIRONMENT_MODIFICATION \"CUDA_VISIBLE_DEVICES=unset:\")
endif()
")
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/test_fake_device_env.cmake)
