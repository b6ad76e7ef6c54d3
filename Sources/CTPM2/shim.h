#ifndef CTPM2_SHIM_H
#define CTPM2_SHIM_H

// tpm2-tss: ESAPI, its marshalling, the TCTI loader that opens a TPM from a configuration string
// (device:/dev/tpmrm0, swtpm:path=SOCKET, ...), and the decoder of response codes.
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

// Macros Swift cannot import (they add to other macros, or call one), re-exposed as constants.
static const TSS2_RC ctpm2_rc_layer_mask = TSS2_RC_LAYER_MASK;
static const TSS2_RC ctpm2_tpm_rc_layer = TSS2_TPM_RC_LAYER;
static const TPM2_RC ctpm2_rc_integrity = TPM2_RC_INTEGRITY;

#endif
