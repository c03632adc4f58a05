# Installation layout and the Debian package (CPack DEB), for amd64 and arm64 alike:
#   cmake --build build && (cd build && cpack -G DEB)      -> build/sparkops_<ver>_<arch>.deb
# Contents: /usr/bin/sparkops, its man page (generated at build time from `sparkops help`),
# /usr/share/sparkops/ (deploy/: Prometheus rules, Grafana dashboard; the model catalogue is compiled in), a systemd unit for
# `sparkops exporter` on 127.0.0.1 that is installed but NOT enabled (no maintainer scripts).
# The binary links only glibc dynamically (cmake/static_deps.cmake), so the package depends on
# `libc6 (>= 2.35)` alone (tests/release.cmake checks that no newer glibc symbol is required) and
# installs on Debian 12, Ubuntu 22.04/24.04 and DGX OS alike. NVML is dlopen'd at run time and
# never a package dependency. The tarball (target sparkops_tarball):
#   cmake --build build --target sparkops_tarball   -> build/sparkops-<ver>-linux-<arch>.tar.gz
include(GNUInstallDirs)

set(SPARKOPS_DEB_MAINTAINER "sparkops developers <sparkops@example.org>"
    CACHE STRING "Maintainer field of the .deb")

# dpkg architecture names for CMake's processor names.
set(_arch ${CMAKE_SYSTEM_PROCESSOR})
if(_arch MATCHES "^(aarch64|arm64|ARM64)$")
  set(_deb_arch arm64)
elseif(_arch MATCHES "^(x86_64|AMD64|amd64)$")
  set(_deb_arch amd64)
else()
  set(_deb_arch ${_arch})
endif()

# --- man page: generated from the built binary's own help text (through the emulator when cross) ---
set(SPARKOPS_MANPAGE ${CMAKE_BINARY_DIR}/packaging/sparkops.1.gz)
add_custom_command(
  OUTPUT ${SPARKOPS_MANPAGE}
  COMMAND ${CMAKE_COMMAND} "-DSPARKOPS=$<TARGET_FILE:sparkops>"
          "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}" -DOUT=${SPARKOPS_MANPAGE}
          -P ${CMAKE_CURRENT_LIST_DIR}/manpage.cmake
  DEPENDS sparkops ${CMAKE_CURRENT_LIST_DIR}/manpage.cmake
  COMMENT "Generating sparkops.1 from `sparkops help`" VERBATIM)
add_custom_target(sparkops_manpage ALL DEPENDS ${SPARKOPS_MANPAGE})

# --- Debian changelog (required in every package's doc directory) ---
string(TIMESTAMP SPARKOPS_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_deb_arch})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${SPARKOPS_DEB_MAINTAINER})
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/packaging/changelog.gz
  COMMAND gzip -9nkf ${CMAKE_BINARY_DIR}/packaging/changelog
  DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog VERBATIM)
add_custom_target(sparkops_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/packaging/changelog.gz)

# Full RELRO for the installed binary (lintian: hardening-no-bindnow).
target_link_options(sparkops PRIVATE -Wl,-z,relro,-z,now)

# --- the shipped binary: stripped, its debug information in release/sparkops.debug (GNU
# debuglink: gdb finds it next to the binary or under /usr/lib/debug) ---
set(SPARKOPS_RELEASE_DIR ${CMAKE_BINARY_DIR}/release)
set(SPARKOPS_RELEASE_BIN ${SPARKOPS_RELEASE_DIR}/sparkops)
file(MAKE_DIRECTORY ${SPARKOPS_RELEASE_DIR})
add_custom_command(
  OUTPUT ${SPARKOPS_RELEASE_BIN} ${SPARKOPS_RELEASE_DIR}/sparkops.debug
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug --compress-debug-sections=zlib $<TARGET_FILE:sparkops> sparkops.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o sparkops.tmp $<TARGET_FILE:sparkops>
  COMMAND ${CMAKE_OBJCOPY} --add-gnu-debuglink=sparkops.debug sparkops.tmp sparkops
  COMMAND ${CMAKE_COMMAND} -E remove sparkops.tmp
  WORKING_DIRECTORY ${SPARKOPS_RELEASE_DIR}
  DEPENDS sparkops
  COMMENT "Stripping sparkops (debug information in release/sparkops.debug)" VERBATIM)
add_custom_target(sparkops_release ALL DEPENDS ${SPARKOPS_RELEASE_BIN})

# --- install rules ---
install(PROGRAMS ${SPARKOPS_RELEASE_BIN} DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${SPARKOPS_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${CMAKE_BINARY_DIR}/packaging/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/sparkops)
# Debian 12 keeps unit files under /lib (lintian: systemd-service-file-outside-lib).
install(FILES ${CMAKE_SOURCE_DIR}/packaging/sparkops-exporter.service
  ${CMAKE_SOURCE_DIR}/packaging/sparkops-guard.service DESTINATION /lib/systemd/system)
# /run/sparkops/guard and the sticky /run/sparkops/runs spool the exporter reads (docs/reliability.md, "Ledgers").
install(FILES ${CMAKE_SOURCE_DIR}/packaging/sparkops.tmpfiles DESTINATION /usr/lib/tmpfiles.d RENAME sparkops.conf)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/ DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/sparkops OPTIONAL
        PATTERN "*_test.*" EXCLUDE)
# data/models is compiled into the binary (src/memory/catalogue_data.cc.in); nothing to install.

# --- CPack ---
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sparkops)
set(CPACK_PACKAGE_VENDOR "sparkops")
set(CPACK_PACKAGE_CONTACT ${SPARKOPS_DEB_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "DGX Spark (GB10) training preflight, memory planning and telemetry")
# CPack puts the summary on the Description line and indents this body itself.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "sparkops checks a machine before a long training run (CUDA ABI,
flash-attn objects, unified memory headroom, thermals, containers), plans
memory for a model, samples GPU and memory telemetry, analyses training
logs and serves Prometheus metrics. It is built for NVIDIA DGX Spark
(aarch64, unified memory) and reports honestly on discrete GPUs and on
machines without a GPU. NVML is loaded at run time when present.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# glibc only: the dependency is stated, not computed (dpkg-shlibdeps would say libc6 (>= 2.34)
# from the build machine's symbols; 2.35 is what the release checks hold the binary to).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.35)")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES OFF)  # installed already stripped, with its debuglink
# Only the runtime component set above; the tests and static library are not installed.
set(CPACK_DEB_COMPONENT_INSTALL OFF)
include(CPack)

# --- the tarball: binary, man page, Prometheus rules, Grafana dashboard, systemd unit, install notes ---
set(SPARKOPS_TARBALL ${CMAKE_BINARY_DIR}/sparkops-${PROJECT_VERSION}-linux-${_deb_arch}.tar.gz)
add_custom_command(
  OUTPUT ${SPARKOPS_TARBALL}
  COMMAND ${CMAKE_COMMAND} -DOUT=${SPARKOPS_TARBALL} -DNAME=sparkops-${PROJECT_VERSION}-linux-${_deb_arch}
          -DSTAGE=${CMAKE_BINARY_DIR}/tarball -DBIN=${SPARKOPS_RELEASE_BIN} -DMAN=${SPARKOPS_MANPAGE}
          -DSRC=${CMAKE_SOURCE_DIR} -P ${CMAKE_CURRENT_LIST_DIR}/tarball.cmake
  DEPENDS sparkops_release ${SPARKOPS_RELEASE_BIN} ${SPARKOPS_MANPAGE} ${CMAKE_CURRENT_LIST_DIR}/tarball.cmake
          ${CMAKE_SOURCE_DIR}/packaging/INSTALL.md ${CMAKE_SOURCE_DIR}/packaging/sparkops-exporter.service
          ${CMAKE_SOURCE_DIR}/packaging/sparkops-guard.service ${CMAKE_SOURCE_DIR}/packaging/sparkops.tmpfiles
          ${CMAKE_SOURCE_DIR}/deploy/python/sparkops_callbacks.py
  COMMENT "Packing ${SPARKOPS_TARBALL}" VERBATIM)
add_custom_target(sparkops_tarball DEPENDS ${SPARKOPS_TARBALL})
