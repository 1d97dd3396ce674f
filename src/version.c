/* version.c — the version and commit this library was built from (gp_version, gp_git_commit).
 * The strings come from gp_version.h, which cmake/gp_version.cmake writes into the build
 * folder at every build; a build without it (the fuzz targets) says "unknown". */
#include "gpuprim/kernels.h"

#ifdef GPUPRIM_HAVE_VERSION_H
#include "gp_version.h"
#endif
#ifndef GPUPRIM_VERSION_STRING
#define GPUPRIM_VERSION_STRING "unknown"
#endif
#ifndef GPUPRIM_GIT_COMMIT
#define GPUPRIM_GIT_COMMIT "unknown"
#endif

const char *gp_version(void) { return GPUPRIM_VERSION_STRING; }

const char *gp_git_commit(void) { return GPUPRIM_GIT_COMMIT; }
