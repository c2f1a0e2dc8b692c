// The main of every test program. ctest runs one test per process: a test that skipped (and
// failed nothing) exits 77, which tests/CMakeLists.txt gives ctest as SKIP_RETURN_CODE, so a
// parent running a child case sees a skip as no pass. (ctest also reads "[  SKIPPED ]" in the
// output as a skip; xp_test::run_process defuses that marker in a child's output.)
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (rc != 0) return rc;
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  if (u.skipped_test_count() > 0 && u.successful_test_count() == 0) return 77;
  return 0;
}
