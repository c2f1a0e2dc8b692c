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

# libxp_fake_cublas.so: the cuBLAS entry points xp resolves, for tests on hollow devices (no GEMM
# runs; XP_FAKE_CUBLAS_FAIL makes one call fail): see fake_cublas.cpp.
add_library(xp_fake_cublas SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_cublas.cpp)
set_target_properties(xp_fake_cublas PROPERTIES
  OUTPUT_NAME xp_fake_cublas
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON)
target_link_libraries(xp_fake_cublas PRIVATE xp_flags)
target_link_options(xp_fake_cublas PRIVATE -Wl,--no-undefined)

# libxp_fake_cusolver.so and libxp_fake_cufft.so: the cuSOLVER and cuFFT entry points xp resolves,
# recording their calls (nothing is computed): see fake_cusolver.cpp and fake_cufft.cpp.
foreach(lib cusolver cufft nvtx)
  add_library(xp_fake_${lib} SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_${lib}.cpp)
  set_target_properties(xp_fake_${lib} PROPERTIES
    OUTPUT_NAME xp_fake_${lib}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(xp_fake_${lib} PRIVATE xp_flags)
  target_link_options(xp_fake_${lib} PRIVATE -Wl,--no-undefined)
endforeach()

# Each case runs `xp doctor --json` in a process of its own with the fault it names.
xp_add_test(test_fault_matrix SOURCES test_fault_matrix.cpp)

# xp_fake_driver_env(target spec): every test of `target` runs with XP_CUDA_DRIVER pointing at the
# fake and XP_FAKE_CUDA=spec, with CUDA_VISIBLE_DEVICES removed so that every fake device is seen.
# The environment is set by a ctest include file of the target's own, read after the one that
# gtest_discover_tests writes: a list passed through gtest_discover_tests' PROPERTIES (as
# xp_add_test's ENVIRONMENT does) is split again on its way to set_tests_properties, and every
# variable after the first is lost.
function(xp_fake_driver_env target spec)
  set(env "XP_CUDA_DRIVER=$<TARGET_FILE:xp_fake_cuda>;XP_FAKE_CUDA=${spec}")
  file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${target}_env.cmake CONTENT
    "if(${target}_TESTS)
  set_tests_properties(\${${target}_TESTS} PROPERTIES
    ENVIRONMENT \"${env}\"
    ENVIRONMENT_MODIFICATION \"CUDA_VISIBLE_DEVICES=unset:\")
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/${target}_env.cmake)
endfunction()

# In-process tests of the public API against two fake devices; ctest runs every case in a process
# of its own, so each starts with no detection cached.
xp_add_test(test_fake_device SOURCES test_fake_device.cpp)
target_link_libraries(test_fake_device PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
xp_fake_driver_env(test_fake_device "devices=2")

# The CUDA backend end to end on two hollow fake devices of 1 GiB: kernels compiled by NVRTC,
# loaded and launched through the fake, none run (what is compiled, launched and allocated).
xp_add_test(test_hollow_gpu SOURCES test_hollow_gpu.cpp)
target_link_libraries(test_hollow_gpu PRIVATE ${CMAKE_DL_LIBS})
target_compile_definitions(test_hollow_gpu PRIVATE XP_FAKE_CUBLAS_PATH="$<TARGET_FILE:xp_fake_cublas>")
add_dependencies(test_hollow_gpu xp_fake_cublas)
xp_fake_driver_env(test_hollow_gpu "devices=2,hollow,memory=1073741824")

# The preload of recently used kernels, on the same hollow devices (white box: it reads the report).
xp_add_test(test_streams SOURCES test_streams.cpp)
target_link_libraries(test_streams PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
xp_fake_driver_env(test_streams "devices=2,hollow,memory=1073741824")

xp_add_test(test_nvtx SOURCES test_nvtx.cpp)
target_link_libraries(test_nvtx PRIVATE ${CMAKE_DL_LIBS})
target_compile_definitions(test_nvtx PRIVATE XP_FAKE_NVTX_PATH="$<TARGET_FILE:xp_fake_nvtx>")
add_dependencies(test_nvtx xp_fake_nvtx)
xp_fake_driver_env(test_nvtx "devices=1,hollow,memory=1073741824")

xp_add_test(test_kernel_preload WHITEBOX SOURCES test_kernel_preload.cpp)
xp_fake_driver_env(test_kernel_preload "devices=2,hollow,memory=1073741824")

# cuSOLVER and cuFFT in the CUDA backend on the hollow devices, against the fakes above (white box:
# the hooks, the searches and the plan cache).
xp_add_test(test_cuda_solver_fft WHITEBOX SOURCES test_cuda_solver_fft.cpp)
target_link_libraries(test_cuda_solver_fft PRIVATE ${CMAKE_DL_LIBS})
target_compile_definitions(test_cuda_solver_fft PRIVATE
  XP_FAKE_CUSOLVER_PATH="$<TARGET_FILE:xp_fake_cusolver>"
  XP_FAKE_CUFFT_PATH="$<TARGET_FILE:xp_fake_cufft>"
  XP_FAKE_CUBLAS_PATH="$<TARGET_FILE:xp_fake_cublas>")
add_dependencies(test_cuda_solver_fft xp_fake_cusolver xp_fake_cufft xp_fake_cublas)
xp_fake_driver_env(test_cuda_solver_fft "devices=2,hollow,memory=1073741824")
