/* oci://REGISTRY/REPO[:TAG|@sha256:HEX]: where a toolchain image lives.
 * Full binary only (with the rest of src/oci). */
#ifndef CE_OCI_REF_H
#define CE_OCI_REF_H

#include <stdbool.h>

#include "core/ctx.h"

typedef struct ce_oci_ref {
    char host[256];     /* "registry.lab:5000", "127.0.0.1:5000" */
    char repo[256];     /* "cuda/toolchains" */
    char tag[129];      /* "tf-2.14"; "latest" when neither tag nor digest is given */
    char digest[72];    /* "sha256:<64 hex>" or "" */
} ce_oci_ref;

/* Whether text is an OCI reference (starts with "oci://"). */
bool ce_oci_is_ref(const char *text);
/* Parse text; CE_ERR_USAGE naming it and the rule it breaks. */
int ce_oci_ref_parse(const char *text, ce_oci_ref *out);
/* The reference the manifest is addressed by: the digest if any, else the tag. */
const char *ce_oci_ref_name(const ce_oci_ref *r);

#endif
