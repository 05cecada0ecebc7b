# Every dependency comes from a Debian package, found through its CMake package or pkg-config.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 QUIET)
find_package(ZLIB REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(prometheus-cpp CONFIG REQUIRED)  # its core alone: the registry and text format

if(NOT TARGET CLI11::CLI11)
  find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
endif()

# Netlink for the virtual switches' queues (orchestrator/testbed/switch_port_io.h).
pkg_check_modules(LIBMNL REQUIRED IMPORTED_TARGET libmnl)

if(COLLIDE_WITH_DPDK)
  pkg_check_modules(DPDK IMPORTED_TARGET libdpdk)
  if(NOT DPDK_FOUND)
    message(FATAL_ERROR "libdpdk not found: install libdpdk-dev or configure with -DCOLLIDE_WITH_DPDK=OFF")
  endif()
endif()

if(COLLIDE_WITH_EBPF)
  pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
  if(NOT LIBBPF_FOUND)
    message(FATAL_ERROR "libbpf not found: install libbpf-dev or configure with -DCOLLIDE_WITH_EBPF=OFF")
  endif()
endif()

# Sweep curves as PNG beside report.html: librsvg draws the report's SVG with cairo. Without it
# the curves are still in report.html.
pkg_check_modules(RSVG IMPORTED_TARGET librsvg-2.0 cairo)
if(RSVG_FOUND)
  set(COLLIDE_WITH_RSVG ON)
else()
  set(COLLIDE_WITH_RSVG OFF)
  message(WARNING "librsvg-2.0 not found (install librsvg2-dev): sweep curves will be in report.html "
                  "but not written as PNG files")
endif()

if(COLLIDE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
