# Packaging: a Debian package (cpack -G DEB, or `cmake --build build --target package`).
# Included at the end of the top-level CMakeLists.txt, after every target's install() rules.
#
#   cmake --build build && (cd build && cpack -G DEB)   ->  build/flowbench_<version>_<arch>.deb
#
# Runtime dependencies are not listed by hand: dpkg-shlibdeps reads them from the installed
# binaries (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), so they follow whatever the build links.

set(FLOWBENCH_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})

# Desktop integration. The desktop file is installed under the application id, so that the
# AppStream launchable, the Wayland app id (QGuiApplication::setDesktopFileName) and the icon
# name all agree on io.flowbench.Flowbench.
install(FILES ${FLOWBENCH_PACKAGING_DIR}/flowbench.desktop
        DESTINATION share/applications RENAME io.flowbench.Flowbench.desktop)
install(FILES ${FLOWBENCH_PACKAGING_DIR}/io.flowbench.Flowbench.metainfo.xml
        DESTINATION share/metainfo)
# Icons, once they exist: packaging/icons/io.flowbench.Flowbench.svg (scalable) and
# packaging/icons/<N>x<N>/io.flowbench.Flowbench.png.
if(EXISTS ${FLOWBENCH_PACKAGING_DIR}/icons/io.flowbench.Flowbench.svg)
    install(FILES ${FLOWBENCH_PACKAGING_DIR}/icons/io.flowbench.Flowbench.svg
            DESTINATION share/icons/hicolor/scalable/apps)
endif()
foreach(size 16 24 32 48 64 128 256 512)
    if(EXISTS ${FLOWBENCH_PACKAGING_DIR}/icons/${size}x${size}/io.flowbench.Flowbench.png)
        install(FILES ${FLOWBENCH_PACKAGING_DIR}/icons/${size}x${size}/io.flowbench.Flowbench.png
                DESTINATION share/icons/hicolor/${size}x${size}/apps)
    endif()
endforeach()

# Package metadata (generator independent).
set(CPACK_PACKAGE_NAME "flowbench")
set(CPACK_PACKAGE_VENDOR "Flowbench developers")
set(CPACK_PACKAGE_CONTACT "Flowbench developers <maintainers@flowbench.io>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Desktop workbench for machine-learning pipelines")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://flowbench.io")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "flowbench")
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")

# Debian specifics.
set(CPACK_DEBIAN_PACKAGE_NAME "flowbench")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Installs under /usr (CPackDeb's default prefix), whatever CMAKE_INSTALL_PREFIX is.
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CPACK_PACKAGE_HOMEPAGE_URL}")
# Extended description, plain text: CPack puts the summary above it as the Description line
# and indents the rest as Debian policy asks (an empty line becomes " .").
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"Flowbench lets you build machine-learning pipelines from nodes on a canvas (data
sources, preprocessing, layers, loss, optimizer, train, evaluate, infer), run them
and watch them work live: samples flowing along each wire, CPU and GPU load, loss
and accuracy as they change. Trained models can be tried on images and sounds.

The same pipeline files run headless with flowbench-cli. Training runs on the CPU
(oneDNN) and, where built with CUDA, on NVIDIA GPUs.")
# Depends: computed by dpkg-shlibdeps from the installed executables (CPack passes
# --ignore-missing-info, so libraries from outside Debian, such as CUDA's, do not stop it).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Our own libraries, should any become shared, live in the build tree, not in a package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
# The example pipelines read Debian's Fashion-MNIST package.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist")

# Source package (cpack --config CPackSourceConfig.cmake): the tree without build output.
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_PACKAGE_FILE_NAME "flowbench-${PROJECT_VERSION}")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/runs/" "/\\\\.data/" "/\\\\.gl/"
    "/\\\\.whl/" "/bench/results/.*\\\\.tmp$" "~$" "\\\\.swp$")

include(CPack)
