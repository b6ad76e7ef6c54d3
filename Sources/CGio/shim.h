// GLib and GIO as GLibBridge and secretd use them: the bus, GVariant, the main loop. secretd
// links these alone; the client adds libsecret (CLibSecret).
#ifndef CGIO_SHIM_H
#define CGIO_SHIM_H

#include <gio/gio.h>
#include <glib-unix.h>

// G_VARIANT_TYPE("...") is a cast macro, which Swift does not import. The characters must
// outlive every use of the result: pass a literal, or call inside withCString.
static inline const GVariantType *cgio_variant_type(const char *type_string) {
  return (const GVariantType *)type_string;
}

#endif
