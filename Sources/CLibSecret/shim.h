#ifndef CLIBSECRET_SHIM_H
#define CLIBSECRET_SHIM_H

// The D-Bus path API (search and read by object path, without auto-unlocking prompts)
// is marked unstable by libsecret although it has not changed since 0.7.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#define SECRET_WITH_UNSTABLE 1
#include <libsecret/secret.h>
#include <gio/gio.h>

// libsecret 0.20's SecretService constructor forces the session bus, the bus name from the
// environment and the default proxy flags, whatever the caller passed. This subclass restores
// the caller's connection, name and flags right after that, still inside construction, so a
// client can talk to any bus.
static GObject *clibsecret_bus_service_constructor(GType type, guint count, GObjectConstructParam *params) {
  GObjectClass *parent = G_OBJECT_CLASS(g_type_class_peek(SECRET_TYPE_SERVICE));
  GObject *object = parent->constructor(type, count, params);
  for (guint i = 0; i < count; i++) {
    const char *name = params[i].pspec->name;
    if (g_str_equal(name, "g-connection") || g_str_equal(name, "g-name") || g_str_equal(name, "g-flags")) {
      g_object_set_property(object, name, params[i].value);
    }
  }
  g_object_set(object, "g-bus-type", G_BUS_TYPE_NONE, NULL);
  return object;
}

static void clibsecret_bus_service_class_init(gpointer klass, gpointer data) {
  (void)data;
  G_OBJECT_CLASS(klass)->constructor = clibsecret_bus_service_constructor;
}

static GType clibsecret_bus_service_get_type(void) {
  static gsize type = 0;
  if (g_once_init_enter(&type)) {
    GType existing = g_type_from_name("CLibSecretBusService");
    GType registered = existing ? existing
      : g_type_register_static_simple(SECRET_TYPE_SERVICE, "CLibSecretBusService",
                                      sizeof(SecretServiceClass), clibsecret_bus_service_class_init,
                                      sizeof(SecretService), NULL, (GTypeFlags)0);
    g_once_init_leave(&type, registered);
  }
  return type;
}

// g_initable_new is variadic, which Swift cannot call: this opens a SecretService proxy on a
// connection and bus name the caller chose. The proxy neither loads nor follows properties:
// callers read them with Properties.Get when they need them, which saves every process a round
// trip and leaves no signal subscription on a main context that nothing iterates. Nor does it
// open a transfer session or ask the bus to start the provider: secrets are read through a
// session of SecretClient's own, libsecret opens its session only for the first write, and the
// first call starts the provider.
static inline SecretService *clibsecret_service_new(GDBusConnection *connection,
                                                    const char *bus_name,
                                                    GError **error) {
  return (SecretService *)g_initable_new(
      clibsecret_bus_service_get_type(), NULL, error,
      "g-connection", connection,
      "g-name", bus_name,
      "g-object-path", "/org/freedesktop/secrets",
      "g-interface-name", "org.freedesktop.Secret.Service",
      "g-flags", G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES | G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS
                     | G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START_AT_CONSTRUCTION,
      "flags", SECRET_SERVICE_NONE,
      NULL);
}

#endif
