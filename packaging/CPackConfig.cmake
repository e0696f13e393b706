# Packaging: a Debian package. Included at the end of the top-level CMakeLists.txt, after every
# target's install() rules, so that it can refer to the executables.
#
#   scripts/package.sh                                  ->  build-deb/flowbench_<version>_<arch>.deb
#   cmake --build <dir> --target package                (a build configured without CUDA)
#
# The package is meant to pass `lintian --fail-on error`: everything Debian policy wants beside
# the programs (copyright, changelog, man pages, permissions) is produced here, at build time,
# from sources under packaging/ and from the programs themselves.
#
# Runtime dependencies are not listed by hand: dpkg-shlibdeps reads them from the installed
# binaries (CPACK_DEBIAN_PACKAGE_SHLIBDEPS), so they follow whatever the build links.

set(FLOWBENCH_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})
# Debian names the documentation folder after the package, not after the CMake project
# ("Flowbench"), so GNUInstallDirs' DOCDIR would be wrong here.
set(FLOWBENCH_DOC_DIR share/doc/flowbench)
set(FLOWBENCH_GEN_DIR ${CMAKE_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${FLOWBENCH_GEN_DIR})

# Reasons this build cannot make a proper .deb. Collected while configuring, but only acted on
# by cpack (CPackProjectConfig.cmake), so that such a build tree still builds and tests as usual
# and only `package` refuses, with the reasons. Variables starting with CPACK_ reach cpack.
set(CPACK_FLOWBENCH_PACKAGE_BLOCKERS "")
function(flowbench_package_blocker)
    string(CONCAT reason ${ARGN})
    set(CPACK_FLOWBENCH_PACKAGE_BLOCKERS ${CPACK_FLOWBENCH_PACKAGE_BLOCKERS} "${reason}"
        PARENT_SCOPE)
endfunction()

# A build with the CUDA backend links libcudart, cuBLAS and cuDNN from the CUDA toolkit, which
# no Debian package provides: dpkg-shlibdeps would leave them out of Depends (CPack passes
# --ignore-missing-info) and the package would install but not start. Packaging such a build
# is a mistake we stop instead of shipping.
if(FLOWBENCH_HAVE_CUDA)
    flowbench_package_blocker(
        "this build has the CUDA backend (FLOWBENCH_HAVE_CUDA). Its programs link libcudart,\n"
        "    cuBLAS and cuDNN, which no Debian package provides, so the .deb would not run where\n"
        "    it is installed. Package a CPU-only build instead: run scripts/package.sh (it builds\n"
        "    one in build-deb/), or configure a separate build folder with\n"
        "    -DFLOWBENCH_WITH_CUDA=OFF and run `cmake --build <dir> --target package` there.")
endif()

# Installs under /usr (CPackDeb's default prefix), whatever CMAKE_INSTALL_PREFIX is. Folders
# that install() creates get 0755 whatever the umask of the person building (a umask of 002
# would otherwise give group-writable folders in the package, which lintian flags).
set(FLOWBENCH_DIR_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS ${FLOWBENCH_DIR_PERMISSIONS})
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS ${FLOWBENCH_DIR_PERMISSIONS})

# --- Desktop integration ---------------------------------------------------------------------
# The desktop file is installed under the application id, so that the AppStream launchable,
# the Wayland app id (QGuiApplication::setDesktopFileName) and the icon name all agree on
# io.flowbench.Flowbench.
install(FILES ${FLOWBENCH_PACKAGING_DIR}/flowbench.desktop
        DESTINATION share/applications RENAME io.flowbench.Flowbench.desktop)
install(FILES ${FLOWBENCH_PACKAGING_DIR}/io.flowbench.Flowbench.metainfo.xml
        DESTINATION share/metainfo)
# The SVG is the source; the PNGs are rendered from it by packaging/icons/render.sh and
# committed, so that building needs no SVG renderer. Menus and docks that cannot scale SVG pick
# the nearest PNG size.
install(FILES ${FLOWBENCH_PACKAGING_DIR}/icons/io.flowbench.Flowbench.svg
        DESTINATION share/icons/hicolor/scalable/apps)
foreach(size 16 24 32 48 64 128 256 512)
    install(FILES ${FLOWBENCH_PACKAGING_DIR}/icons/${size}x${size}/io.flowbench.Flowbench.png
            DESTINATION share/icons/hicolor/${size}x${size}/apps)
endforeach()

# --- Copyright and changelog -----------------------------------------------------------------
# Debian wants /usr/share/doc/<package>/copyright in the machine-readable (DEP-5) format, plain,
# and the Debian changelog beside it compressed with gzip -9n (-n: no name or time stamp in the
# header, so that the same source gives the same bytes). The version is 0.1.0 with no Debian
# revision, which makes this a "native" package to dpkg and lintian: its changelog is
# changelog.gz (a non-native one, 0.1.0-1, would need changelog.Debian.gz).
install(FILES ${FLOWBENCH_PACKAGING_DIR}/copyright DESTINATION ${FLOWBENCH_DOC_DIR})

set(FLOWBENCH_CHANGELOG ${FLOWBENCH_PACKAGING_DIR}/changelog)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${FLOWBENCH_CHANGELOG})
file(STRINGS ${FLOWBENCH_CHANGELOG} flowbench_changelog_lines)
list(GET flowbench_changelog_lines 0 flowbench_changelog_head)
# The newest entry must be this version: lintian compares them, and a forgotten changelog entry
# is a release mistake best caught before anything is uploaded.
if(NOT flowbench_changelog_head MATCHES "^flowbench \\(${PROJECT_VERSION}\\) ")
    flowbench_package_blocker(
        "packaging/changelog's newest entry is not for version ${PROJECT_VERSION}\n"
        "    (it reads '${flowbench_changelog_head}'): add an entry for this release.")
endif()
# The newest entry's date ("-- Name <mail>  Tue, 24 Nov 2026 12:00:00 +0000") is the release
# date. It dates the man pages (help2man reads SOURCE_DATE_EPOCH) so that they say when the
# release was made rather than when someone happened to build it.
set(flowbench_release_epoch "")
if(DEFINED ENV{SOURCE_DATE_EPOCH})
    set(flowbench_release_epoch "$ENV{SOURCE_DATE_EPOCH}")
else()
    foreach(line IN LISTS flowbench_changelog_lines)
        if(line MATCHES "^ -- .*>  (.+)$")
            execute_process(COMMAND date -u -d "${CMAKE_MATCH_1}" +%s
                            OUTPUT_VARIABLE flowbench_release_epoch
                            OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
            break()
        endif()
    endforeach()
endif()

find_program(FLOWBENCH_GZIP gzip)
if(NOT FLOWBENCH_GZIP)
    message(FATAL_ERROR "gzip not found (Debian: gzip)")
endif()
add_custom_command(
    OUTPUT ${FLOWBENCH_GEN_DIR}/changelog.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${FLOWBENCH_CHANGELOG} ${FLOWBENCH_GEN_DIR}/changelog
    COMMAND ${FLOWBENCH_GZIP} -9nf ${FLOWBENCH_GEN_DIR}/changelog
    DEPENDS ${FLOWBENCH_CHANGELOG}
    COMMENT "Compressing the Debian changelog"
    VERBATIM)
install(FILES ${FLOWBENCH_GEN_DIR}/changelog.gz DESTINATION ${FLOWBENCH_DOC_DIR})

# --- Man pages -------------------------------------------------------------------------------
# Generated from the programs' own --help and --version by help2man, so that the options are
# described once, in the code, and the man pages cannot fall behind. What --help does not say
# (NAME, DESCRIPTION, FILES, SEE ALSO) comes from packaging/man/<program>.h2m. The window needs
# a Qt platform even to print its help: the offscreen one, so that this works with no display.
# help2man is only needed to package; without it the build goes on and `package` refuses.
find_program(FLOWBENCH_HELP2MAN help2man)
set(flowbench_man_pages "")
if(FLOWBENCH_HELP2MAN)
    set(flowbench_man_env QT_QPA_PLATFORM=offscreen)
    if(flowbench_release_epoch)
        list(APPEND flowbench_man_env SOURCE_DATE_EPOCH=${flowbench_release_epoch})
    endif()
    foreach(program flowbench-cli flowbench)
        set(h2m ${FLOWBENCH_PACKAGING_DIR}/man/${program}.h2m)
        set(page ${FLOWBENCH_GEN_DIR}/${program}.1)
        add_custom_command(
            OUTPUT ${page}.gz
            # Run by name from its folder (not by path) so that the "Usage:" lines read
            # "flowbench ..." rather than the build tree's path.
            COMMAND ${CMAKE_COMMAND} -E env ${flowbench_man_env}
                    "PATH=$<TARGET_FILE_DIR:${program}>:/usr/bin:/bin"
                    ${FLOWBENCH_HELP2MAN} --no-info --section=1 --include=${h2m}
                    --output=${page} ${program}
            COMMAND ${FLOWBENCH_GZIP} -9nf ${page}
            DEPENDS ${program} ${h2m}
            COMMENT "Generating the ${program}(1) man page with help2man"
            VERBATIM)
        list(APPEND flowbench_man_pages ${page}.gz)
    endforeach()
    install(FILES ${flowbench_man_pages} DESTINATION share/man/man1)
else()
    flowbench_package_blocker(
        "help2man was not found when this build was configured, so there are no man pages:\n"
        "    install it (Debian: help2man) and configure again.")
endif()
# Built with everything else (they take a moment), so that `package` finds them in place.
add_custom_target(flowbench_package_docs ALL
                  DEPENDS ${FLOWBENCH_GEN_DIR}/changelog.gz ${flowbench_man_pages})

# --- Stripping -------------------------------------------------------------------------------
# CPACK_STRIP_FILES (below) runs a plain `strip`, which leaves the compiler's .comment section
# in the binaries; lintian notes it. Remove it (and .note) as Debian's dh_strip does. Runs after
# app/'s install rules (policy CMP0082 keeps install rules in declaration order).
install(CODE "
    if(CMAKE_INSTALL_DO_STRIP)
        foreach(program flowbench flowbench-cli)
            execute_process(COMMAND \"${CMAKE_STRIP}\" --remove-section=.comment
                                    --remove-section=.note
                                    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/\${program}\")
        endforeach()
    endif()")

# --- Package metadata ------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME "flowbench")
set(CPACK_PACKAGE_VENDOR "Flowbench developers")
set(CPACK_PACKAGE_CONTACT "Flowbench developers <maintainers@flowbench.io>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Desktop workbench for machine-learning pipelines")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://flowbench.io")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "flowbench")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
# Debian policy: no debugging symbols in the binaries of a regular package.
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR "DEB")
# Refuses to make a .deb from a build that cannot make a good one (CPACK_FLOWBENCH_PACKAGE_BLOCKERS).
set(CPACK_PROJECT_CONFIG_FILE "${FLOWBENCH_PACKAGING_DIR}/CPackProjectConfig.cmake")

# --- Debian specifics ------------------------------------------------------------------------
set(CPACK_DEBIAN_PACKAGE_NAME "flowbench")
# flowbench_<version>_<arch>.deb, the name dpkg-name would give it.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${CPACK_PACKAGE_HOMEPAGE_URL}")
# What Debian itself uses for its packages: a third smaller than gzip.
set(CPACK_DEBIAN_COMPRESSION_TYPE "xz")
# Control files (md5sums, control) with the 0644 that Debian policy and lintian expect, instead
# of whatever the umask of the person building gives.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Extended description, plain text: CPack puts the summary above it as the Description line
# and indents the rest as Debian policy asks (an empty line becomes " ."). Lines stay under 80
# columns, as lintian asks.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"Flowbench lets you build machine-learning pipelines from nodes on a canvas
(data sources, preprocessing, layers, loss, optimizer, train, evaluate,
infer), run them and watch them work live: samples flowing along each wire,
CPU load, loss and accuracy as they change. Trained models can be tried on
images and sounds.

The same pipeline files run headless with flowbench-cli. This package trains
on the CPU (oneDNN); the CUDA backend is only in source builds.")
# Depends: computed by dpkg-shlibdeps from the installed executables.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Our own libraries, should any become shared, live in the build tree, not in a package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
# Not linked, so invisible to dpkg-shlibdeps, but what the examples need: the Fashion-MNIST
# examples read Debian's data set package, the spoken-digits data set is made with espeak-ng,
# flite, festival and its voices and sox (share/flowbench/make_spoken_digits.sh), and
# `flowbench-cli listen --mic` loads PulseAudio's simple API (libpulse0) when asked. Recommends,
# not Depends: the workbench is useful with one's own data and none of these. The data set's
# packages are the script's own list (make_spoken_digits.sh --packages, read by CMakeLists.txt).
string(REPLACE " " ", " spoken_digits_recommends "${FLOWBENCH_SPOKEN_DIGITS_PACKAGES}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "dataset-fashion-mnist, ${spoken_digits_recommends}, libpulse0")

# --- Source package --------------------------------------------------------------------------
# cpack --config CPackSourceConfig.cmake: the tree without build output.
set(CPACK_SOURCE_GENERATOR "TGZ")
set(CPACK_SOURCE_PACKAGE_FILE_NAME "flowbench-${PROJECT_VERSION}")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/runs/" "/\\\\.data/" "/\\\\.gl/"
    "/\\\\.whl/" "/bench/results/.*\\\\.tmp$" "~$" "\\\\.swp$")

include(CPack)
