#ifndef CGCRYPT_SHIM_H
#define CGCRYPT_SHIM_H

#include <gcrypt.h>

// gcry_control is variadic: one helper per command TransferCrypto uses (in clients and secretd).
static inline gcry_error_t cgcrypt_disable_secmem_warnings(void) {
  return gcry_control(GCRYCTL_DISABLE_SECMEM_WARN, 0);
}

static inline gcry_error_t cgcrypt_init_secmem(unsigned int bytes) {
  return gcry_control(GCRYCTL_INIT_SECMEM, bytes, 0);
}

static inline gcry_error_t cgcrypt_initialization_finished(void) {
  return gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
}

static inline int cgcrypt_initialized(void) {
  return gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P) != 0;
}

#endif
