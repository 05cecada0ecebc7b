# The Debian package for fleets: `cpack -G DEB` in a build folder writes collide_<version>_<arch>.deb
# with the `collide` command, the systemd unit that runs `collide agent` on a host, its settings
# under /etc/collide, the deploy files (Kubernetes, Slurm) and the example scenarios. The eBPF
# programs are not installed as files: their objects are compiled into `collide` (libbpf
# skeletons). Tests and benchmarks have no install rules, so they stay out.
include(GNUInstallDirs)

set(COLLIDE_DEPLOY_DIR ${PROJECT_SOURCE_DIR}/configs/deploy)
set(COLLIDE_DATA_DIR ${CMAKE_INSTALL_DATADIR}/collide)

# The unit's settings are a conffile: an upgrade keeps what the host's administrator wrote.
install(FILES ${COLLIDE_DEPLOY_DIR}/collide-agent.service
        DESTINATION lib/systemd/system)
install(FILES ${COLLIDE_DEPLOY_DIR}/collide-agent.env DESTINATION /etc/collide RENAME agent.env)
# Where the agent's certificate, key and CA go: the unit passes --certs /etc/collide/certs.
# Readable by root alone, as the key in it must be.
install(DIRECTORY DESTINATION /etc/collide/certs
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
install(FILES ${COLLIDE_DEPLOY_DIR}/README.md ${COLLIDE_DEPLOY_DIR}/collide-agent-daemonset.yaml
        DESTINATION ${COLLIDE_DATA_DIR}/deploy)
install(PROGRAMS ${COLLIDE_DEPLOY_DIR}/collide-agents.sbatch DESTINATION ${COLLIDE_DATA_DIR}/deploy)
# Example scenarios with the model presets beside them, so `model: llama3-70b` in a scenario of
# this folder finds configs/models/ as it does in the source tree.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${COLLIDE_DATA_DIR}/configs
        PATTERN deploy EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME collide)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "collide replays the collective-communication traffic of AI training jobs as RoCEv2 over \
DPDK on real or virtual hosts, injects faults with eBPF while it runs, and reports what they do \
to collective completion times and job completion time. The package holds the collide command, \
a systemd unit for collide agent (one per host of a fleet), deploy files for Kubernetes and \
Slurm, and example scenarios.")
set(CPACK_PACKAGE_CONTACT "collide maintainers <maintainers@users.noreply.a-seed-a0e62627.example>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Shared libraries (DPDK, libbpf, libxdp, protobuf, ...) from dpkg-shlibdeps on the binary
# (dpkg-dev). By hand: the commands collide runs (ip and tc for the testbed and faults, bpftool for
# the sweep), and DPDK's AF_XDP driver, the default port, which DPDK loads as a plugin at run time
# so that no link dependency names it (23: the ABI of Debian 12's DPDK, as the libraries found
# above). Drivers for PCI NICs come with the dpdk package, suggested, and FRR for virtual fabrics
# routed by BGP (testbed.virtual.routing: bgp).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iproute2, bpftool")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "frr")
if(COLLIDE_WITH_DPDK)
  string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", librte-net-af-xdp23")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dpdk, frr")
endif()
# The build's debug information is most of the binary's size (over 200 MB); the package ships it
# stripped.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles "/etc/collide/agent.env\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles)
include(CPack)
