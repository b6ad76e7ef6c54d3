// C helpers for the daemon (SecretDaemon) that Swift cannot express: variadic calls and
// cast-only macros. Keep this file small; everything else calls non-variadic APIs directly.
#ifndef CLIBSECRET_DAEMON_SHIM_H
#define CLIBSECRET_DAEMON_SHIM_H

#include <glib.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

// G_VARIANT_TYPE("...") is a cast macro, which Swift does not import. The characters must
// outlive every use of the result: pass a literal, or call inside withCString.
static inline const GVariantType *secretd_variant_type(const char *type_string) {
  return (const GVariantType *)type_string;
}

// prctl is variadic: make the process non-dumpable (no core, no ptrace by peers).
static inline int secretd_set_not_dumpable(void) {
  return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static inline int secretd_get_dumpable(void) {
  return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

// ioctl is variadic: the bytes waiting to be read on a socket (FIONREAD), or -1.
static inline int secretd_unread_bytes(int fd) {
  int count = 0;
  return ioctl(fd, FIONREAD, &count) == 0 ? count : -1;
}

#endif
