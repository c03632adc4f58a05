# Exporter checks that run Debian's Prometheus tools (package `prometheus`): the rules' unit
# tests, the config, and the golden /metrics body through the exposition-format linter.
find_program(PROMTOOL promtool)
if(PROMTOOL)
  set(_deploy ${CMAKE_SOURCE_DIR}/deploy/prometheus)
  add_test(NAME promtool.test_rules COMMAND ${PROMTOOL} test rules sparkops-rules.test.yml WORKING_DIRECTORY ${_deploy})
  add_test(NAME promtool.check_rules COMMAND ${PROMTOOL} check rules sparkops-rules.yml WORKING_DIRECTORY ${_deploy})
  add_test(NAME promtool.check_config COMMAND ${PROMTOOL} check config prometheus.yml WORKING_DIRECTORY ${_deploy})
  # `check metrics` exits non-zero on format errors and on lint problems (units, _total, HELP).
  add_test(NAME promtool.check_metrics_golden
           COMMAND sh -c "${PROMTOOL} check metrics < '${CMAKE_CURRENT_SOURCE_DIR}/golden/exporter_metrics.prom'")
  string(REPLACE ";" " " SPARKOPS_EMULATOR_WORDS "${CMAKE_CROSSCOMPILING_EMULATOR}")  # qemu in the cross build
  add_test(NAME promtool.check_metrics_fixture
           COMMAND bash -o pipefail -c "${SPARKOPS_EMULATOR_WORDS} '$<TARGET_FILE:sparkops>' --root '${CMAKE_CURRENT_SOURCE_DIR}/fixtures/gb10' exporter --once | ${PROMTOOL} check metrics")
  set_tests_properties(promtool.test_rules promtool.check_rules promtool.check_config promtool.check_metrics_golden
                       promtool.check_metrics_fixture PROPERTIES TIMEOUT 60)
else()
  message(WARNING "promtool not found (Debian package `prometheus`): the rule and metric lint tests are not registered")
endif()
