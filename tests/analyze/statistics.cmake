# analyze/statistics tests against R reference values (reference/expected.json, regenerated with
# reference/compute_reference.R; R itself is not needed to build or run them). Included from
# tests/analyze/CMakeLists.txt; paths are relative to this file so the includer does not matter.
include(GoogleTest)
find_package(nlohmann_json REQUIRED)
get_filename_component(DSEKP_STATS_REPO_ROOT ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)

add_executable(analyze_statistics_tests ${CMAKE_CURRENT_LIST_DIR}/statistics_test.cpp)
target_include_directories(analyze_statistics_tests PRIVATE ${DSEKP_STATS_REPO_ROOT})
target_compile_definitions(analyze_statistics_tests PRIVATE
  DSEKP_STATS_REFERENCE_DIR="${CMAKE_CURRENT_LIST_DIR}/reference")
target_link_libraries(analyze_statistics_tests PRIVATE dsekp_analyze nlohmann_json::nlohmann_json
  GTest::gtest_main)
gtest_discover_tests(analyze_statistics_tests)
