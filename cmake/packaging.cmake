# Installation and the Debian package (`make deb`; docs/EDGE.md "Install from the Debian
# package"). The package holds /usr/bin/dsekp, the dsekp-edge systemd unit, /etc/dsekp/edge.toml
# (a conffile), the system user and directories (sysusers.d, tmpfiles.d, made by the postinst),
# log rotation, man pages written by help2man from --help and a bash completion written by
# `dsekp completion bash`. Built for the architecture being compiled for: amd64 here, arm64
# with cmake/toolchains/aarch64-linux-gnu.cmake.
include(GNUInstallDirs)

set(DSEKP_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(DSEKP_GENERATED_DIR ${CMAKE_BINARY_DIR}/packaging)

# Files written from the built binary (DSEKP_CLI_RUN: through the emulator when cross-compiling).
find_program(DSEKP_HELP2MAN help2man)
set(generated ${DSEKP_GENERATED_DIR}/dsekp.bash ${DSEKP_GENERATED_DIR}/changelog.gz)
add_custom_command(OUTPUT ${DSEKP_GENERATED_DIR}/dsekp.bash
  COMMAND sh -c "${DSEKP_CLI_RUN} completion bash > ${DSEKP_GENERATED_DIR}/dsekp.bash"
  DEPENDS dsekp_cli VERBATIM)
add_custom_command(OUTPUT ${DSEKP_GENERATED_DIR}/changelog.gz
  COMMAND sh -c "gzip -9n -c ${DSEKP_PACKAGING_DIR}/debian/changelog > ${DSEKP_GENERATED_DIR}/changelog.gz"
  DEPENDS ${DSEKP_PACKAGING_DIR}/debian/changelog VERBATIM)
if(DSEKP_HELP2MAN)
  add_custom_command(OUTPUT ${DSEKP_GENERATED_DIR}/man/dsekp.1.gz
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/package/man-pages.sh "${DSEKP_CLI_RUN}"
            ${DSEKP_GENERATED_DIR}/man ${PROJECT_VERSION}
    DEPENDS dsekp_cli ${PROJECT_SOURCE_DIR}/scripts/package/man-pages.sh VERBATIM)
  list(APPEND generated ${DSEKP_GENERATED_DIR}/man/dsekp.1.gz)
  install(DIRECTORY ${DSEKP_GENERATED_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          FILES_MATCHING PATTERN "*.1.gz")
endif()
add_custom_target(dsekp_package_files ALL DEPENDS ${generated})

install(TARGETS dsekp_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${DSEKP_PACKAGING_DIR}/dsekp-edge.service DESTINATION lib/systemd/system)
install(FILES ${DSEKP_PACKAGING_DIR}/debian/sysusers.conf DESTINATION lib/sysusers.d
        RENAME dsekp.conf)
install(FILES ${DSEKP_PACKAGING_DIR}/debian/tmpfiles.conf DESTINATION lib/tmpfiles.d
        RENAME dsekp.conf)
install(FILES ${DSEKP_PACKAGING_DIR}/edge.toml.example DESTINATION /etc/dsekp
        RENAME edge.toml)
install(FILES ${DSEKP_PACKAGING_DIR}/debian/logrotate
        DESTINATION /etc/logrotate.d RENAME dsekp-edge)
install(FILES ${DSEKP_GENERATED_DIR}/dsekp.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME dsekp)
install(FILES ${DSEKP_PACKAGING_DIR}/debian/copyright ${DSEKP_GENERATED_DIR}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# For the operator's Prometheus and Grafana: alert rules (with their promtool tests), a scrape
# job, a dashboard (docs/EDGE.md, Observability).
install(FILES ${DSEKP_PACKAGING_DIR}/prometheus/dsekp-alerts.yml
              ${DSEKP_PACKAGING_DIR}/prometheus/dsekp-alerts.test.yml
              ${DSEKP_PACKAGING_DIR}/prometheus/prometheus.yml.example
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dsekp/prometheus)
install(FILES ${DSEKP_PACKAGING_DIR}/grafana/dsekp-edge-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dsekp/grafana)
install(FILES ${DSEKP_PACKAGING_DIR}/telegraf/dsekp.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dsekp/telegraf)
install(FILES ${DSEKP_PACKAGING_DIR}/node-red/dsekp-flow.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dsekp/node-red)

# --- CPack: the .deb ---------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dsekp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "DSEKP developers <dsekp@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "symmetric per-session rekeying for IoT devices over MQTT (edge gateway)")
set(CPACK_PACKAGE_DESCRIPTION
"DSEKP (Dynamic Session Enhanced Key Protocol) gives each device session fresh
AES-128-GCM keys from one INIT/ACK exchange (HKDF-SHA256, HMAC proofs) using
symmetric cryptography only. This package holds the edge gateway, which runs
as the dsekp-edge systemd service against an MQTT broker (Mosquitto), and the
dsekp tools: device provisioning and broker accounts, a device simulator, a
link emulator, the paper's experiment and its analysis, and benchmarks.")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/dsekp/dsekp")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "mosquitto")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "mosquitto-clients, redis-server, rabbitmq-server")
set(CPACK_STRIP_FILES ON)
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
endif()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${DSEKP_PACKAGING_DIR}/debian/conffiles ${DSEKP_PACKAGING_DIR}/debian/postinst
  ${DSEKP_PACKAGING_DIR}/debian/prerm ${DSEKP_PACKAGING_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/deb)
include(CPack)
