# Read by cpack itself (CPACK_PROJECT_CONFIG_FILE), once per generator, before it installs
# anything: the one place where packaging can still say no. CPackConfig.cmake collected the
# reasons this build tree cannot make a good Debian package while configuring; stopping here
# rather than at configure time keeps such a tree (a CUDA developer build, say) usable for
# everything else. The source tarball (TGZ) has no such constraints and is let through.
if(CPACK_GENERATOR STREQUAL "DEB" AND CPACK_FLOWBENCH_PACKAGE_BLOCKERS)
    set(msg "Flowbench: refusing to make a Debian package from this build:")
    foreach(reason IN LISTS CPACK_FLOWBENCH_PACKAGE_BLOCKERS)
        string(APPEND msg "\n  - ${reason}")
    endforeach()
    message(FATAL_ERROR "${msg}\n")
endif()
