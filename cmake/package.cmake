# The Debian package: `cd build && cpack` (or cpack --config build/CPackConfig.cmake -B DIR) writes
# claim2core_<version>_amd64.deb from the install rules (cmake/install.cmake). Depends comes
# from dpkg-shlibdeps (libbpf1 from bookworm-backports, gRPC, protobuf, yaml-cpp, ...); the
# maintainer scripts (packaging/debian) create /var/lib/claim2core and enable nothing.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME claim2core)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Claim2Core maintainers <claim2core@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kubernetes DRA claims to per-task sched_ext policy in pinned BPF maps")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # claim2core_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libbpf1 >= 1.4 is bookworm-backports' (bookworm has 1.1); shlibdeps names the installed one,
# this makes the floor explicit whatever the build machine has.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libbpf1 (>= 1:1.4)")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
include(CPack)
